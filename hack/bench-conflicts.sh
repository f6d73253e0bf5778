#!/usr/bin/env bash
# Benchmark of kubectl rv conflicts on a generated audit log (hack/genaudit,
# events shaped like the test control plane's), side by side with jq
# computing the same "409s per writer (user, field manager, pod) per
# resource" table. Wall time, CPU time and peak RSS come from GNU time; the
# load average is printed before and after, since the machine may be shared.
#
#   hack/bench-conflicts.sh                 a 1 GiB log in /tmp/rv-bench-audit-1g.log (kept for reuse)
#   SIZE=100MiB LOG=/tmp/a.log hack/bench-conflicts.sh
#   LEVEL=RequestResponse LOG=/tmp/rv-bench-audit-rr-1g.log hack/bench-conflicts.sh
#                                           a log whose successful writes carry their resulting
#                                           resourceVersions (winners by version)
#   MULTI=1 hack/bench-conflicts.sh         also a directory of three rotated 1 GiB files
#                                           (the log above and two later ones), kubectl rv only:
#                                           peak RSS must not grow with the log
#   RV_BASE_BIN=/tmp/kubectl-rv-main hack/bench-conflicts.sh
#                                           also time that binary (an older build) in the same run,
#                                           for a before/after comparison under the same load
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SIZE="${SIZE:-1GiB}"
LOG="${LOG:-/tmp/rv-bench-audit-1g.log}"
MULTIDIR="${MULTIDIR:-/tmp/rv-bench-audit-3x}"
bin=$(mktemp -d /tmp/bench-conflicts.XXXXXX)
trap 'rm -rf "$bin"' EXIT

command -v jq >/dev/null || { echo "bench-conflicts: needs jq (apt-get install -y jq)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-conflicts: needs GNU time (/usr/bin/time)" >&2; exit 1; }
cd "$root"
go build -o "$bin/kubectl-rv.built" ./cmd/kubectl-rv
# Time a plain copy: a binary fresh from the linker shows 10-15 MB more peak
# RSS than the same bytes copied (its pages sit differently in the page cache).
cp "$bin/kubectl-rv.built" "$bin/kubectl-rv"
[ -s "$LOG" ] || go run ./hack/genaudit -size "$SIZE" -level "${LEVEL:-Metadata}" -out "$LOG"
echo "log: $LOG, $(stat -c %s "$LOG") bytes, $(wc -l < "$LOG") events; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"

fmt='%e s wall, %U s user + %S s sys, %M KB peak RSS'
/usr/bin/time -o "$bin/rv.time" -f "$fmt" "$bin/kubectl-rv" conflicts --audit-log "$LOG" --view writers -o json > "$bin/rv.json"
echo "kubectl rv conflicts: $(cat "$bin/rv.time")"
if [ -n "${RV_BASE_BIN:-}" ]; then
  cp "$RV_BASE_BIN" "$bin/base" # a plain copy, as above
  /usr/bin/time -o "$bin/base.time" -f "$fmt" "$bin/base" conflicts --audit-log "$LOG" --view writers -o json > "$bin/base.json"
  echo "kubectl rv conflicts, $RV_BASE_BIN: $(cat "$bin/base.time")"
  cmp -s "$bin/rv.json" "$bin/base.json" && echo "reports: identical" || echo "reports: DIFFERENT"
fi
/usr/bin/time -o "$bin/jq.time" -f "$fmt" sh -c 'jq -r '"'"'select((.stage=="ResponseComplete" or .stage=="Panic") and .responseStatus.code==409)
  | [.user.username, ((.requestURI|capture("fieldManager=(?<m>[^&]*)")|.m) // ""),
     (.user.extra["authentication.kubernetes.io/pod-name"][0] // ""), .objectRef.resource] | @tsv'"'"' "$1" | sort | uniq -c > "$2"' sh "$LOG" "$bin/jq.txt"
echo "jq | sort | uniq -c: $(cat "$bin/jq.time")"
echo "409s: kubectl rv conflicts $(jq '.summary.conflicts' "$bin/rv.json"), jq $(awk '{s+=$1} END {print s+0}' "$bin/jq.txt")"
ratios() { # ratios NAME-A FILE-A NAME-B FILE-B: B / A, wall and CPU
  awk -v a="$1" -v b="$3" 'FNR==1 {w[NR==FNR?"a":"b"]=$1; c[NR==FNR?"a":"b"]=$4+$8}
    END {printf "%s / %s: %.1fx wall, %.1fx CPU\n", b, a, w["b"]/w["a"], c["b"]/c["a"]}' "$2" "$4"
}
ratios "kubectl rv" "$bin/rv.time" jq "$bin/jq.time"
[ -z "${RV_BASE_BIN:-}" ] || ratios "kubectl rv" "$bin/rv.time" "$RV_BASE_BIN" "$bin/base.time"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

[ -n "${MULTI:-}" ] || exit 0
if [ ! -s "$MULTIDIR/audit.log" ]; then
  mkdir -p "$MULTIDIR"
  ln -f "$LOG" "$MULTIDIR/audit-2026-11-24T10-01-21.000.log" 2>/dev/null || cp "$LOG" "$MULTIDIR/audit-2026-11-24T10-01-21.000.log"
  go run ./hack/genaudit -size "$SIZE" -seed 2 -start 2026-11-24T10:01:21Z -out "$MULTIDIR/audit-2026-11-24T10-02-42.000.log"
  go run ./hack/genaudit -size "$SIZE" -seed 3 -start 2026-11-24T10:02:42Z -out "$MULTIDIR/audit.log"
fi
echo "rotated: $MULTIDIR, $(du -b -c "$MULTIDIR"/* | tail -1 | cut -f1) bytes in $(ls "$MULTIDIR" | wc -l) files; load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -o "$bin/multi.time" -f "$fmt" "$bin/kubectl-rv" conflicts --audit-log "$MULTIDIR" --view writers -o json > "$bin/multi.json"
echo "kubectl rv conflicts, rotated: $(cat "$bin/multi.time"); 409s $(jq '.summary.conflicts' "$bin/multi.json")"
if [ -n "${RV_BASE_BIN:-}" ]; then
  /usr/bin/time -o "$bin/multibase.time" -f "$fmt" "$bin/base" conflicts --audit-log "$MULTIDIR" --view writers -o json > "$bin/multibase.json"
  echo "kubectl rv conflicts, rotated, $RV_BASE_BIN: $(cat "$bin/multibase.time"); 409s $(jq '.summary.conflicts' "$bin/multibase.json")"
  cmp -s "$bin/multi.json" "$bin/multibase.json" && echo "reports: identical" || echo "reports: DIFFERENT"
  ratios "kubectl rv" "$bin/multi.time" "$RV_BASE_BIN" "$bin/multibase.time"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
