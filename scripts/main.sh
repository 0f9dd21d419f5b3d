#!/usr/bin/env bash
# The main job on an embedded default, no cluster needed. Installs dependencies and builds if needed.
# `topofit bench` replays its built-in workload (10,000 pods of bursty agentic inference, training jobs
# and CPU pods, generated for seed 1) through the stock kube-scheduler + device plugin + cluster-autoscaler
# as shipped (`stock`) and as an operator tunes them (`tuned`), and through topofit (and the two
# ablations), prints the comparison over one measuring window, and writes CSV, JSON and plots to out/bench
# (override: OUT=dir). Extra arguments go to `topofit bench`, e.g. `--workload openb` or `--seeds 1-5`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
# Only the replay is built (topofit-bench: `topofit bench` without the servers), so the first run on a
# fresh machine builds a fraction of the project; scripts/test.sh builds everything.
TARGETS=topofit-bench "$root/scripts/build.sh" "$root/build"
mkdir -p "$out/bench"
"$root/build/cli/topofit-bench" --out "$out/bench" "$@" | tee "$out/bench/table.txt"
echo "results: $out/bench/ (table.txt, summary.csv, summary.json, timeline.csv, pending_cdf.csv, plots)"
