#!/usr/bin/env bash
# Measures how many events per second kubectl rv watch keeps up with against
# the real control plane (see BenchmarkWatchKeepsUp in test/e2e/watch_test.go),
# then the offline event pipeline (decode, attribute, diff, render) on one core.
#
#   hack/bench-watch.sh
#
# `hack/bench-watch.sh memory` instead measures, without a cluster, the peak
# RSS and CPU time of replaying a recording of a list of N small ConfigMaps
# (as hack/bench-churn.sh creates them, about 480 bytes of JSON each). A
# replay of a file reads it twice (checked whole, then replayed event by
# event), so its peak is what the tracker keeps plus one event, and its CPU
# time includes decoding the recording twice.
#
#   OBJECTS=100000                      how many ConfigMaps
#   BASELINE=main                       also replay with watch built from that git revision
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [ "${1:-}" = memory ]; then
  OBJECTS="${OBJECTS:-100000}"
  work=$(mktemp -d /tmp/bench-watch.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  go build -o "$work/kubectl-rv" ./cmd/kubectl-rv
  bins=("this tree:$work/kubectl-rv")
  if [ -n "${BASELINE:-}" ]; then
    mkdir "$work/baseline"
    git archive "$BASELINE" | tar -x -C "$work/baseline"
    (cd "$work/baseline" && go build -o "$work/kubectl-rv-baseline" ./cmd/kubectl-rv)
    bins+=("$BASELINE:$work/kubectl-rv-baseline")
  fi
  awk -v n="$OBJECTS" 'BEGIN {
    t = "2026-11-24T16:45:30Z"
    print "{\"apiVersion\":\"rv.kubectl-rv.dev/v1alpha1\",\"kind\":\"WatchRecording\",\"format\":1,\"started\":\"" t "\",\"targets\":[\"configmaps -n bench-churn\"],\"secretsRedacted\":true}"
    for (i = 0; i < n; i++) {
      printf "{\"type\":\"LIST\",\"time\":\"%s\",\"resource\":\"v1/configmaps\",\"reason\":\"initial\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%06d\",\"namespace\":\"bench-churn\",\"uid\":\"3f0c9a1e-5b7d-4c2a-9e8f-%012d\",\"resourceVersion\":\"%d\",\"creationTimestamp\":\"%s\",\"labels\":{\"app\":\"bench\"},\"managedFields\":[{\"manager\":\"bench\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"time\":\"%s\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:metadata\":{\"f:labels\":{\"f:app\":{}}}}}]},\"data\":{\"a\":\"value-a\",\"b\":\"value-b\"}}}\n", t, i, i, 1000 + i, t, t
    }
    printf "{\"type\":\"SYNCED\",\"time\":\"%s\",\"resource\":\"v1/configmaps\",\"reason\":\"initial\",\"resourceVersion\":\"%d\"}\n", t, 1000 + n
  }' > "$work/rec.jsonl"
  echo "recording: $OBJECTS ConfigMaps, $(sed -n 2p "$work/rec.jsonl" | sed 's/.*"object"://; s/}$//' | wc -c) bytes of JSON each"
  printf '%-16s %14s %12s\n' "watch --replay" "peak RSS (MB)" "cpu (s)"
  for b in "${bins[@]}"; do
    /usr/bin/time -v -o "$work/time" "${b#*:}" watch --replay "$work/rec.jsonl" -o json >/dev/null
    awk -F': ' -v name="${b%%:*}" '/Maximum resident set size/ {rss=$2} /User time/ {cpu+=$2} /System time/ {cpu+=$2}
      END {printf "%-16s %14.1f %12.2f\n", name, rss/1024, cpu}' "$work/time"
  done
  exit 0
fi
echo "== event pipeline, one core (events/cpu-s is the rate of one busy core)"
go test ./pkg/inspect/ -run XXX -bench Pipeline -benchtime 3s -count 3 -cpu 1
echo "== against the real control plane (writes/s offered, rows/s printed, lag after the last write)"
go test -tags e2e -count=1 -run XXX -bench WatchKeepsUp -benchtime 1x ./test/e2e/
