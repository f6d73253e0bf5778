#!/usr/bin/env bash
# Benchmark of kubectl rv lag -A against a real control plane filled with
# custom resources and Deployments, beside
#   (a) the floor: a bare paginated list of the same types that throws the
#       bytes away (and, for reference, the same list decoded by client-go's
#       dynamic client), and
#   (b) what a user does today: kubectl get TYPES -A -o json | jq <filter>.
# Wall time and peak RSS come from GNU time (/usr/bin/time -v).
#
#   hack/bench-lag.sh                         50,000 custom resources + 2,000 Deployments
#   CRS=5000 DEPLOYMENTS=200 hack/bench-lag.sh   a scaled-down run
#   ROUNDS=3                                  measure each command this many times
#   KUBECTL_ROUNDS=1                          ... except the slow kubectl pipeline
#   KEEP_CLUSTER=1                            keep the cluster; a second run reuses it and its objects
#
# It starts its own cluster in RV_CLUSTER_DIR (default /tmp/rv-bench-lag) and
# stops it at the end (KEEP_CLUSTER=1 keeps it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export RV_CLUSTER_DIR="${RV_CLUSTER_DIR:-/tmp/rv-bench-lag}"
CRS="${CRS:-50000}"
DEPLOYMENTS="${DEPLOYMENTS:-2000}"
ROUNDS="${ROUNDS:-3}"
KUBECTL_ROUNDS="${KUBECTL_ROUNDS:-1}"
work=$(mktemp -d /tmp/bench-lag.XXXXXX)

log() { echo "bench-lag: $*" >&2; }

if [ ! -x /usr/bin/time ]; then
  log "installing GNU time"
  apt-get update -qq >/dev/null && apt-get install -y -qq time >/dev/null
fi

cleanup() {
  if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
    "$root/hack/local-cluster.sh" down >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

log "building kubectl-rv and hack/benchlag"
(cd "$root" && go build -o "$work/kubectl-rv" ./cmd/kubectl-rv && go build -o "$work/benchlag" ./hack/benchlag)

# A kept cluster is reused (env), else a new one is started (up).
eval "$("$root/hack/local-cluster.sh" env 2>/dev/null || "$root/hack/local-cluster.sh" up)"
export PATH="$work:$RV_CONTROL_PLANE_BIN:$PATH"

if [ "$(kubectl get crd widgets.bench.kubectl-rv.dev -o name 2>/dev/null)" = "" ]; then
  log "creating $CRS custom resources and $DEPLOYMENTS Deployments"
  benchlag populate -crs "$CRS" -deployments "$DEPLOYMENTS"
fi
log "waiting for kube-controller-manager to observe every Deployment"
kubectl rv lag deployments,replicasets -A --wait --timeout 10m >/dev/null

types=$(benchlag types)
log "types: $types"

# measure NAME CMD...: runs CMD under GNU time and prints one result line.
measure() {
  local name=$1; shift
  local out="$work/$name.time"
  /usr/bin/time -v -o "$out" "$@" >"$work/$name.stdout" 2>"$work/$name.stderr" || true
  local wall rss cpu
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out")
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$out")
  local secs
  secs=$(echo "$wall" | awk -F: '{ if (NF==3) print $1*3600+$2*60+$3; else print $1*60+$2 }')
  printf '%-28s %8.2f s %8.1f MB %8.2f s\n' "$name" "$secs" "$(echo "$rss" | awk '{print $1/1024}')" "$cpu"
  echo "$name $secs $rss $cpu" >> "$work/results"
}

filter='[.items[] | select(.metadata.generation != null) | select((.status.observedGeneration // -1) < .metadata.generation) | {kind, ns: .metadata.namespace, name: .metadata.name, generation: .metadata.generation, observed: .status.observedGeneration}]'

objects=$( (kubectl rv lag -A -o json || true) | jq .summary.objects)
log "objects scanned by lag -A: $objects"
echo
echo "load average before measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %10s %11s %10s\n' "command" "wall" "peak RSS" "client CPU"
for round in $(seq 1 "$ROUNDS"); do
  measure "floor-raw#$round" benchlag floor -types "$types"
  measure "lag#$round" kubectl-rv lag -A
  measure "floor-raw-cache#$round" benchlag floor -types "$types" -cache
  measure "lag-cache#$round" kubectl-rv lag -A --cache
  measure "floor-dynamic#$round" benchlag floor -types "$types" -decode
  if [ "$round" -le "$KUBECTL_ROUNDS" ]; then
    measure "kubectl-jq#$round" bash -c "kubectl get '$types' -A -o json --chunk-size 500 | jq '$filter' >/dev/null"
  fi
done
echo
best() { grep "^$1#" "$work/results" | sort -k2 -n | head -1 | awk '{print $2, $3}'; }
read -r floor_s floor_kb < <(best floor-raw)
read -r fcache_s fcache_kb < <(best floor-raw-cache)
read -r dyn_s dyn_kb < <(best floor-dynamic)
read -r lag_s lag_kb < <(best lag)
read -r cache_s cache_kb < <(best lag-cache)
read -r kj_s kj_kb < <(best kubectl-jq)
# The peak memory of lag is the largest over every run, cached or not.
lag_kb=$(grep -E "^lag(-cache)?#" "$work/results" | sort -k3 -n | tail -1 | awk '{print $3}')
echo "load average after measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v f="$floor_s" -v fc="$fcache_s" -v d="$dyn_s" -v l="$lag_s" -v c="$cache_s" -v k="$kj_s" -v lkb="$lag_kb" -v n="$objects" 'BEGIN {
  printf "objects: %d\n", n
  printf "(best of the rounds)\n"
  printf "lag -A / raw floor:        %.2fx (target <= 1.3x)\n", l/f
  printf "lag -A / dynamic floor:    %.2fx\n", l/d
  printf "lag -A --cache / raw floor --cache: %.2fx\n", c/fc
  printf "kubectl|jq / lag -A:       %.2fx faster (target >= 3x)\n", k/l
  printf "lag peak RSS (any run):    %.1f MB (target < 150 MB)\n", lkb/1024
}'
