#!/usr/bin/env bash
# hack/verify-docs.sh (part of make lint): fail when docs/commands differs from
# what hack/update-docs.sh would generate from the current commands.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./hack/gendocs -out "$tmp/commands" -docs docs
if ! diff -ru docs/commands "$tmp/commands" >"$tmp/diff" 2>&1; then
	cat "$tmp/diff" >&2
	echo "docs/commands is stale: run make docs (hack/update-docs.sh) and commit the result" >&2
	exit 1
fi
echo "docs/commands is up to date" >&2
