#!/usr/bin/env bash
# Load test of kubectl rv conflicts --listen (the audit webhook receiver):
# builds kubectl-rv, makes a 200 MiB audit log with hack/genaudit (events
# shaped like the test control plane's), and POSTs it as EventList batches
# of 400 to the listener over loopback at RATE events a second for FOR
# (hack/listenload), then prints the rate kept, the events received and
# dropped, the listener's peak RSS and CPU time. The load average is
# printed before and after, since the machine may be shared.
#
#   hack/bench-listen.sh                    100,000 events/s (twice the 50,000 aim) for 10s
#   RATE=50000 FOR=20s hack/bench-listen.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RATE="${RATE:-100000}"
FOR="${FOR:-10s}"
LOG="${LOG:-/tmp/rv-listen-audit.log}"
bin=$(mktemp -d /tmp/bench-listen.XXXXXX)
trap 'rm -rf "$bin"' EXIT
cd "$root"
go build -o "$bin/kubectl-rv" ./cmd/kubectl-rv
[ -s "$LOG" ] || go run ./hack/genaudit -size 200MiB -out "$LOG"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./hack/listenload -rv "$bin/kubectl-rv" -log "$LOG" -rate "$RATE" -for "$FOR"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
