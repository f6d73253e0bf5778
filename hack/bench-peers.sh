#!/usr/bin/env bash
# Compares kubectl rv with its peers, kubectl-blame and kubectl-fieldlord,
# command by command, on the same machine and the same objects: the CPU
# time (user+sys) and the peak RSS of each command, and the ratio rv/peer
# (issue 14's table: 1.0x or less on every row is the goal), then on work
# that grows: owners on a large object (BIG_KEYS, default 2000) and predict
# over a chart of CHART (default 100) Deployments against fieldlord run once
# per object (GROW_N samples of one run each, default 6).
#
#   hack/bench-peers.sh                       # N=20 samples of B=5 runs per command
#   RV_BASE_BIN=/tmp/kubectl-rv-main hack/bench-peers.sh   # also the binary before a change
#   N=10 B=3 hack/bench-peers.sh
#   RV_BIN=/tmp/kubectl-rv PEERS_CACHE=/tmp/peers hack/bench-peers.sh   # given binaries
#
# RV_BIN is the kubectl-rv binary to measure (default: built from this
# tree); PEERS_CACHE a folder whose bin/ holds kubectl-blame and
# kubectl-fieldlord already built (FORCE_PEERS=1 rebuilds them).
#
# The peers are built from source with the Go toolchain and cached, git-
# ignored, in _output/peers/bin (PEERS_CACHE): first with go install from
# the Go module proxy; when the proxy does not serve a peer, from a source
# tree given as PEER_SRC_BLAME / PEER_SRC_FIELDLORD (a folder with go.mod,
# or a bare git directory whose HEAD is exported), default
# _output/peers/src/kubectl-blame and _output/peers/src/kubectl-fieldlord
# (git clone https://github.com/knight42/kubectl-blame and
# https://github.com/alexremn/kubectl-fieldlord there). Their
# dependencies come from the Go module proxy. Every binary, kubectl-rv
# included, is built the way releases are: CGO_ENABLED=0 -trimpath.
#
# The script starts its own control plane (hack/local-cluster.sh up, in a
# fresh RV_CLUSTER_DIR) while holding the e2e lock (RV_E2E_LOCK, default
# /tmp/e2e.lock; a caller that already holds it sets RV_E2E_LOCK_HELD=1),
# creates Deployment
# tiny in namespace bench-peers (kubectl create, kubectl scale, and a
# server-side apply by manager platform), dumps it with its managedFields
# (tiny.yaml) and writes a desired manifest m.yaml that changes its image
# and replicas. Then, for each row, it alternates the commands (the order
# swapped every sample) and times each sample with GNU /usr/bin/time over a
# batch of B runs (/usr/bin/time rounds to 10 ms; a batch gives 10/B ms per
# run; the batch's shell is included alike for both commands). It reports
# medians per run and their ratio, and the load average: the machine may be
# shared, which is why the commands are interleaved and only ratios are
# compared.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
N=${N:-20}
B=${B:-5}
cache=${PEERS_CACHE:-$root/_output/peers}
lock=${RV_E2E_LOCK:-/tmp/e2e.lock}
export RV_CLUSTER_DIR=${RV_CLUSTER_DIR:-$(mktemp -d /tmp/rv-bench-peers.XXXXXX)}
work=$(mktemp -d /tmp/rv-bench-peers-work.XXXXXX)
mkdir -p "$cache/bin" "$cache/src"

