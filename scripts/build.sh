#!/usr/bin/env bash
# Installs dependencies if needed and builds topofit incrementally.
#   scripts/build.sh [BUILD_DIR] [extra cmake args...]   (default build/, Release, warnings as errors)
#   TARGETS="topofit-bench" scripts/build.sh             builds only those targets (default: everything)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
"$root/scripts/deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOPOFIT_WERROR=ON "$@" >/dev/null
# shellcheck disable=SC2086  # TARGETS is a list of words
ninja -C "$build" ${TARGETS:-}
