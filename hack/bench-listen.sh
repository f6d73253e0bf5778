#!/usr/bin/env bash
# Load test of kubectl rv conflicts --listen (the audit webhook receiver):
# builds kubectl-rv, makes a 200 MiB audit log with hack/genaudit (events
# shaped like the test control plane's), and POSTs it as EventList batches
# of 400 to the listener over loopback at RATE events a second for FOR
# (hack/listenload), then prints the rate kept, the events received and
# dropped, the listener's peak RSS and CPU time. The listener runs on
# one core, CPU 0 (taskset -c 0, so its GOMAXPROCS is 1), the sender on
# CPU 1; LISTEN_CPUS and SEND_CPUS change that (LISTEN_CPUS= leaves the
# listener unpinned). The load average is printed before and after,
# since the machine may be shared.
#
#   hack/bench-listen.sh                    100,000 events/s (twice the 50,000 aim) for 10s
#   RATE=50000 FOR=20s hack/bench-listen.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RATE="${RATE:-100000}"
FOR="${FOR:-10s}"
LOG="${LOG:-/tmp/rv-listen-audit.log}"
LISTEN_CPUS="${LISTEN_CPUS-0}"
SEND_CPUS="${SEND_CPUS:-1}"
bin=$(mktemp -d /tmp/bench-listen.XXXXXX)
trap 'rm -rf "$bin"' EXIT
cd "$root"
go build -o "$bin/kubectl-rv" ./cmd/kubectl-rv
go build -o "$bin/listenload" ./hack/listenload
[ -s "$LOG" ] || go run ./hack/genaudit -size 200MiB -out "$LOG"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c "$SEND_CPUS" "$bin/listenload" -rv "$bin/kubectl-rv" -cpus "$LISTEN_CPUS" -log "$LOG" -rate "$RATE" -for "$FOR"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
