#!/usr/bin/env bash
# A local Kubernetes control plane for kubectl-rv's tests: etcd,
# kube-apiserver and kube-controller-manager on loopback, on free ports, with
# a temporary data dir, token authentication and RBAC.
#
#   hack/local-cluster.sh up                  start; prints the export KUBECONFIG=... line
#   hack/local-cluster.sh env                 print the variables of the running cluster
#   hack/local-cluster.sh down                stop it and remove its data
#   hack/local-cluster.sh restart-apiserver   stop and start kube-apiserver (same port, same etcd)
#   hack/local-cluster.sh pause-controllers   SIGSTOP kube-controller-manager (to create lag)
#   hack/local-cluster.sh resume-controllers  SIGCONT it
#   hack/local-cluster.sh status              which processes run
#
# The kubeconfig has three contexts: rv-admin (current; system:masters),
# rv-readonly (get/list/watch on everything) and rv-nobody (no rights).
# RV_CLUSTER_DIR chooses the state folder (default _output/local-cluster);
# binaries come from hack/build-control-plane.sh, built on first use.
#
# The API server writes an audit log (JSON lines of audit.k8s.io/v1 Event,
# stages after RequestReceived) to $state/audit.log, rotated at 100 MB; `env`
# prints it as RV_AUDIT_LOG. The level is Metadata, except RequestResponse
# for objects in the namespace rv-audit-rr (tests that need exact chains
# write there). RV_AUDIT_LEVEL=RequestResponse (or None) sets the level of
# everything else.
#
# What real clusters are made of, for tests that must not see only a young,
# tidy one (read at `up`):
#   RV_STORAGE=kine               kine over SQLite (hack/build-kine.sh) instead of etcd
#   RV_APISERVERS=2               a second kube-apiserver over the same storage, on
#                                 127.0.0.2 and the same port (env: RV_APISERVER2);
#                                 loopback addresses cannot be endpoints of the
#                                 kubernetes Service, so they log that they cannot
#                                 register there
#   RV_COMPACTION_INTERVAL=10s    the API servers' --etcd-compaction-interval (5m)
#   RV_CONTROLLERS=0              no kube-controller-manager
#   RV_KCM_LEADER_ELECT=true      kube-controller-manager takes part in leader election
#                                 (its Lease kube-system/kube-controller-manager)
#   RV_AUDIT_WEBHOOK=URL          the API servers also send their audit events to URL
#                                 (the webhook backend, batches flushed every second)
#   RV_AUDIT_WEBHOOK_KUBECONFIG=FILE  the same, to the receiver FILE names with its
#                                 credentials (kubectl rv conflicts --webhook-kubeconfig
#                                 writes one), instead of a kubeconfig naming URL
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
state="${RV_CLUSTER_DIR:-$root/_output/local-cluster}"

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
  local p
  for _ in $(seq 1 200); do
    # Below Linux's ephemeral range (32768-60999): a port from it can be
    # taken by any outgoing connection (the API server's to etcd, say)
    # between this check and the bind.
    p=$(( 20000 + RANDOM % 12000 ))
    if port_free "$p" && ! grep -qx "$p" "$state/ports" 2>/dev/null; then
      echo "$p" >> "$state/ports"
      echo "$p"
      return 0
    fi
  done
  die "no free port found"
}

pid_alive() { [ -f "$state/$1.pid" ] && kill -0 "$(cat "$state/$1.pid")" 2>/dev/null; }

start_proc() { # name: runs $state/$name.sh in the background, logs to $state/$name.log
  local name=$1
  (
    # The daemon keeps none of its caller's descriptors: a lock the caller
    # holds (flock make cluster-up) would otherwise stay held until the
    # daemon exits.
    for fd in $(ls /proc/$BASHPID/fd); do
      ((fd > 2)) && eval "exec $fd>&-"
    done 2>/dev/null
    exec setsid bash "$state/$name.sh" >>"$state/$name.log" 2>&1 </dev/null
  ) &
  echo $! > "$state/$name.pid"
}

stop_proc() {
  local name=$1 pid
  [ -f "$state/$name.pid" ] || return 0
  pid=$(cat "$state/$name.pid")
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$state/$name.pid"
}

