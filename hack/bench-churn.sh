#!/usr/bin/env bash
# Memory benchmark of kubectl rv churn (and, beside it, kubectl rv watch)
# against a real control plane filled with small ConfigMaps: peak RSS of a
# run over an empty namespace (the baseline: runtime, clients, discovery)
# and over N objects, and the retained bytes per object between the two.
# Peak RSS comes from GNU time (/usr/bin/time -v). It includes the transient
# peak of the first list (every item of a type is held until its list ends)
# and the garbage collector's headroom; the bytes the churn tracker retains
# per object are measured by BenchmarkTrackerRetained in pkg/churn.
#
#   hack/bench-churn.sh                 100,000 ConfigMaps
#   OBJECTS=20000 hack/bench-churn.sh   a scaled-down run
#   FOR=20s                             how long each command watches
#   PARALLEL=4                          parallel server-side applies while populating
#   KEEP_CLUSTER=1                      keep the cluster; a second run reuses it and its objects
#   BASELINE=main                       also measure watch as built from that git revision,
#                                       beside this tree's, in the same run (before/after)
#   BIN=path BASELINE_BIN=path          use these binaries instead of building them
#
# Each row gives, in MB, the peak RSS and the RSS at the end of a run over
# the empty namespace (0) and over the N objects (N); the differences per
# object in bytes; and the CPU seconds (user+system) of the run over the N
# objects: listing, decoding and tracking them all, then watching quietly
# for FOR. The compact JSON size of one object, as the API server sends
# it, is printed for comparison.
#
# It starts its own cluster in RV_CLUSTER_DIR (default /tmp/rv-bench-churn)
# and stops it at the end (KEEP_CLUSTER=1 keeps it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export RV_CLUSTER_DIR="${RV_CLUSTER_DIR:-/tmp/rv-bench-churn}"
OBJECTS="${OBJECTS:-100000}"
FOR="${FOR:-20s}"
PARALLEL="${PARALLEL:-4}"
work=$(mktemp -d /tmp/bench-churn.XXXXXX)

log() { echo "bench-churn: $*" >&2; }

cleanup() {
  if [ "${KEEP_CLUSTER:-0}" != 1 ]; then
    "$root/hack/local-cluster.sh" down >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${BIN:-}" ]; then
  cp "$BIN" "$work/kubectl-rv"
else
  log "building kubectl-rv"
  (cd "$root" && go build -o "$work/kubectl-rv" ./cmd/kubectl-rv)
fi
if [ -n "${BASELINE_BIN:-}" ]; then
  cp "$BASELINE_BIN" "$work/kubectl-rv-baseline"
  BASELINE="${BASELINE:-baseline}"
elif [ -n "${BASELINE:-}" ]; then
  log "building kubectl-rv at $BASELINE"
  mkdir "$work/baseline"
  git -C "$root" archive "$BASELINE" | tar -x -C "$work/baseline"
  (cd "$work/baseline" && go build -o "$work/kubectl-rv-baseline" ./cmd/kubectl-rv)
fi
eval "$("$root/hack/local-cluster.sh" env 2>/dev/null || "$root/hack/local-cluster.sh" up)"
export PATH="$work:$RV_CONTROL_PLANE_BIN:$PATH"

kubectl create namespace bench-churn-empty >/dev/null 2>&1 || true
kubectl create namespace bench-churn >/dev/null 2>&1 || true
have=$(kubectl get configmaps -n bench-churn -l app=bench --no-headers -o name --chunk-size 1000 | wc -l)
if [ "$have" -lt "$OBJECTS" ]; then
  populate_start=$(date +%s)
  log "creating $((OBJECTS - have)) ConfigMaps (server-side apply, $PARALLEL in parallel)"
  batch=500
  for start in $(seq "$have" "$batch" $((OBJECTS - 1))); do
    f="$work/batch-$start.yaml"
    end=$((start + batch < OBJECTS ? start + batch : OBJECTS))
    for i in $(seq "$start" $((end - 1))); do
      printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%06d, namespace: bench-churn, labels: {app: bench}}\ndata: {a: "value-a", b: "value-b"}\n' "$i"
    done > "$f"
    echo "$f"
  done | xargs -P "$PARALLEL" -I{} kubectl apply --server-side --field-manager=bench -f {} -o name >/dev/null
  log "created $((OBJECTS - have)) ConfigMaps in $(( $(date +%s) - populate_start ))s"
fi
objects=$(kubectl get configmaps -n bench-churn --no-headers -o name --chunk-size 1000 | wc -l)
log "objects: $objects"

# measure CMD...: the peak RSS in KB, the CPU seconds (user+system) and the
# RSS in KB at the end (the last of one sample a second: what the process
# keeps once the first list is over and the garbage collector has returned
# its transient peak) of CMD, run under GNU time.
measure() {
  /usr/bin/time -v -o "$work/time" "$@" >"$work/stdout" 2>"$work/stderr" &
  local tpid=$! cpid r last=0
  while kill -0 "$tpid" 2>/dev/null; do
    cpid=$(pgrep -P "$tpid" | head -n1 || true)
    if [ -n "$cpid" ]; then
      r=$(awk '/^VmRSS/ {print $2}' "/proc/$cpid/status" 2>/dev/null || true)
      if [ -n "$r" ]; then last=$r; fi
    fi
    sleep 1
  done
  wait "$tpid" || true
  awk -F': ' -v last="$last" '/Maximum resident set size/ {rss=$2} /User time/ {cpu+=$2} /System time/ {cpu+=$2}
    END {print rss, cpu, last}' "$work/time"
}

json=$(kubectl get --raw "/api/v1/namespaces/bench-churn/configmaps/cm-000000" | wc -c)
echo "JSON of one object: $json bytes"
echo "load average before measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %10s %10s %10s %10s %10s %10s %8s\n' command "peak 0" "peak N" "end 0" "end N" "peak B/obj" "end B/obj" "cpu N"
row() { # name binary subcommand
  local base full
  base=$(measure "$2" "$3" configmaps -n bench-churn-empty --for "$FOR" -o json)
  full=$(measure "$2" "$3" configmaps -n bench-churn --for "$FOR" -o json)
  echo "$base $full" | awk -v c="$1" -v n="$objects" '{
    printf "%-14s %10.1f %10.1f %10.1f %10.1f %10.0f %10.0f %8.2f\n", c, $1/1024, $4/1024, $3/1024, $6/1024, ($4-$1)*1024/n, ($6-$3)*1024/n, $5 }'
}
row churn "$work/kubectl-rv" churn
row watch "$work/kubectl-rv" watch
if [ -n "${BASELINE:-}" ]; then
  row "watch ($BASELINE)" "$work/kubectl-rv-baseline" watch
fi
echo "load average after measuring: $(cut -d' ' -f1-3 /proc/loadavg)"
