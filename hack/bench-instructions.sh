#!/usr/bin/env bash
# Counts the instructions one operation of a Go benchmark executes, with
# valgrind's callgrind: unlike ns/op, the count does not depend on what else
# the machine is doing, so figures taken on a busy shared machine compare.
# It runs the benchmark at two iteration counts and divides the difference,
# which removes the set-up. The collector's work is included.
#
#   hack/bench-instructions.sh ./pkg/output/ownersprint 'DecodeRender(Tree|Blame)'
#   N1=10 N2=30 hack/bench-instructions.sh ./pkg/predict BenchmarkOfflineDeploymentAllMethods
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pkg=${1:?usage: $0 PACKAGE BENCH-REGEXP}
re=${2:?usage: $0 PACKAGE BENCH-REGEXP}
n1=${N1:-10}
n2=${N2:-30}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/bench.test" "$pkg"
names=$("$work/bench.test" -test.list "$re" | grep '^Benchmark' || true)
[ -n "$names" ] || { echo "no benchmark in $pkg matches $re" >&2; exit 2; }
count() { # bench iterations -> instructions
  local out
  for attempt in 1 2 3; do
    # Go's signals and spinning threads confuse valgrind now and then: a run
    # that fails or takes too long is thrown away and tried again.
    if (cd "$work" && GODEBUG=asyncpreemptoff=1 timeout 600 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
      ./bench.test -test.run '^$' -test.bench "^$1\$" -test.benchtime "${2}x" -test.cpu 1) > "$work/run.log" 2>&1; then
      out=$(sed -n 's/.*Collected : //p' "$work/run.log")
      [ -n "$out" ] && { echo "$out"; return; }
    fi
  done
  echo "valgrind failed on $1 three times; the last run said:" >&2
  tail -20 "$work/run.log" >&2
  exit 1
}
for name in $names; do
  a=$(count "$name" "$n1")
  b=$(count "$name" "$n2")
  awk -v n="$name" -v a="$a" -v b="$b" -v n1="$n1" -v n2="$n2" \
    'BEGIN { printf "%-45s %8.1f M instructions/op\n", n, (b - a) / (n2 - n1) / 1e6 }'
done
