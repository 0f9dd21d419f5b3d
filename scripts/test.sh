#!/usr/bin/env bash
# The test command: installs dependencies and builds if needed, then runs the whole suite with CTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/build.sh" "$build"
# The MCP tests' clients come from the npm registry (tests/mcp: the official SDK client and conformance
# suite, pinned by package-lock.json): Debian's nodejs and npm when there is no node yet, then npm ci
# whenever the lockfile changed since the last install.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends nodejs npm
fi
if [[ ! -f $root/tests/mcp/node_modules/.package-lock.json ||
      $root/tests/mcp/package-lock.json -nt $root/tests/mcp/node_modules/.package-lock.json ]]; then
  (cd "$root/tests/mcp" && npm ci --no-audit --no-fund)
fi
ctest --test-dir "$build" --output-on-failure -j2
