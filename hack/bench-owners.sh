#!/usr/bin/env bash
# Measures kubectl rv owners -A over many Deployments on the real control
# plane: starts its own cluster (in RV_CLUSTER_DIR, a fresh temporary folder
# by default), creates the Deployments (kubectl create, then a server-side
# apply by a second manager and a scale, so that every object has four
# managedFields entries with the controller's), times each view, and tears
# the cluster down. Then runs the offline decode+render benchmarks.
#
#   hack/bench-owners.sh            # 1000 Deployments, 3 runs per view
#   N=200 RUNS=5 hack/bench-owners.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
N=${N:-1000}
RUNS=${RUNS:-3}
NS_COUNT=${NS_COUNT:-10}
export RV_CLUSTER_DIR=${RV_CLUSTER_DIR:-$(mktemp -d /tmp/rv-bench-owners.XXXXXX)}
work=$(mktemp -d /tmp/rv-bench-owners-work.XXXXXX)

cleanup() {
  hack/local-cluster.sh down >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building kubectl-rv" >&2
go build -o "$work/kubectl-rv" ./cmd/kubectl-rv
# Ports are picked at random; retry if another cluster took one first.
for attempt in 1 2 3; do
  if env_out=$(hack/local-cluster.sh up); then break; fi
  echo "== hack/local-cluster.sh up failed (attempt $attempt); retrying" >&2
  hack/local-cluster.sh down >/dev/null 2>&1 || true
  env_out=""
done
[ -n "$env_out" ] || { echo "could not start the control plane" >&2; exit 1; }
eval "$env_out"
export PATH="$work:$RV_CONTROL_PLANE_BIN:$PATH"

echo "== creating $N Deployments in $NS_COUNT namespaces" >&2
per=$(( (N + NS_COUNT - 1) / NS_COUNT ))
for n in $(seq 1 "$NS_COUNT"); do
  ns=bench-$n
  kubectl create namespace "$ns" >/dev/null
  f="$work/$ns.yaml"
  : > "$f"
  for i in $(seq 1 "$per"); do
    idx=$(( (n - 1) * per + i ))
    [ "$idx" -le "$N" ] || break
    cat >> "$f" <<EOF
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-$i
  namespace: $ns
  labels: {app: app-$i, bench: owners}
spec:
  replicas: 0
  selector: {matchLabels: {app: app-$i}}
  template:
    metadata: {labels: {app: app-$i}}
    spec:
      containers:
      - name: main
        image: registry.example.com/app:1.0
        ports: [{containerPort: 8080, protocol: TCP}]
        env: [{name: MODE, value: bench}]
EOF
  done
done
# kubectl create writes as kubectl-create; several at once to go faster.
ls "$work"/bench-*.yaml | xargs -P 4 -n 1 kubectl create -f >/dev/null
for n in $(seq 1 "$NS_COUNT"); do
  cat <<EOF | kubectl apply --server-side --field-manager=platform -n "bench-$n" -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-1, labels: {team: platform}}
EOF
  kubectl scale -n "bench-$n" deployment --all --replicas=0 >/dev/null
done
total=$(kubectl get deployments -A -l bench=owners --no-headers | wc -l)
echo "== $total Deployments; waiting for the controllers to settle" >&2
sleep 10

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# Wall time, and the CPU time of kubectl-rv itself (kubectl execs the plugin
# in place, so /usr/bin/time measures the plugin): on a busy machine the CPU
# time is the honest figure.
measure() { # label, output file, args...
  local label=$1 out=$2; shift 2
  local walls=() cpus=()
  for _ in $(seq 1 "$RUNS"); do
    start=$(date +%s%N)
    /usr/bin/time -f '%U %S' -o "$work/time.txt" kubectl rv owners "$@" > "$out"
    end=$(date +%s%N)
    walls+=( $(( (end - start) / 1000000 )) )
    cpus+=( $(awk '{printf "%d", ($1 + $2) * 1000}' "$work/time.txt") )
  done
  printf '%-40s %5d objects  %9d bytes  wall median %6d ms  cpu median %6d ms  (wall: %s; cpu: %s)\n' \
    "$label" "$total" "$(wc -c < "$out")" "$(printf '%s\n' "${walls[@]}" | median)" \
    "$(printf '%s\n' "${cpus[@]}" | median)" "${walls[*]}" "${cpus[*]}"
}
for view in summary tree table; do
  measure "owners deployments -A --view $view" "$work/out.txt" deployments -A --view "$view"
done
measure "owners deployments -A -o json" "$work/out.json" deployments -A -o json
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

# The control plane keeps reconciling the Deployments: stop it first, so
# that the offline figures measure the renderers alone.
hack/local-cluster.sh down >/dev/null 2>&1 || true
echo "== offline: decode and render one object with 5,000 owned leaves and 12 managers" >&2
go test ./pkg/output/ownersprint/ -run XXX -bench 'DecodeRender|ManyDeployments' -count 3 -cpu 1
