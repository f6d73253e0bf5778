#!/usr/bin/env bash
# Start-up as a budget: each kubectl rv command on a tiny input, side by side
# with `kubectl version --client`, the process every `kubectl rv` run already
# pays (kubectl starts the plugin). The aim is at most 0.75 times kubectl's
# CPU for every row.
#
#   hack/bench-startup.sh                  # N=20 samples of B=5 runs per row
#   N=10 B=3 hack/bench-startup.sh
#   RV_BIN=/tmp/kubectl-rv KUBECTL=/usr/local/bin/kubectl hack/bench-startup.sh
#
# RV_BIN is the kubectl-rv to measure (default: built from this tree the way
# releases are, CGO_ENABLED=0 -trimpath); KUBECTL the kubectl to compare with
# (default: the control plane's, hack/build-control-plane.sh). No cluster is
# needed: the rows run offline, and the commands that need a cluster are
# timed through --help, which parses the same flags and builds the same
# command tree. Each sample is a batch of B runs timed by GNU /usr/bin/time
# (which rounds to 10 ms); rv and kubectl alternate, the order swapped every
# sample, and only the medians' ratio is compared, since the machine may be
# shared.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
N=${N:-20}
B=${B:-5}
work=$(mktemp -d /tmp/rv-bench-startup.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP PIPE

rv=${RV_BIN:-}
if [ -z "$rv" ]; then
  echo "== building kubectl-rv from $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified)')" >&2
  CGO_ENABLED=0 go build -trimpath -o "$work/built/kubectl-rv" ./cmd/kubectl-rv
  rv=$work/built/kubectl-rv
fi
kubectl=${KUBECTL:-$(hack/build-control-plane.sh)/kubectl}
# Both are timed from plain copies: a binary the linker has just written
# maps differently and reads higher in RSS.
mkdir -p "$work/bin"
cp "$rv" "$work/bin/kubectl-rv" && rv=$work/bin/kubectl-rv
cp "$kubectl" "$work/bin/kubectl" && kubectl=$work/bin/kubectl

# Tiny inputs: a Deployment with managedFields (examples/), a desired
# manifest, and a ten-line audit log.
cp examples/web.yaml "$work/live.yaml"
sed -e 's/replicas: 3/replicas: 4/' examples/web.yaml | grep -v '^  resourceVersion:' > "$work/m.yaml"
for i in $(seq 10); do
  printf '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a%d","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/c?fieldManager=m%d","verb":"update","user":{"username":"u%d"},"userAgent":"x/v1","objectRef":{"resource":"configmaps","namespace":"ns","name":"c","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":%d},"requestReceivedTimestamp":"2026-12-01T10:00:0%d.000000Z","stageTimestamp":"2026-12-01T10:00:0%d.001000Z"}\n' \
    "$i" $((i % 2)) $((i % 2)) $([ $((i % 3)) -eq 0 ] && echo 409 || echo 200) $((i % 10)) $((i % 10))
done > "$work/audit.log"
cd "$work"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# sample NAME CMD...: one batch of B runs; appends the per-run CPU ms and
# the batch's peak RSS (KiB).
sample() {
  local name=$1; shift
  local q
  q=$(printf '%q ' "$@")
  /usr/bin/time -f '%U %S %M' -o "$work/t" sh -c "for i in \$(seq $B); do $q >/dev/null 2>&1; done; true"
  awk -v b="$B" '{printf "%.2f\n", ($1 + $2) * 1000 / b}' "$work/t" >> "$work/$name.cpu"
  awk '{print $3}' "$work/t" >> "$work/$name.rss"
}

# check CMD...: runs CMD once, so that a command that fails fast cannot pass
# for one that starts fast (a finding, exit 1, is an answer).
check() {
  local code=0
  "$@" > "$work/out" 2>&1 || code=$?
  if [ "$code" -gt 1 ]; then
    echo "bench-startup: exit $code: $*" >&2
    cat "$work/out" >&2
    exit 1
  fi
}

row() { # the rv arguments
  rm -f "$work"/{rv,kubectl}.{cpu,rss}
  check "$rv" "$@"
  for s in $(seq "$N"); do
    if [ $((s % 2)) -eq 0 ]; then
      sample rv "$rv" "$@"; sample kubectl "$kubectl" version --client
    else
      sample kubectl "$kubectl" version --client; sample rv "$rv" "$@"
    fi
  done
  local rc rr kc kr
  rc=$(median < rv.cpu); rr=$(median < rv.rss); kc=$(median < kubectl.cpu); kr=$(median < kubectl.rss)
  awk -v l="$*" -v rc="$rc" -v rr="$rr" -v kc="$kc" -v kr="$kr" \
    'BEGIN {printf "| `%s` | %.1f ms, %.0f MiB | %.1f ms, %.0f MiB | %.2fx | %.2fx |\n", l, rc, rr / 1024, kc, kr / 1024, rc / kc, rr / kr}'
}

echo
echo "kubectl rv start-up vs kubectl version --client: median CPU (user+sys) per run and peak RSS; N=$N samples of B=$B runs, interleaved"
echo "| kubectl rv ... | rv | kubectl version --client | cpu ratio | rss ratio |"
echo "|---|---|---|---|---|"
row version --client
row simulate
row simulate list
row owners -f live.yaml
row predict -f m.yaml --offline --live live.yaml --method apply --field-manager ci --fail-on none
row conflicts --audit-log audit.log
row leases --audit-log audit.log
for c in watch lag churn doctor; do row "$c" --help; done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $(go version | cut -d' ' -f3)"
