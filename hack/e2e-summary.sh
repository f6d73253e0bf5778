#!/usr/bin/env bash
# Passes `go test -v` output through and ends with a plain count line
# ("e2e: N passed, N failed"), keeping go test's exit status.
set -o pipefail
passed=0 failed=0 skipped=0
while IFS= read -r line; do
  printf '%s\n' "$line"
  case "$line" in
    *"--- PASS: "*) passed=$((passed+1)) ;;
    *"--- FAIL: "*) failed=$((failed+1)) ;;
    *"--- SKIP: "*) skipped=$((skipped+1)) ;;
  esac
done
echo "e2e: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
