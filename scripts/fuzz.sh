#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, in the instrumented build: scripts/build-instrumented.sh) and runs each for SECONDS (default 300).
#   scripts/fuzz.sh [SECONDS]
#   FUZZ_RUNS=1000000 scripts/fuzz.sh   each harness for that many inputs instead, however long it takes
# Seeds: the real fixtures in shared/fixtures, read in place (TOPOFIT_SHARED_DIR, default ../shared beside
# the repository), and the project's own tests/data. New inputs go to build-asan/corpus/<harness>, kept
# between runs; a crash leaves its input in build-asan/artifacts/<harness>/. Prints one line per harness
# (executions, crashes) and exits 1 when any harness crashed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
build=${FUZZ_BUILD_DIR:-$root/build-asan}
shared=${TOPOFIT_SHARED_DIR:-$root/../shared}
fixtures=$shared/fixtures
data=$root/tests/data

"$root/scripts/build-instrumented.sh" "$build" fuzzers

# harness: seed folders (missing ones are skipped, and said)
declare -A seeds=(
  [extender_json_fuzz]="$data/fuzz/extender_json $fixtures/k8s/v1.36.0"
  [kube_json_fuzz]="$fixtures/k8s"
  [admission_review_fuzz]="$data/admission"
  [best_options_fuzz]="$fixtures/k8s/derived"
  [nvidia_smi_fuzz]="$data/nvidia-smi"
  [topology_json_fuzz]="$data/fuzz/topology_json"
  [kubelet_fuzz]="$fixtures/kubelet $data/nvidia-smi"
  [mcp_fuzz]="$data/fuzz/mcp"
)
if [ -n "${FUZZ_RUNS:-}" ]; then budget=(-runs="$FUZZ_RUNS"); spent="$FUZZ_RUNS runs"; else budget=(-max_total_time="$seconds"); spent="${seconds}s"; fi
failed=0
for harness in extender_json_fuzz kube_json_fuzz admission_review_fuzz best_options_fuzz nvidia_smi_fuzz topology_json_fuzz kubelet_fuzz mcp_fuzz; do
  corpus=$build/corpus/$harness
  artifacts=$build/artifacts/$harness
  mkdir -p "$corpus" "$artifacts"
  dirs=()
  for dir in ${seeds[$harness]}; do
    if [ -d "$dir" ]; then dirs+=("$dir"); else echo "$harness: no seeds at $dir" >&2; fi
  done
  log=$build/$harness.log
  status=0
  started=$SECONDS
  "$build/fuzz/$harness" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "${dirs[@]}" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$artifacts" -type f | wc -l)
  echo "$harness: ${runs:-0} executions in $spent ($((SECONDS - started)) s), $crashes crashes (exit $status; log $log)"
  if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=1
    tail -40 "$log" >&2
  fi
done
exit $failed
