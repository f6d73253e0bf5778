#!/usr/bin/env bash
# Benchmark and parity check of kubectl rv conflicts --view top (issue 49,
# who loads the API server), on logs from hack/genaudit (gets, lists,
# watches, updates and patches of ConfigMaps, Lease renewals, shaped like
# the test control plane's events). Wall time, CPU time (user + sys) and
# peak RSS come from GNU time; the load average is printed beside them,
# since the machine may be shared.
#
# speed: on LOG (default a 1 GiB Metadata log, /tmp/rv-bench-audit-1g.log,
#   kept for reuse), kubectl rv conflicts --view top --by user -o json and
#   jq computing the same table (ResponseComplete and Panic events per user,
#   the impersonated user when impersonated) | sort | uniq -c | sort -rn
#   run in turn, RUNS pairs (default 3); medians of each, and the jq/rv
#   ratio taken pair by pair. The per-user counts must be equal.
# parity: openshift/cluster-debug-tools' kubectl-dev_tool audit -o top
#   --by KEY --stage=ResponseComplete,Panic against kubectl rv's -o json for
#   the matching key, per key: user, resource and namespace on PARITY_LOG
#   (default a 100 MiB log); verb and httpstatus on SMALL_LOG (default
#   10 MiB: the peer's grouping by verb or status compares each event with
#   every distinct request of its group, so its time grows with the square
#   of the log). Also the writes of WRITES_RESOURCE (default configmaps)
#   per user[fieldManager] (the peer's user key) against kubectl rv --by
#   user --by writer. The peer's keys are mapped onto kubectl rv's
#   (docs/bench/top.md says how); every count that differs is printed (at
#   most MAXDIFF rows a key, default 30) and the script exits 1. Then both
#   tools are timed on PARITY_LOG by user, RUNS pairs, as above.
#
#   hack/bench-top.sh                      speed and parity
#   MODE=speed hack/bench-top.sh           MODE=parity for the other half
#   PARITY_LOG=/tmp/real-audit.log SMALL_LOG=/tmp/real-audit.log MODE=parity hack/bench-top.sh
#                                          parity on a given log (not generated)
#   RV_BIN=/tmp/kubectl-rv hack/bench-top.sh   a given kubectl-rv binary
#   RV_ARGS='--hot-rate 0' MODE=speed hack/bench-top.sh
#                                          more flags for the timed kubectl rv runs
#                                          (--hot-rate 0: no hot-loop tracking)
#
# kubectl rv is built once into a temporary folder (CGO_ENABLED=0
# -trimpath, as releases are). The peer is built from source and cached in
# PEERS_CACHE/bin (default /tmp/peers; FORCE_PEERS=1 rebuilds it): from
# PEER_SRC_DEVTOOL, a folder with go.mod or a bare git directory whose HEAD
# is exported (default PEERS_CACHE/src/cluster-debug-tools, cloned from
# https://github.com/openshift/cluster-debug-tools when missing), with its
# vendored modules (-mod=vendor).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODE="${MODE:-all}"
RUNS="${RUNS:-3}"
LOG="${LOG:-/tmp/rv-bench-audit-1g.log}"
PARITY_LOG="${PARITY_LOG:-/tmp/rv-bench-top-100m.log}"
SMALL_LOG="${SMALL_LOG:-/tmp/rv-bench-top-10m.log}"
cache="${PEERS_CACHE:-/tmp/peers}"
peer_src="${PEER_SRC_DEVTOOL:-$cache/src/cluster-debug-tools}"
peer="$cache/bin/kubectl-dev_tool"
work=$(mktemp -d /tmp/bench-top.XXXXXX)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C

log() { echo "== $*" >&2; }
command -v jq >/dev/null || { echo "bench-top: needs jq (apt-get install -y jq)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-top: needs GNU time (/usr/bin/time)" >&2; exit 1; }
cd "$root"