log() { echo "== $*" >&2; }
cleanup() {
  "$root/hack/local-cluster.sh" down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE

# peer_src NAME SRC: a source tree for NAME in $work, from SRC
# (a folder with go.mod or a bare git directory).
peer_src() {
  local name=$1 src=$2 dst="$work/src/$1"
  mkdir -p "$dst"
  if [ -f "$src/go.mod" ]; then
    cp -r "$src/." "$dst"
  elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    log "$name: exporting $(git --git-dir="$src" rev-parse --short HEAD) from $src"
    git --git-dir="$src" archive HEAD | tar -x -C "$dst"
  else
    echo "bench-peers: $name: the module proxy does not serve it and $src holds no source;" \
      "clone its repository there or set the PEER_SRC_ variable" >&2
    exit 2
  fi
  echo "$dst"
}

# build_peer NAME MODULE PKG SRC: $cache/bin/NAME, built once.
build_peer() {
  local name=$1 module=$2 pkg=$3 src=$4 bin="$cache/bin/$1"
  if [ -x "$bin" ] && [ -z "${FORCE_PEERS:-}" ]; then
    return 0
  fi
  log "building $name"
  local path=$module${pkg:+/$pkg}
  if CGO_ENABLED=0 GOBIN="$cache/bin" go install -trimpath "$path@latest" 2>"$work/install.log"; then
    return 0
  fi
  log "$name: go install $path@latest failed ($(head -c 200 "$work/install.log" | tr '\n' ' ')); building from source"
  local dir
  dir=$(peer_src "$name" "$src")
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -o "$bin" "./${pkg:-.}")
}

build_peer kubectl-blame github.com/knight42/kubectl-blame "" \
  "${PEER_SRC_BLAME:-$cache/src/kubectl-blame}"
build_peer kubectl-fieldlord github.com/alexremn/kubectl-fieldlord cmd/kubectl-fieldlord \
  "${PEER_SRC_FIELDLORD:-$cache/src/kubectl-fieldlord}"
blame=$cache/bin/kubectl-blame
fieldlord=$cache/bin/kubectl-fieldlord

rv=${RV_BIN:-}
if [ -z "$rv" ]; then
  log "building kubectl-rv from $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified)')"
  CGO_ENABLED=0 go build -trimpath -o "$work/" ./cmd/kubectl-rv
  rv=$work/kubectl-rv
fi
base=${RV_BASE_BIN:-}

# Every binary is timed from a plain copy in $work/bin. The peak RSS of a
# binary run straight from the file the Go linker has just written reads about 20 MiB
# higher than that of a byte-identical cp of it (59 against 39 MiB for
# kubectl rv version --client on this machine: the kernel maps the linker's
# freshly written file differently), which would favour whichever binary
# was copied (the peers come from a cache).
mkdir -p "$work/bin" "$work/base"
copy() { cp "$1" "$2" && echo "$2"; }
rv=$(copy "$rv" "$work/bin/kubectl-rv")
blame=$(copy "$blame" "$work/bin/kubectl-blame")
fieldlord=$(copy "$fieldlord" "$work/bin/kubectl-fieldlord")
if [ -n "$base" ]; then base=$(copy "$base" "$work/base/kubectl-rv"); fi

if [ -z "${RV_E2E_LOCK_HELD:-}" ]; then
  log "waiting for the e2e lock $lock"
  exec 9>"$lock"
  flock 9
fi
log "starting the control plane"
env_out=$("$root/hack/local-cluster.sh" up)
eval "$env_out"
export PATH="$RV_CONTROL_PLANE_BIN:$PATH"

ns=bench-peers
kubectl create namespace "$ns" >/dev/null
cat > "$work/create.yaml" <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: tiny, namespace: $ns, labels: {app: tiny}}
spec:
  replicas: 1
  selector: {matchLabels: {app: tiny}}
  template:
    metadata: {labels: {app: tiny}}
    spec:
      containers:
      - {name: app, image: "registry.example/app:1", ports: [{containerPort: 8080}]}
EOF
kubectl create -f "$work/create.yaml" >/dev/null
kubectl scale -n "$ns" deployment/tiny --replicas=2 >/dev/null
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tiny, namespace: %s, labels: {team: platform}}\n' "$ns" |
  kubectl apply --server-side --field-manager=platform -f - >/dev/null