wait_for() { # what, seconds, command...
  local what=$1 secs=$2; shift 2
  local deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "$what did not become ready in ${secs}s; last log lines:"
      tail -n 30 "$state/${what}.log" >&2 || true
      return 1
    fi
    sleep 0.3
  done
}

kubectl_admin() { "$bin/kubectl" --kubeconfig "$state/kubeconfig" --context rv-admin "$@"; }

apiserver_ready() { kubectl_admin get --raw /readyz; }

print_env() {
  cat <<ENV
export KUBECONFIG=$state/kubeconfig
export RV_CLUSTER_DIR=$state
export RV_ETCD_ENDPOINT=http://127.0.0.1:$(cat "$state/etcd.port")
export RV_APISERVER=https://127.0.0.1:$(cat "$state/apiserver.port")
export RV_CONTROL_PLANE_BIN=$bin
export RV_AUDIT_LOG=$state/audit.log
export RV_STORAGE=$(cat "$state/storage")
ENV
  if [ -f "$state/kube-apiserver2.sh" ]; then
    echo "export RV_APISERVER2=https://127.0.0.2:$(cat "$state/apiserver.port")"
  fi
}

# write_audit_policy: Metadata everywhere (RV_AUDIT_LEVEL overrides),
# RequestResponse in the namespace rv-audit-rr.
write_audit_policy() {
  local level="${RV_AUDIT_LEVEL:-Metadata}"
  case "$level" in
    None|Metadata|Request|RequestResponse) ;;
    *) die "RV_AUDIT_LEVEL=$level: use None, Metadata, Request or RequestResponse" ;;
  esac
  cat > "$state/audit-policy.yaml" <<POLICY
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  namespaces: [rv-audit-rr]
- level: $level
POLICY
}

# write_storage_script CLIENT_PORT PEER_PORT: etcd, or kine over SQLite
# (RV_STORAGE=kine), as the process "etcd" either way, so that the rest of
# the script and the tests find it by one name.
write_storage_script() {
  local client=$1 peer=$2 storage="${RV_STORAGE:-etcd}"
  echo "$storage" > "$state/storage"
  case "$storage" in
    etcd)
      cat > "$state/etcd.sh" <<SCRIPT
exec "$bin/etcd" --name default --data-dir "$state/etcd-data" \\
  --listen-client-urls http://127.0.0.1:$client --advertise-client-urls http://127.0.0.1:$client \\
  --listen-peer-urls http://127.0.0.1:$peer --initial-advertise-peer-urls http://127.0.0.1:$peer \\
  --initial-cluster default=http://127.0.0.1:$peer --listen-metrics-urls "" \\
  --unsafe-no-fsync --quota-backend-bytes 8589934592 --log-level warn
SCRIPT
      ;;
    kine)
      local kine
      kine=$("$root/hack/build-kine.sh")
      # Compaction is left to the API server (kine's default), keeping only
      # the newest 10 revisions instead of 1,000, so that a test ages it in
      # seconds.
      mkdir -p "$state/kine-data"
      cat > "$state/etcd.sh" <<SCRIPT
exec "$kine/kine" --listen-address 127.0.0.1:$client --metrics-bind-address "" \\
  --endpoint "sqlite://$state/kine-data/state.db?_journal=WAL&cache=shared&_busy_timeout=30000&_txlock=immediate" \\
  --compact-min-retain 10
SCRIPT
      ;;
    *) die "RV_STORAGE=$storage: use etcd or kine" ;;
  esac
}

