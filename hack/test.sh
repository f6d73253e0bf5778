#!/usr/bin/env bash
# make test: the unit tests (make test-unit) and the e2e suite (make e2e) at
# the same time.
#
# The e2e suite leaves the CPU idle about a third of its time while its
# tests wait on control planes (watch timeouts, lease renewals, restarts);
# the unit tests are the CPU work of -race builds. So the unit tests run
# beside it, at a lower CPU priority (nice 10), where they take the idle
# cycles and yield the rest; their output goes to _output/test-unit.log and
# is printed once the e2e suite is done, followed by both results. The
# exit status is non-zero if either failed.
#
#   hack/test.sh                 (make test)
#   make test-unit; make e2e     the same, one after the other
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
MAKE=${MAKE:-make}
mkdir -p _output
log=_output/test-unit.log

start=$(date +%s)
# Job control: the unit tests get a process group of their own, so that an
# interrupt stops all of their go commands.
set -m
(
	nice -n 10 "$MAKE" --no-print-directory test-unit >"$log" 2>&1
	rc=$?
	echo "$rc $(date +%s)" >"$log.done"
	exit "$rc"
) &
unit=$!
set +m
trap 'kill -- -"$unit" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

echo "test: unit tests started in the background (nice 10; output in $log, printed after the e2e suite)"
"$MAKE" --no-print-directory e2e
e2e=$?
e2e_end=$(date +%s)

wait "$unit"
read -r unit_rc unit_end <"$log.done" || { unit_rc=1 unit_end=$(date +%s); }
rm -f "$log.done"
trap - EXIT

echo
echo "== unit tests ($log)"
cat "$log"
echo
verdict() { if (($1 == 0)); then echo passed; else echo "FAILED (exit $1)"; fi; }
echo "test: unit tests $(verdict "$unit_rc") in $((unit_end - start)) s; e2e suite $(verdict "$e2e") in $((e2e_end - start)) s"
((e2e == 0 && unit_rc == 0))