sleep 2 # let the controller write status once
kubectl get -n "$ns" deployment tiny -o yaml --show-managed-fields > "$work/tiny.yaml"
sed -e 's/replicas: 1/replicas: 3/' -e 's/app:1/app:2/' "$work/create.yaml" > "$work/m.yaml"
cd "$work"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# sample NAME CMD...: one batch of B runs; appends per-run CPU ms and the
# batch's peak RSS (KiB) to $work/NAME.cpu and .rss.
sample() {
  local name=$1; shift
  local q
  q=$(printf '%q ' "$@")
  # The batch exits 0 whatever the command's code: GNU time would put a
  # "Command exited with non-zero status" line before the figures.
  /usr/bin/time -f '%U %S %M' -o "$work/t" sh -c "for i in \$(seq $B); do $q >/dev/null 2>&1; done; true"
  awk -v b="$B" '{printf "%.2f\n", ($1 + $2) * 1000 / b}' "$work/t" >> "$work/$name.cpu"
  awk '{print $3}' "$work/t" >> "$work/$name.rss"
}

# check NAME CODES CMD...: runs CMD once and shows its exit code and first
# lines, so that a command that fails fast cannot pass for a fast one; an
# exit code not in CODES (a finding is 1 for rv, 2 for fieldlord) stops.
check() {
  local name=$1 codes=$2; shift 2
  local code=0
  "$@" > "$work/$name.out" 2>&1 || code=$?
  log "$name: exit $code, $(wc -l < "$work/$name.out") lines: $(head -c 160 "$work/$name.out" | tr '\n' ' ')"
  case " $codes " in *" $code "*) ;; *) echo "bench-peers: $name failed: $*" >&2; cat "$work/$name.out" >&2; exit 1 ;; esac
}

row() { # label, the peer's exit codes, then the rv args, "--", the peer command
  local label=$1 peercodes=$2; shift 2
  local rvargs=() peer=()
  while [ "$1" != "--" ]; do rvargs+=("$1"); shift; done
  shift
  peer=("$@")
  rm -f "$work"/{rv,base,peer}.{cpu,rss}
  check rv "0 1" "$rv" "${rvargs[@]}"
  [ -z "$base" ] || check base "0 1" "$base" "${rvargs[@]}"
  check peer "$peercodes" "${peer[@]}"
  for s in $(seq "$N"); do
    if [ $((s % 2)) -eq 0 ]; then
      sample rv "$rv" "${rvargs[@]}"
      [ -z "$base" ] || sample base "$base" "${rvargs[@]}"
      sample peer "${peer[@]}"
    else
      sample peer "${peer[@]}"
      [ -z "$base" ] || sample base "$base" "${rvargs[@]}"
      sample rv "$rv" "${rvargs[@]}"
    fi
  done
  local rc rr pc pr bc br
  rc=$(median < "$work/rv.cpu"); rr=$(median < "$work/rv.rss")
  pc=$(median < "$work/peer.cpu"); pr=$(median < "$work/peer.rss")
  local before=""
  if [ -n "$base" ]; then
    bc=$(median < "$work/base.cpu"); br=$(median < "$work/base.rss")
    before=$(awk -v c="$bc" -v r="$br" -v pc="$pc" -v pr="$pr" \
      'BEGIN {printf "%.1f ms, %.0f MiB (%.2fx, %.2fx) | ", c, r / 1024, c / pc, r / pr}')
  fi
  awk -v l="$label" -v b="$before" -v rc="$rc" -v rr="$rr" -v pc="$pc" -v pr="$pr" \
    'BEGIN {printf "| %s | %s%.1f ms, %.0f MiB | %.1f ms, %.0f MiB | %.2fx | %.2fx |\n", l, b, rc, rr / 1024, pc, pr / 1024, rc / pc, rr / pr}'
}

echo
echo "kubectl rv vs peers: median CPU (user+sys) per run and peak RSS; N=$N samples of B=$B runs each, interleaved"
if [ -n "$base" ]; then
  echo "| row | before: rv (cpu, rss ratios) | after: rv | peer | cpu ratio | rss ratio |"
  echo "|---|---|---|---|---|---|"
