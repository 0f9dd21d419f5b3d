#!/usr/bin/env bash
# Configures and builds the instrumented build: clang, AddressSanitizer + UndefinedBehaviorSanitizer and
# libFuzzer's coverage in every library. The same build runs the test suite under the sanitizers (.ci/run)
# and holds the fuzz harnesses (scripts/fuzz.sh), so its sources are compiled once.
#   scripts/build-instrumented.sh [BUILD_DIR] [ninja targets...]   (default build-asan/, every target)
# -O1 keeps a cold build of the gRPC and template-heavy sources inside CI's time; no debug info, because
# with -g ccache hashes the build directory and a clean clone would never hit the cache (reports still name
# functions). Warnings are the release build's job (GCC, -Werror); benchmarks are timed, so not here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-asan}
shift || true
"$root/scripts/deps.sh"
CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DTOPOFIT_FUZZ=ON -DTOPOFIT_WERROR=OFF -DTOPOFIT_BENCHMARKS=OFF \
  -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 >/dev/null
ninja -C "$build" "$@"
