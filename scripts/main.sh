#!/usr/bin/env bash
# The main job on an embedded default, no cluster needed. Installs dependencies and builds if needed.
# Until `topofit bench` (the trace replay) lands, the main job is the allocator's head-to-head against
# NVIDIA go-gpuallocator's best-effort policy (re-implemented in bench/peer/) on generated free sets of
# every catalog shape, plus a worked example. Results land in out/ (override: OUT=dir).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
"$root/scripts/build.sh" "$root/build"
mkdir -p "$out"
echo "== topofit topo --shape p3.16xlarge --gpus 4 --min-link NV"
"$root/build/cli/topofit" topo --shape p3.16xlarge --gpus 4 --min-link NV | tee "$out/topo-example.txt"
echo
echo "== allocator vs go-gpuallocator best-effort (re-implementation), generated cases"
"$root/build/bench/peer_compare" | tee "$out/allocator-vs-peer.md"
echo
echo "results: $out/topo-example.txt, $out/allocator-vs-peer.md"
