#!/usr/bin/env bash
# Benchmark of kubectl rv conflicts on a generated audit log (hack/genaudit,
# events shaped like the test control plane's), side by side with jq
# computing the same "409s per writer (user, field manager, pod) per
# resource" table. Wall time, CPU time and peak RSS come from GNU time.
#
#   hack/bench-conflicts.sh                 a 1 GiB log in /tmp/rv-bench-audit-1g.log (kept for reuse)
#   SIZE=100MiB LOG=/tmp/a.log hack/bench-conflicts.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE="${SIZE:-1GiB}"
LOG="${LOG:-/tmp/rv-bench-audit-1g.log}"
bin=$(mktemp -d /tmp/bench-conflicts.XXXXXX)
trap 'rm -rf "$bin"' EXIT

command -v jq >/dev/null || { echo "bench-conflicts: needs jq (apt-get install -y jq)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-conflicts: needs GNU time (/usr/bin/time)" >&2; exit 1; }
cd "$root"
go build -o "$bin/kubectl-rv" ./cmd/kubectl-rv
[ -s "$LOG" ] || go run ./hack/genaudit -size "$SIZE" -out "$LOG"
echo "log: $LOG, $(stat -c %s "$LOG") bytes, $(wc -l < "$LOG") events; $(nproc) cores; load $(cut -d' ' -f1 /proc/loadavg)"

fmt='%e s wall, %U s user + %S s sys, %M KB peak RSS'
/usr/bin/time -f "kubectl rv conflicts: $fmt" "$bin/kubectl-rv" conflicts --audit-log "$LOG" --view writers -o json > "$bin/rv.json"
/usr/bin/time -f "jq | sort | uniq -c: $fmt" sh -c 'jq -r '"'"'select((.stage=="ResponseComplete" or .stage=="Panic") and .responseStatus.code==409)
  | [.user.username, ((.requestURI|capture("fieldManager=(?<m>[^&]*)")|.m) // ""),
     (.user.extra["authentication.kubernetes.io/pod-name"][0] // ""), .objectRef.resource] | @tsv'"'"' "$1" | sort | uniq -c > "$2"' sh "$LOG" "$bin/jq.txt"
echo "409s: kubectl rv conflicts $(jq '.summary.conflicts' "$bin/rv.json"), jq $(awk '{s+=$1} END {print s+0}' "$bin/jq.txt")"