# write_apiserver_script NAME ADDRESS PORT STORAGE_PORT AUDIT_FILE
write_apiserver_script() {
  local name=$1 addr=$2 port=$3 storage_port=$4 audit=$5
  # Compaction every 5 minutes, as in production; tests that need a gap
  # compact etcd themselves through RV_ETCD_ENDPOINT, or age a cluster of
  # their own with RV_COMPACTION_INTERVAL.
  cat > "$state/$name.sh" <<SCRIPT
exec "$bin/kube-apiserver" --etcd-servers http://127.0.0.1:$storage_port \\
  --bind-address $addr --advertise-address $addr --secure-port $port \\
  --cert-dir "$state/$name-certs" --token-auth-file "$state/tokens.csv" \\
  --authorization-mode RBAC --allow-privileged \\
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$state/sa.pub" \\
  --service-account-signing-key-file "$state/sa.key" --service-cluster-ip-range 10.0.0.0/24 \\
  --etcd-compaction-interval ${RV_COMPACTION_INTERVAL:-5m} \\
  --enable-priority-and-fairness=false --v=0 \\
  --audit-policy-file "$state/audit-policy.yaml" --audit-log-path "$state/$audit" \\
  --audit-log-maxsize 100 --audit-log-maxbackup 3 $(audit_webhook_flags)
SCRIPT
}

# audit_webhook_flags: with RV_AUDIT_WEBHOOK_KUBECONFIG=FILE, the webhook
# backend's flags reading FILE; with RV_AUDIT_WEBHOOK=URL, its flags and
# its kubeconfig (naming URL), written once.
audit_webhook_flags() {
  if [ -n "${RV_AUDIT_WEBHOOK_KUBECONFIG:-}" ]; then
    printf '%s' "--audit-webhook-config-file $RV_AUDIT_WEBHOOK_KUBECONFIG --audit-webhook-batch-max-wait 1s --audit-webhook-initial-backoff 1s"
    return 0
  fi
  [ -n "${RV_AUDIT_WEBHOOK:-}" ] || return 0
  if [ ! -f "$state/audit-webhook.kubeconfig" ]; then
    cat > "$state/audit-webhook.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: receiver
  cluster: {server: "$RV_AUDIT_WEBHOOK"}
contexts:
- name: receiver
  context: {cluster: receiver, user: apiserver}
users:
- name: apiserver
  user: {}
current-context: receiver
KUBECONFIG
  fi
  printf '%s' "--audit-webhook-config-file $state/audit-webhook.kubeconfig --audit-webhook-batch-max-wait 1s --audit-webhook-initial-backoff 1s"
}

cmd_up() {
  if pid_alive kube-apiserver; then
    log "already running in $state"
    bin=$(cat "$state/bin")
    print_env
    return 0
  fi
  bin=$("$root/hack/build-control-plane.sh")
  rm -rf "$state"
  mkdir -p "$state"
  echo "$bin" > "$state/bin"
  : > "$state/ports"
  local etcd_port peer_port api_port kcm_port
  etcd_port=$(free_port); peer_port=$(free_port); api_port=$(free_port); kcm_port=$(free_port)
  echo "$etcd_port" > "$state/etcd.port"
  echo "$api_port" > "$state/apiserver.port"

  # Service-account signing key and tokens for the three users plus the
  # controller manager.
  openssl genrsa -out "$state/sa.key" 2048 2>/dev/null
  openssl rsa -in "$state/sa.key" -pubout -out "$state/sa.pub" 2>/dev/null
  local admin_token reader_token nobody_token kcm_token
  admin_token=$(openssl rand -hex 16); reader_token=$(openssl rand -hex 16)
  nobody_token=$(openssl rand -hex 16); kcm_token=$(openssl rand -hex 16)
  cat > "$state/tokens.csv" <<TOKENS
$admin_token,rv-admin,rv-admin,"system:masters"
$reader_token,rv-reader,rv-reader
$nobody_token,rv-nobody,rv-nobody
$kcm_token,system:kube-controller-manager,system:kube-controller-manager,"system:masters"
TOKENS

  write_storage_script "$etcd_port" "$peer_port"
  write_audit_policy
  write_apiserver_script kube-apiserver 127.0.0.1 "$api_port" "$etcd_port" audit.log
  case "${RV_APISERVERS:-1}" in 1|2) ;; *) die "RV_APISERVERS=${RV_APISERVERS}: use 1 or 2" ;; esac
  if [ "${RV_APISERVERS:-1}" = 2 ]; then
    write_apiserver_script kube-apiserver2 127.0.0.2 "$api_port" "$etcd_port" audit2.log
  fi
  cat > "$state/kube-controller-manager.sh" <<SCRIPT
