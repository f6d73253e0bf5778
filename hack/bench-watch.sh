#!/usr/bin/env bash
# Measures how many events per second kubectl rv watch keeps up with against
# the real control plane (see BenchmarkWatchKeepsUp in test/e2e/watch_test.go),
# then the offline event pipeline (decode, attribute, diff, render) on one core.
#
#   hack/bench-watch.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
echo "== event pipeline, one core (events/cpu-s is the rate of one busy core)"
go test ./pkg/inspect/ -run XXX -bench Pipeline -benchtime 3s -count 3 -cpu 1
echo "== against the real control plane (writes/s offered, rows/s printed, lag after the last write)"
go test -tags e2e -count=1 -run XXX -bench WatchKeepsUp -benchtime 1x ./test/e2e/