else
  echo "| row | rv | peer | cpu ratio | rss ratio |"
  echo "|---|---|---|---|---|"
fi
row '`predict -f m.yaml --method apply` vs `fieldlord predict deploy/tiny -f m.yaml --as-manager X`' "0 2" \
  predict -n "$ns" -f m.yaml --method apply --field-manager X -- \
  "$fieldlord" predict -n "$ns" deploy/tiny -f m.yaml --as-manager X
row '`predict --offline` vs the same fieldlord call' "0 2" \
  predict -f m.yaml --offline --live tiny.yaml --method apply --field-manager X -- \
  "$fieldlord" predict -n "$ns" deploy/tiny -f m.yaml --as-manager X
row '`owners -f tiny.yaml --view blame` vs `kubectl-blame -i tiny.yaml`' "0" \
  owners -f tiny.yaml --view blame -- \
  "$blame" -i tiny.yaml
row '`owners deploy/tiny --view table` vs `fieldlord explain deploy/tiny`' "0" \
  owners -n "$ns" deploy/tiny --view table -- \
  "$fieldlord" explain -n "$ns" deploy/tiny

# Work that grows: owners on one large object, and predict over a
# 100-object chart, which fieldlord predicts one object per run: one
# predict -f chart/ against fieldlord run once per object. A sample is one
# run (B=1) of each; GROW_N samples.
B=1 N=${GROW_N:-6}
log "work that grows: a ConfigMap of ${BIG_KEYS:=2000} keys from 5 managers, ${CHART:=100} Deployments"
for m in 1 2 3 4 5; do
  awk -v m="$m" -v n="$BIG_KEYS" -v ns="$ns" 'BEGIN {
    printf "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: %s}\ndata:\n", ns
    for (i = m; i <= n; i += 5) printf "  key-%05d: value-%d-of-manager-%d\n", i, i, m }' |
    kubectl apply --server-side --field-manager="team-$m" -f - >/dev/null
done
kubectl get -n "$ns" configmap big -o yaml --show-managed-fields > big.yaml
mkdir -p chart
for i in $(seq -w 1 "$CHART"); do
  sed -e "s/name: tiny/name: web-$i/" -e 's/app: tiny/app: web/g' "$work/create.yaml" > "chart/create-$i.yaml"
  sed -e 's/replicas: 1/replicas: 3/' -e 's/app:1/app:2/' "chart/create-$i.yaml" > "chart/m-$i.yaml"
done
cat chart/create-*.yaml | awk '/^apiVersion/ && NR > 1 {print "---"} {print}' > chart-create.yaml
cat chart/m-*.yaml | awk '/^apiVersion/ && NR > 1 {print "---"} {print}' > chart.yaml
kubectl apply --server-side --field-manager=helm -f chart-create.yaml >/dev/null
for i in $(seq -w 1 "$CHART"); do
  printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web-%s, namespace: %s}\nspec: {replicas: 2}\n' "$i" "$ns"
  echo ---
done | kubectl apply --server-side --force-conflicts --field-manager=hpa -f - >/dev/null
cat > peer-chart.sh <<EOF2
#!/bin/sh
# fieldlord predicts one object per run: once per object of the chart.
for i in \$(seq -w 1 $CHART); do "$fieldlord" predict -n $ns deploy/web-\$i -f chart/m-\$i.yaml --as-manager X; done
EOF2
chmod +x peer-chart.sh
row "\`owners -f big.yaml --view blame\` vs \`kubectl-blame -i big.yaml\` ($BIG_KEYS keys, 5 managers)" "0" \
  owners -f big.yaml --view blame -- \
  "$blame" -i big.yaml
row "\`predict -f chart.yaml --method apply\` vs fieldlord predict once per object ($CHART Deployments)" "0 2" \
  predict -f chart.yaml --method apply --field-manager X -- \
  ./peer-chart.sh

echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $(go version | cut -d' ' -f3)"
