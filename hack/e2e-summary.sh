#!/usr/bin/env bash
# Passes `go test -v` output through and ends with plain count lines, keeping
# go test's exit status: first the subtests, then the top-level tests, so that
# one failing subtest reads "1 failed" in each line rather than "2 failed":
#
#   e2e subtests: 120 passed, 1 failed, 0 skipped
#   e2e: 40 passed, 1 failed, 0 skipped
#
# go test -v prints a top-level result as "--- PASS: TestX" at the start of a
# line and a subtest's indented by four spaces per level.
set -o pipefail
passed=0 failed=0 skipped=0 sub_passed=0 sub_failed=0 sub_skipped=0
while IFS= read -r line; do
  printf '%s\n' "$line"
  case "$line" in
    "--- PASS: "*) passed=$((passed+1)) ;;
    "--- FAIL: "*) failed=$((failed+1)) ;;
    "--- SKIP: "*) skipped=$((skipped+1)) ;;
    *" --- PASS: "*) sub_passed=$((sub_passed+1)) ;;
    *" --- FAIL: "*) sub_failed=$((sub_failed+1)) ;;
    *" --- SKIP: "*) sub_skipped=$((sub_skipped+1)) ;;
  esac
done
echo "e2e subtests: $sub_passed passed, $sub_failed failed, $sub_skipped skipped"
echo "e2e: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$sub_failed" -eq 0 ] && [ "$passed" -gt 0 ]
