#!/usr/bin/env bash
# hack/update-docs.sh (make docs): regenerate docs/commands, one page per
# kubectl rv command, from the cobra commands (hack/gendocs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
go run ./hack/gendocs -out docs/commands -docs docs
echo "docs/commands regenerated" >&2
