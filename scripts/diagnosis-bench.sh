#!/usr/bin/env bash
# The diagnosis benchmark (docs/mcp.md, "Diagnosis benchmark"): builds topofit and the fault injector if
# needed, makes the faults (tests/diagnosis/inject_faults.cc) and asks topofit's MCP server about each through
# the official SDK's client (tests/mcp/diagnosis.mjs). Prints one line per fault and the score; exits 1 below
# 100% or with an answer of 2 KB or more. Needs tests/mcp/node_modules (`npm ci` in tests/mcp).
#   scripts/diagnosis-bench.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
TARGETS="topofit diagnosis_faults" "$root/scripts/build.sh" "$build" >/dev/null
TOPOFIT_BIN=$build/cli/topofit TOPOFIT_FAULTS_BIN=$build/tests/diagnosis_faults exec bash "$root/tests/mcp/run.sh" diagnosis
