#!/usr/bin/env bash
# catch_discover_tests reads `--list-test-names-only` into a CMake list, so a ';' in a TEST_CASE name
# splits it into test specs that match nothing: CTest then reports the case as passed without running a
# single assertion. A '[' or ']' is as bad: CMake does not split a list inside brackets, so an unbalanced
# one glues every later name of the binary into one test spec (and Catch reads brackets as tags). Fails,
# naming them, when any TEST_CASE name (its first string literals) holds one of them.
set -euo pipefail
root=$1
bad=$(grep -rnzoP --include='*_test.cc' 'TEST_CASE\((\s*"[^"]*")+' "$root/tests" | tr '\0' '\n' | grep -E '[];[]' || true)
if [[ -n $bad ]]; then
  echo "TEST_CASE names with ';', '[' or ']' (CTest would run none of their assertions):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "no TEST_CASE name holds a ';', '[' or ']'"