exec "$bin/kube-controller-manager" --kubeconfig "$state/kcm.kubeconfig" \\
  --bind-address 127.0.0.1 --secure-port $kcm_port --cert-dir "$state/kcm-certs" \\
  --leader-elect=${RV_KCM_LEADER_ELECT:-false} --use-service-account-credentials=false \\
  --service-account-private-key-file "$state/sa.key" \\
  --controllers '*,-bootstrapsigner,-tokencleaner' --v=0
SCRIPT

  local server="https://127.0.0.1:$api_port"
  local kc="$state/kubeconfig"
  cat > "$kc" <<KC
apiVersion: v1
kind: Config
clusters:
- name: rv-local
  cluster:
    server: $server
    insecure-skip-tls-verify: true
users:
- name: rv-admin
  user: {token: $admin_token}
- name: rv-reader
  user: {token: $reader_token}
- name: rv-nobody
  user: {token: $nobody_token}
contexts:
- name: rv-admin
  context: {cluster: rv-local, user: rv-admin, namespace: default}
- name: rv-readonly
  context: {cluster: rv-local, user: rv-reader, namespace: default}
- name: rv-nobody
  context: {cluster: rv-local, user: rv-nobody, namespace: default}
current-context: rv-admin
KC
  sed -e "s/token: $admin_token/token: $kcm_token/" -e 's/current-context: rv-admin/current-context: rv-admin/' "$kc" > "$state/kcm.kubeconfig"

  log "starting $(cat "$state/storage") on 127.0.0.1:$etcd_port"
  start_proc etcd
  # A start that fails stops what it started, so that nothing is left
  # running (and holding the caller's lock) after the error.
  trap 'stop_all' ERR
  wait_for etcd 60 bash -c "exec 3<>/dev/tcp/127.0.0.1/$etcd_port"
  log "starting kube-apiserver on $server"
  start_proc kube-apiserver
  wait_for kube-apiserver 120 apiserver_ready
  if [ -f "$state/kube-apiserver2.sh" ]; then
    log "starting a second kube-apiserver on https://127.0.0.2:$api_port"
    start_proc kube-apiserver2
    wait_for kube-apiserver2 120 kubectl_admin --server "https://127.0.0.2:$api_port" get --raw /readyz
  fi
  kubectl_admin apply -f - >/dev/null <<RBAC
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: rv-readonly}
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: [get, list, watch]
- nonResourceURLs: ["*"]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: rv-readonly}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: rv-readonly}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: rv-reader}
RBAC
  if [ "${RV_CONTROLLERS:-1}" != 0 ]; then
    log "starting kube-controller-manager"
    start_proc kube-controller-manager
    wait_for kube-controller-manager 120 kubectl_admin get serviceaccount default -n default
  fi
  trap - ERR
  log "up: $server (state in $state)"
  print_env
}

stop_all() {
  stop_proc kube-controller-manager
  stop_proc kube-apiserver2
  stop_proc kube-apiserver
  stop_proc etcd
}

cmd_down() {
  [ -d "$state" ] || { log "nothing to stop in $state"; return 0; }
  stop_all
  rm -rf "$state"
  log "down"
}

need_running() {
  pid_alive kube-apiserver || pid_alive etcd || die "no cluster running in $state (run: hack/local-cluster.sh up)"
  bin=$(cat "$state/bin")
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  env) need_running; print_env ;;
  restart-apiserver)
    need_running
    stop_proc kube-apiserver
    start_proc kube-apiserver
    wait_for kube-apiserver 120 apiserver_ready
    log "kube-apiserver restarted" ;;
  pause-controllers) need_running; kill -STOP "$(cat "$state/kube-controller-manager.pid")"; log "kube-controller-manager paused" ;;
  resume-controllers) need_running; kill -CONT "$(cat "$state/kube-controller-manager.pid")"; log "kube-controller-manager resumed" ;;
  status)
    for p in etcd kube-apiserver kube-apiserver2 kube-controller-manager; do
      if pid_alive "$p"; then echo "$p running (pid $(cat "$state/$p.pid"))"; else echo "$p stopped"; fi
    done ;;
  *) echo "usage: $0 up|down|env|restart-apiserver|pause-controllers|resume-controllers|status" >&2; exit 2 ;;
esac
