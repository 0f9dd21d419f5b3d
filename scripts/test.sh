#!/usr/bin/env bash
# The test command: installs dependencies and builds if needed, then runs the whole suite with CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/build.sh" "$build"
ctest --test-dir "$build" --output-on-failure -j2