# build_rv: kubectl-rv into $work/kubectl-rv (a plain copy of the linker's
# output: a binary fresh from the linker shows more peak RSS).
build_rv() {
  if [ -n "${RV_BIN:-}" ]; then
    cp "$RV_BIN" "$work/kubectl-rv"
    return
  fi
  CGO_ENABLED=0 go build -trimpath -o "$work/kubectl-rv.built" ./cmd/kubectl-rv
  cp "$work/kubectl-rv.built" "$work/kubectl-rv"
}

# build_peer: kubectl-dev_tool into $peer unless it is there.
build_peer() {
  [ -x "$peer" ] && [ -z "${FORCE_PEERS:-}" ] && return
  local dir="$work/peer-src"
  mkdir -p "$cache/bin" "$dir"
  if [ -f "$peer_src/go.mod" ]; then
    dir=$peer_src
  elif git --git-dir="$peer_src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    log "kubectl-dev_tool: exporting $(git --git-dir="$peer_src" rev-parse --short HEAD) from $peer_src"
    # Only what the build needs: the web assets are not.
    git --git-dir="$peer_src" archive HEAD -- go.mod go.sum cmd pkg vendor \
      ':(exclude)pkg/cmd/api-request-count/html-template' | tar -x -C "$dir"
  else
    log "kubectl-dev_tool: cloning https://github.com/openshift/cluster-debug-tools into $peer_src"
    git clone -q https://github.com/openshift/cluster-debug-tools "$peer_src"
    dir=$peer_src
  fi
  log "kubectl-dev_tool: building from $dir"
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=vendor go build -trimpath -o "$peer" ./cmd/kubectl-dev_tool)
}

# genlog FILE SIZE: a generated Metadata log, unless FILE is there.
genlog() {
  [ -s "$1" ] && return
  go run ./hack/genaudit -size "$2" -level Metadata -out "$1.tmp"
  mv "$1.tmp" "$1"
}

describe() { # describe FILE
  echo "log: $1, $(stat -c %s "$1") bytes, $(wc -l < "$1") lines; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
}

# vs NAME-A CMD-A NAME-B CMD-B: RUNS pairs of the two shell commands in
# turn (A B A B ...); the medians of each and of B/A pair by pair.
vs() {
  local i fmt='%e %U %S %M'
  : > "$work/a.times"
  : > "$work/b.times"
  for ((i = 0; i < RUNS; i++)); do
    /usr/bin/time -o "$work/t" -f "$fmt" sh -c "$2"
    cat "$work/t" >> "$work/a.times"
    /usr/bin/time -o "$work/t" -f "$fmt" sh -c "$4"
    cat "$work/t" >> "$work/b.times"
  done
  paste -d' ' "$work/a.times" "$work/b.times" | awk -v a="$1" -v b="$3" -v n="$RUNS" '
    function med(x,   m, i, j, t) { # median of x[1..n]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
      return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
    }
    { aw[NR] = $1; ac[NR] = $2 + $3; am[NR] = $4; bw[NR] = $5; bc[NR] = $6 + $7; bm[NR] = $8
      rw[NR] = $5 / ($1 > 0 ? $1 : 0.01); rc[NR] = ($6 + $7) / ($2 + $3 > 0 ? $2 + $3 : 0.01); rm[NR] = $8 / $4 }
    END {
      printf "%s: %.2f s wall, %.2f s CPU, %.0f MB peak RSS (medians of %d)\n", a, med(aw), med(ac), med(am) / 1024, n
      printf "%s: %.2f s wall, %.2f s CPU, %.0f MB peak RSS\n", b, med(bw), med(bc), med(bm) / 1024
      printf "%s / %s, pair by pair: %.1fx wall, %.1fx CPU, %.1fx peak RSS\n", b, a, med(rw), med(rc), med(rm)
    }'
}

