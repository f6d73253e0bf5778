#!/usr/bin/env bash
# Runs every fuzz target in the module for FUZZTIME each (default 20s):
#   hack/fuzz.sh            # all targets
#   FUZZTIME=2m hack/fuzz.sh ./pkg/objects
# Crashers are written by go test into the package's testdata/fuzz and must
# be committed together with the fix.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${FUZZTIME:-20s}
dirs=("${@:-./pkg/...}")
for pkg in $(go list "${dirs[@]}"); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz: $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
