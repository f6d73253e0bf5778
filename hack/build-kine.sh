#!/usr/bin/env bash
# Builds kine (k3s's etcd shim: the etcd API over SQLite) at a pinned version
# from the Go module proxy into a git-ignored folder, and reuses the binary
# when it is already there. The e2e suite runs a kube-apiserver over it to see
# what a real non-etcd backend does (doctor's storage-watch check).
#
#   hack/build-kine.sh          # prints the bin folder on stdout
#   FORCE=1 hack/build-kine.sh  # rebuild even when cached
#
# kine's SQLite driver needs cgo (gcc). A cold build takes about 2 minutes on
# 2 cores; a warm one is a stat of one file.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=v0.17.5
out="${RV_KINE_BIN:-$root/_output/kine/$version/bin}"

if [ -x "$out/kine" ] && [ "${FORCE:-0}" != 1 ]; then
  echo "$out"
  exit 0
fi
command -v gcc >/dev/null || { echo "build-kine: kine's SQLite driver needs gcc (apt-get install gcc)" >&2; exit 1; }
mkdir -p "$out"
echo "building kine $version into $out (cold builds take about 2 minutes)" >&2
start=$(date +%s)
# go install outside any module: kine's own go.mod and go.sum pin its graph.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && GOFLAGS= CGO_ENABLED=1 GOBIN="$tmp" go install -trimpath -ldflags "-s -w" "github.com/k3s-io/kine@$version")
mv "$tmp/kine" "$out/kine"
echo "kine built in $(( $(date +%s) - start ))s" >&2
echo "$out"