# compare NAME RV-TSV PEER-TSV: sums both "key<TAB>count" lists per key and
# prints every key whose counts differ; returns 1 if any does.
compare() {
  awk -F'\t' -v name="$1" -v max="${MAXDIFF:-30}" '
    FNR == 1 { f++ }
    { if (f == 1) rv[$1] += $2; else pe[$1] += $2; seen[$1] = 1 }
    END {
      for (k in seen) {
        n++
        if (rv[k] != pe[k] && ++bad <= max) printf "  %s %s: kubectl rv %d, peer %d\n", name, (k == "" ? "\"\"" : k), rv[k], pe[k]
      }
      if (bad) { printf "%s: %d of %d rows DIFFER%s\n", name, bad, n, (bad > max ? " (the first " max " above)" : ""); exit 1 }
      printf "%s: %d rows, every count equal\n", name, n
    }' "$2" "$3"
}

speed() {
  genlog "$LOG" 1GiB
  describe "$LOG"
  export RV="$work/kubectl-rv" LOG W="$work" RV_ARGS="${RV_ARGS:-}"
  vs "kubectl rv --view top --by user${RV_ARGS:+ $RV_ARGS}" \
    'exec "$RV" conflicts --audit-log "$LOG" --view top --by user $RV_ARGS -o json > "$W/rv.json"' \
    "jq | sort | uniq -c | sort -rn" \
    'jq -r '"'"'select(.stage=="ResponseComplete" or .stage=="Panic") | (.impersonatedUser.username // .user.username)'"'"' "$LOG" | sort | uniq -c | sort -rn > "$W/jq.txt"'
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "kubectl rv: $(jq '.total' "$work/rv.json") requests, $(jq '.input.duplicates' "$work/rv.json") duplicate auditIDs dropped"
  jq -r '.groups[] | [.key.user, .count] | @tsv' "$work/rv.json" > "$work/rv.tsv"
  sed -E 's/^ *([0-9]+) (.*)$/\2\t\1/' "$work/jq.txt" > "$work/jq.tsv"
  compare "speed log, by user (jq as the peer)" "$work/rv.tsv" "$work/jq.tsv"
}

# rv_top TSV JQ-EXPR ARGS...: kubectl rv's top table on $plog, one
# "key<TAB>count" line per group as JQ-EXPR makes it from a group.
rv_top() {
  local out=$1 expr=$2
  shift 2
  "$work/kubectl-rv" conflicts --audit-log "$plog" --view top "$@" -o json > "$work/rv-top.json"
  jq -r ".groups[] | ($expr) as \$k | [\$k, .count] | @tsv" "$work/rv-top.json" > "$out"
  jq -r '.total' "$work/rv-top.json" > "$out.total"
}

# peer_top TSV BY [ARGS...]: the peer's top table on $plog; every row, one
# "key<TAB>count" line per row as the peer names it.
peer_top() {
  local out=$1 by=$2
  shift 2
  "$peer" audit -f "$plog" -o top=100000000 --by "$by" --stage=ResponseComplete,Panic "$@" > "$work/peer-top.txt"
  sed -nE '1s/^count: ([0-9]+),.*/\1/p' "$work/peer-top.txt" > "$out.total"
  case $by in
  verb | httpstatus) # the totals are in the headers: Top N "GET" (of 3182 total hits):
    sed -nE 's/^Top [0-9]+ "?([^"]*)"? \(of ([0-9]+) total hits\):$/\1\t\2/p' "$work/peer-top.txt" ;;
  *) # "29x" padded to 20 columns, a space, the key
    awk 'NR > 1 { c = $1; sub(/x$/, "", c); print substr($0, 22) "\t" c }' "$work/peer-top.txt" ;;
  esac > "$out"
}

