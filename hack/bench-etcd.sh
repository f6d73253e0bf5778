#!/usr/bin/env bash
# Runs the same single-client operation streams (puts, point reads, guarded
# updates) on the embedded revision store and on a real etcd (the control
# plane's binary, started privately on loopback with --unsafe-no-fsync), and
# prints each engine's throughput and the ratio embedded/etcd.
#
# Needs the control-plane binaries (hack/build-control-plane.sh). The e2e
# harness starts the shared control plane too, which takes about a minute.
#
#   hack/bench-etcd.sh            # default -benchtime
#   BENCHTIME=3s hack/bench-etcd.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -tags e2e -count=1 -run '^$' -bench 'BenchmarkSimulateStore' -benchtime "${BENCHTIME:-2s}" -cpu 1 ./test/e2e/ | tee "$out"
echo
awk '
/^BenchmarkSimulateStore/ {
	split($1, p, "/"); op = p[1]; sub(/^BenchmarkSimulateStore/, "", op)
	eng = p[2]; sub(/^engine=/, "", eng); sub(/-[0-9]+$/, "", eng)
	for (i = 2; i < NF; i++) if ($(i+1) == "ops/s") rate[op, eng] = $i
	ops[op] = 1
}
END {
	printf "%-16s %16s %12s %10s\n", "operation", "embedded ops/s", "etcd ops/s", "ratio"
	for (op in ops) {
		e = rate[op, "embedded"]; r = rate[op, "etcd"]
		printf "%-16s %16.0f %12.0f %9.0fx\n", op, e, r, (r > 0 ? e / r : 0)
	}
}' "$out"