# check NAME BY RV-JQ-EXPR PEER-AWK [RV ARGS...]: one key's parity; the
# peer's keys go through PEER-AWK (a program over "key<TAB>count" lines).
check() {
  local name=$1 by=$2 expr=$3 map=$4
  shift 4
  rv_top "$work/rv.tsv" "$expr" "$@"
  peer_top "$work/peer.raw" "$by" ${peer_args[@]+"${peer_args[@]}"}
  awk -F'\t' -v OFS='\t' "$map" "$work/peer.raw" > "$work/peer.tsv"
  echo "$name: $(cat "$work/rv.tsv.total") requests counted by kubectl rv, $(cat "$work/peer.raw.total") by the peer"
  compare "$name" "$work/rv.tsv" "$work/peer.tsv" || fail=1
}

parity() {
  build_peer
  genlog "$PARITY_LOG" 100MiB
  genlog "$SMALL_LOG" 10MiB
  fail=0
  peer_args=()
  plog=$PARITY_LOG
  describe "$plog"
  # user: the peer's user[fieldManager] summed per user.
  check "by user" user '.key.user' '{ sub(/\[[^][]*\]$/, "", $1); print }' --by user
  # resource: v1/R (core), G/R (namespaced) and G/V/R (cluster-scoped) are
  # R and R.G; the peer leaves out requests with no resource (/healthz,
  # discovery), which kubectl rv counts under "".
  check "by resource" resource 'select(.key.resource != "") | .key.resource' \
    '{ n = split($1, p, "/"); if (n == 2 && p[1] ~ /^v[0-9]/) $1 = p[2]; else if (n == 2) $1 = p[2] "." p[1]; else if (n == 3) $1 = p[3] "." p[1]; print }' \
    --by resource
  check "by namespace" namespace '.key.namespace' '{ print }' --by namespace
  # writes of WRITES_RESOURCE (default configmaps: in genaudit's log every
  # one names its manager with ?fieldManager=) per user[fieldManager]:
  # kubectl rv's writer is user[/manager][@pod], its user the prefix. A
  # write with no ?fieldManager= is the peer's bare user, while kubectl rv
  # names the manager the API server records, from the user agent.
  local wres=${WRITES_RESOURCE:-configmaps}
  peer_args=(--verb=create,update,patch,delete,deletecollection "--resource=$wres")
  check "writes of $wres by user[fieldManager]" user \
    '.key.user as $u | (.key.writer[($u | length):] | sub("@[^@/]*$"; "")) as $r | if ($r | startswith("/")) then "\($u)[\($r[1:])]" else $u end' \
    '{ print }' --by user --by writer --resource "$wres" \
    --verb create --verb update --verb patch --verb delete --verb deletecollection
  peer_args=()
  plog=$SMALL_LOG
  describe "$plog"
  check "by verb" verb '.key.verb' '{ $1 = tolower($1); print }' --by verb
  # status: the peer counts an event with no responseStatus under -1.
  check "by status" httpstatus '.key.status | tostring' '{ if ($1 == "-1") $1 = "0"; print }' --by status

  plog=$PARITY_LOG
  export RV="$work/kubectl-rv" PEER="$peer" PLOG="$plog" W="$work" RV_ARGS="${RV_ARGS:-}"
  echo "timing on $plog; load $(cut -d' ' -f1-3 /proc/loadavg)"
  vs "kubectl rv --view top --by user${RV_ARGS:+ $RV_ARGS}" \
    'exec "$RV" conflicts --audit-log "$PLOG" --view top --by user $RV_ARGS -o json > "$W/rv-t.json"' \
    "kubectl-dev_tool audit -o top --by user" \
    'exec "$PEER" audit -f "$PLOG" -o top=100000000 --by user --stage=ResponseComplete,Panic > "$W/peer-t.txt"'
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  return "$fail"
}

build_rv
status=0
case $MODE in
speed) speed || status=1 ;;
parity) parity || status=1 ;;
all)
  speed || status=1
  parity || status=1
  ;;
*) echo "bench-top: MODE is speed, parity or all, not $MODE" >&2; exit 2 ;;
esac
exit "$status"
