#!/usr/bin/env bash
# Regenerates the bench section of bench/RESULTS.md at HEAD (issue 12): every workload under every policy
# — the stock baseline, the tuned one with CA's expander sweep, and topofit's three worlds — over seeds
# 1-5, the comm_fraction sensitivity sweep, and the speed and memory figures. Everything between the
# markers `<!-- bench-results:begin -->` and `<!-- bench-results:end -->` is replaced; the rest of the
# file (the hand-written analysis) is left alone.
#   scripts/bench-results.sh [BUILD_DIR]     (default build/; SEEDS=1-3 for a quicker pass)
# Traces are read in place from $TOPOFIT_SHARED_DIR/traces (default ../shared/traces).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
seeds=${SEEDS:-1-5}
export TOPOFIT_SHARED_DIR=${TOPOFIT_SHARED_DIR:-$root/../shared}
results=$root/bench/RESULTS.md
grep -q '<!-- bench-results:begin -->' "$results" && grep -q '<!-- bench-results:end -->' "$results" ||
  { echo "bench-results.sh: $results has no bench-results markers" >&2; exit 1; }
if [[ -f $build/build.ninja ]]; then ninja -C "$build" topofit >&2; else "$root/scripts/build.sh" "$build" >&2; fi
topofit=$build/cli/topofit
section=$(mktemp)
goal=$(mktemp)
held_out=$(mktemp)
sweep_file=$(mktemp)
trap 'rm -f "$section" "$goal" "$held_out" "$sweep_file"' EXIT
goal_file=$goal  # where run's goal rows go: the goal table, or the held-out one

# issue 31's targets for topofit, from one table run with the sweep (every tuned configuration):
#   undominated: no tuned configuration at least 3% lower on idle and on cost at once ("dominated by");
#   bounded regret: idle and cost each at most +5% against the best tuned configuration of each seed;
#   slowdown GPU-hours below every tuned configuration's (means; "-" where no tuned one has any);
#   p95 pending of 2-, 4- and 8-GPU pods each at most +5% against tuned (least-waste).
# `window` is "whole" or "fill" (the FGD paper's mode is judged over the fill). topofit is the table's last
# column. Each cell the change, "(met)" or "(NOT met)", and the 95% confidence interval of the mean over the
# seeds (Student's t with n-1 degrees of freedom, from the cell's sample standard deviation), "clear" when
# the whole interval is on the verdict's side of the target.
goal_row() {
  local workload=$1 window=$2 table=$3
  awk -v workload="$workload" -v window="$window" '
    BEGIN {
      # t(0.975, df) for df = 1..9: the seeds a table can have.
      split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262", t_975, " ")
      suffix = window == "fill" ? ", fill" : ""
    }
    # A cell "2,256 h ± 66.1 h": its mean.
    function mean(cell,   text, parts) {
      text = cell; sub(/ ±.*/, "", text); gsub(/[$,]/, "", text)
      split(text, parts, " ")
      return parts[1] + 0
    }
    function verdict(label, cell, limit,   pct, sd, met, interval, half, low, high, clear) {
      if (!match(cell, /\([-+][0-9.]+%/)) return
      pct = substr(cell, RSTART + 1, RLENGTH - 2) + 0
      sd = match(cell, /± [0-9.]+%/) ? substr(cell, RSTART + 2, RLENGTH - 3) + 0 : -1
      met = pct <= limit
      interval = ""
      if (sd >= 0 && seeds >= 2 && seeds - 1 in t_975) {
        half = t_975[seeds - 1] * sd / sqrt(seeds)
        low = pct - half; high = pct + half
        clear = met ? high <= limit : low > limit
        interval = sprintf("; %+.1f…%+.1f%s", low, high, clear ? ", clear" : "")
      }
      value[label] = sprintf("%+.1f%% (%s%s)", pct, met ? "met" : "NOT met", interval)
    }
    /^seeds?: / { seeds = split(substr($0, index($0, ":") + 1, index($0, ";") ? index($0, ";") - index($0, ":") - 1 : length($0)), ignored, ",") }
    !names && /^ +[a-z]/ { names = split($0, name, /  +/); next }
    /^vs tuned$/ { block = "tuned"; next }
    /^vs best tuned$/ { block = "best"; next }
    /^vs / { block = "other"; next }
    block && /^$/ { block = "" }
    names && !block && /^slowdown GPU-hours  / {
      m = split($0, cells, /  +/)
      lowest = -1
      for (i = 2; i <= m; i++) if (name[i] ~ /^tuned/ && (lowest < 0 || mean(cells[i]) < lowest)) lowest = mean(cells[i])
      ours = mean(cells[m])
      if (lowest > 0) value["slowdown"] = sprintf("%+.1f%% (%s)", (ours - lowest) * 100 / lowest, ours < lowest ? "met" : "NOT met")
    }
    block == "tuned" {
      n = split($0, cells, /  +/)
      if (cells[1] ~ /^pending p95, [248]-GPU pods$/) verdict(cells[1], cells[n], 5)
    }
    block == "best" {
      n = split($0, cells, /  +/)
      if (cells[1] == "idle GPU-hours" suffix) verdict("idle", cells[n], 5)
      else if (cells[1] == "cost" suffix) verdict("cost", cells[n], 5)
      else if (cells[1] == "dominated by" suffix) value["dominated"] = cells[n] == "none" ? "none (met)" : cells[n] " (NOT met)"
    }
    END {
      # A workload without pods of some size has no such row: its cell is "-".
      split("dominated|idle|cost|slowdown|pending p95, 2-GPU pods|pending p95, 4-GPU pods|pending p95, 8-GPU pods", labels, "|")
      printf "| %s%s |", workload, window == "fill" ? " (fill)" : ""
      for (i = 1; i <= 7; i++) printf " %s |", (labels[i] in value) ? value[labels[i]] : "-"
      printf "\n"
    }' <<<"$table" >>"$goal_file"
}

# The tally under a goal table: cells met and not, and how many of each are clear of the seeds' noise.
goal_tally() {
  local file=$1
  local met met_clear not not_clear
  # grep finding nothing is a count of 0, not a failure of the script (set -o pipefail).
  count() { { grep -o "$1" "$file" || true; } | wc -l; }
  met=$(count '(met[;)]'); met_clear=$(count '(met; [^)]*, clear)')
  not=$(count '(NOT met[;)]'); not_clear=$(count '(NOT met; [^)]*, clear)')
  echo "Met: **$met of $((met + not))** cells ($met_clear of them clear: the whole interval meets the target). Not met: $not"
  echo "($not_clear of them clear: the whole interval misses it; the other $((not - not_clear)) are within the seeds' noise)."
}

# The goal's figures against every baseline of a sweep table (stock and each tuned:<chain>, not only
# tuned): topofit's change of the seeds' means against each, one row per baseline, to $sweep_file. No set-up
# an operator could pick instead should be left out of the comparison.
sweep_rows() {
  local workload=$1 table=$2
  awk -v workload="$workload" '
    # A cell "2,256 h ± 66.1 h", "$36,156 ± $1,040", "4.5 min ± 13.2 s": its mean, waits in seconds.
    function mean(cell, wait,   text, parts) {
      text = cell; sub(/ ±.*/, "", text); gsub(/[$,]/, "", text)
      split(text, parts, " ")
      return parts[1] * (parts[2] == "min" ? 60 : parts[2] == "h" && wait ? 3600 : 1)
    }
    !names && /^ +stock  / { names = split($0, name, /  +/); next }
    /^vs / { exit }
    names {
      m = split($0, cells, /  +/); label = cells[1]
      if (label == "GPU-hours idle") column = 1
      else if (label == "cost") column = 2
      else if (label == "pending p95, 2-GPU pods") column = 3
      else if (label == "pending p95, 4-GPU pods") column = 4
      else if (label == "pending p95, 8-GPU pods") column = 5
      else if (label == "slowdown GPU-hours") column = 6
      else next
      for (i = 2; i <= m; i++) if (name[i] == "topofit") ours = mean(cells[i], column >= 3 && column <= 5)
      for (i = 2; i <= m; i++) {
        if (name[i] != "stock" && name[i] !~ /^tuned/) continue
        base = mean(cells[i], column >= 3 && column <= 5)
        value[name[i], column] = base > 0 ? sprintf("%+.1f%%", (ours - base) * 100 / base) : "-"
        if (!(name[i] in seen)) { seen[name[i]] = 1; order[++baselines] = name[i] }
      }
    }
    END {
      for (b = 1; b <= baselines; b++) {
        printf "| %s | %s |", workload, order[b]
        for (c = 1; c <= 6; c++) printf " %s |", ((order[b], c) in value) ? value[order[b], c] : "-"
        printf "\n"
      }
    }' <<<"$table" >>"$sweep_file"
}

# One run: its command line as the reader would type it, then its table; with a window (whole or fill),
# its goal row over that window.
run() {
  local title=$1 window=$2
  shift 2
  echo "bench-results.sh: $title" >&2
  local table
  table=$("$topofit" bench --no-progress "$@")
  {
    printf '### %s\n\n```\n$ topofit bench %s\n' "$title" "$*"
    printf '%s\n' "$table"
    printf '```\n\n'
  } >>"$section"
  [[ $window == - ]] || goal_row "$title" "$window" "$table"
  last_table=$table
  # A goal workload's sweep: topofit against every set-up an operator could run instead.
  [[ $window == - || $table != *stock* ]] || sweep_rows "$title" "$table"
}

# issue 33's targets on a gang workload's table, against `tuned` (the gang scheduler with CA pod by pod):
# required gangs split 0; GPU-hours held by partial gangs at most 10% of tuned's; gang start p95 at most
# half of tuned's; idle GPU-hours at least 30% lower; cost no higher. topofit is the table's last column.
gang_targets() {
  awk '
    # "1,200 h ± 606.3 h" or "$74,763 ± $9,127": the mean.
    function mean(cell,   text, parts) {
      text = cell; sub(/ ±.*/, "", text); gsub(/[$,]/, "", text)
      split(text, parts, " ")
      return parts[1] + 0
    }
    # "36.3 min ± 11.5 min": the mean in seconds.
    function seconds(cell,   text, parts) {
      text = cell; sub(/ ±.*/, "", text); gsub(/,/, "", text)
      split(text, parts, " ")
      return parts[1] * (parts[2] == "min" ? 60 : parts[2] == "h" ? 3600 : 1)
    }
    function row(what, target, value, met) {
      printf "| %s | %s | %s | %s |\n", what, target, value, met ? "met" : "NOT met"
    }
    !names && /^ +[a-z]/ { names = split($0, name, /  +/); for (i = 2; i <= names; i++) column[name[i]] = i; next }
    /^vs / { block = 1 }
    !block {
      n = split($0, cells, /  +/)
      if (cells[1] == "split gangs") { split_stock = cells[column["stock"]]; split_tuned = cells[column["tuned"]]; split_ours = cells[n] }
      if (cells[1] == "partial gang GPU-hours") { partial_tuned = mean(cells[column["tuned"]]); partial_ours = mean(cells[n]) }
      if (cells[1] == "gang start p95") { p95_tuned = seconds(cells[column["tuned"]]); p95_ours = seconds(cells[n]) }
      if (cells[1] == "GPU-hours idle") { idle_tuned = mean(cells[column["tuned"]]); idle_ours = mean(cells[n]) }
      if (cells[1] == "cost") { cost_tuned = mean(cells[column["tuned"]]); cost_ours = mean(cells[n]) }
    }
    END {
      row("required gangs split", "0 (stock " split_stock ", tuned " split_tuned ")", split_ours, split_ours + 0 == 0)
      row("partial gang GPU-hours", "at most 10% of tuned'"'"'s (" partial_tuned " h)", partial_ours " h", partial_ours <= 0.1 * partial_tuned)
      row("gang start p95", "at most half of tuned'"'"'s", sprintf("%+.1f%%", (p95_ours - p95_tuned) * 100 / p95_tuned), p95_ours <= 0.5 * p95_tuned)
      row("idle GPU-hours", "at least 30% lower", sprintf("%+.1f%%", (idle_ours - idle_tuned) * 100 / idle_tuned), idle_ours <= 0.7 * idle_tuned)
      row("cost", "no higher", sprintf("%+.1f%%", (cost_ours - cost_tuned) * 100 / cost_tuned), cost_ours <= cost_tuned)
    }' <<<"$1"
}

# Wall time and peak RSS of a run, for the speed table.
measure() {
  local what=$1
  shift
  local time_file
  time_file=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$time_file" "$topofit" bench --no-progress --no-legend "$@" >/dev/null
  read -r seconds kilobytes <"$time_file"
  rm -f "$time_file"
  printf '| %s | `topofit bench %s` | %s s | %s MiB |\n' "$what" "$*" "$seconds" "$((kilobytes / 1024))" >>"$section"
}

{
  echo "<!-- bench-results:begin -->"
  echo "<!-- Generated by scripts/bench-results.sh; do not edit by hand. -->"
  echo
  echo "Generated at commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- bench cli || echo ' (with local changes)'),"
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg)), by"
  echo "\`scripts/bench-results.sh\`. Every table: seeds $seeds (each cell the mean ± the sample standard deviation),"
  echo "one measuring window [0, T) for all policies (T = an hour after the workload's ideal end, per seed),"
  echo "policies \`stock\` (as shipped), \`tuned\` (operator affinity, MostAllocated with GPUs, least-waste) and"
  echo "\`tuned:<chain>\` (the same with CA's other expanders; \`priority\` prefers the NVLink groups), then"
  echo "topofit's \`extender-only\`, \`expander-only\` and \`topofit\`. The first table carries the legend."
  echo
} >"$section"

all=(--baselines stock,sweep --seeds "$seeds")
run "Synthetic default (10,000 pods)" whole "${all[@]}"
run "Alibaba openb, the trace's own times" whole --workload openb "${all[@]}" --no-legend
run "Alibaba openb, the trace's own times, with its CPU-only nodes" whole --workload openb --openb-node-list openb_node_list_all_node.csv "${all[@]}" --no-legend
run "Alibaba openb, the FGD paper's mode (pods in order, one per second)" fill --workload openb --openb-interval 1 "${all[@]}" --no-legend
run "Alibaba openb, the FGD paper's mode, with its CPU-only nodes" fill --workload openb --openb-interval 1 --openb-node-list openb_node_list_all_node.csv "${all[@]}" --no-legend
# No targets: no openb node gives 8 GPUs over NVLink that topofit can see, so its 44 8-GPU pods never
# start, where the stock worlds run them on sets that break the requirement.
run "Alibaba openb, NVLink required for multi-GPU pods" - --workload openb --nv-required "${all[@]}" --no-legend
run "Azure LLM inference 2023" whole --workload azure-llm "${all[@]}" --no-legend
run "Gangs on 8 NVL72 racks (a day of training gangs, wide-EP groups and 1-GPU pods)" whole --workload gangs "${all[@]}" --no-legend
gangs_table=$last_table
run "Synthetic default without the node agent: NVIDIA's device plugin picks the GPU ids" - --gpu-ids device-plugin --baselines tuned --seeds "$seeds" --no-legend
# Issue 37: every pod asks for its GPUs through a ResourceClaim, kube-scheduler's DRA allocator picks them
# (first fit), and topofit runs for claim pods what it runs in a cluster: what its scores add on DRA alone.
run "Synthetic default, GPUs through DRA claims" - --gpu-api dra --baselines stock,tuned --seeds "$seeds" --no-legend
run "Alibaba openb, the trace's own times, GPUs through DRA claims" - --workload openb --gpu-api dra --baselines stock,tuned --seeds "$seeds" --no-legend
run "Azure LLM inference 2023, GPUs through DRA claims" - --workload azure-llm --gpu-api dra --baselines stock,tuned --seeds "$seeds" --no-legend
# What the asking rule buys when users say how long their jobs run (no trace does).
# Issue 34: warm capacity. Static CapacityBuffers an operator sizes by hand (N pods per shape of the bursty
# inference pods) against topofit's adaptive buffer, in the operator's tuned world and in topofit's.
run "Headroom: synthetic default, static buffers against the adaptive one" - --baselines tuned --policies topofit --headroom none,buffer:1,buffer:2,buffer:4,buffer:6,buffer:adaptive:0.5,buffer:adaptive:0.7,buffer:adaptive --seeds "$seeds" --no-legend
run "Headroom: synthetic, bursts of 96 pods on average" - --burst-pods 96 --baselines tuned --policies topofit --headroom none,buffer:2,buffer:4,buffer:8,buffer:12,buffer:adaptive:0.5,buffer:adaptive:0.7,buffer:adaptive --seeds "$seeds" --no-legend
# The synthetic bursts at a rate that follows the day (0.5x..1.5x the mean, then 0.2x..1.8x): what a planner
# that learns from the last hour is for, where a hand-sized buffer is sized for the peak and idles through the
# trough.
run "Headroom: synthetic, inference following the day (--diurnal 0.5)" - --diurnal 0.5 --baselines tuned --policies topofit --headroom none,buffer:1,buffer:2,buffer:4,buffer:6,buffer:adaptive:0.5,buffer:adaptive:0.7,buffer:adaptive --seeds "$seeds" --no-legend
run "Headroom: synthetic, inference following the day (--diurnal 0.8)" - --diurnal 0.8 --baselines tuned --policies topofit --headroom none,buffer:1,buffer:2,buffer:4,buffer:6,buffer:8,buffer:adaptive:0.5,buffer:adaptive:0.7,buffer:adaptive --seeds "$seeds" --no-legend
run "Headroom: Azure LLM inference 2023" - --workload azure-llm --baselines tuned --policies topofit --headroom none,buffer:1,buffer:2,buffer:4,buffer:adaptive:0.5,buffer:adaptive --seeds "$seeds" --no-legend

run "Alibaba openb, the trace's own times, multi-GPU pods declaring their run time" - --workload openb --runtimes-declared --baselines tuned --seeds "$seeds" --no-legend
run "Alibaba openb, the FGD paper's mode, multi-GPU pods declaring their run time" - --workload openb --openb-interval 1 --runtimes-declared --baselines tuned --seeds "$seeds" --no-legend
run "Alibaba openb, the trace's own times, without the node agent" - --workload openb --gpu-ids device-plugin --baselines tuned --seeds "$seeds" --no-legend
# Held out (issue 13: the policies "will also be checked on traces the project has not seen"): workloads no
# decision rule was tried on, judged by the same targets against every tuned configuration. openb's other
# pod lists (the FGD repository's samples stressing GPU sharing and multi-GPU pods), openb with every time
# divided by 4 (jobs short against a node's boot), the synthetic generator's seeds 6-10, and two workloads
# in a stockout.
goal_file=$held_out
held=(--baselines sweep --policies topofit --no-legend)
run "Held out: openb, GPU-sharing sample (gpushare40), the trace's own times" whole --workload openb --openb-pod-list openb_pod_list_gpushare40.csv "${held[@]}" --seeds "$seeds"
run "Held out: openb, GPU-sharing sample (gpushare40), the FGD paper's mode" fill --workload openb --openb-pod-list openb_pod_list_gpushare40.csv --openb-interval 1 "${held[@]}" --seeds "$seeds"
run "Held out: openb, multi-GPU sample (multigpu50, no times: 1 h each), the FGD paper's mode" fill --workload openb --openb-pod-list openb_pod_list_multigpu50.csv --openb-interval 1 "${held[@]}" --seeds "$seeds"
run "Held out: openb, the trace's own times divided by 4" whole --workload openb --openb-compression 4 "${held[@]}" --seeds "$seeds"
run "Held out: synthetic default, seeds 6-10" whole "${held[@]}" --seeds 6-10
# A GPU stockout: one new node in ten never comes up (CA gives it up after 15 minutes and backs off).
run "Held out: synthetic default, 10% of new nodes never come up" whole --provision-failure-rate 0.1 "${held[@]}" --seeds "$seeds"
run "Held out: Azure LLM, 10% of new nodes never come up" whole --workload azure-llm --provision-failure-rate 0.1 "${held[@]}" --seeds "$seeds"
goal_file=$goal

{
  echo "### The targets (issue 31): topofit against the best tuned set-up, seeds $seeds"
  echo
  echo "An operator does not know which of CA's expanders suits their workload, so topofit is held to every"
  echo "tuned configuration (\`tuned\` and each \`tuned:<chain>\`): undominated (no tuned configuration at least 3%"
  echo "lower on idle GPU-hours and on cost at once); idle and cost each at most +5% against the best tuned"
  echo "configuration of each seed (from the table's \"vs best tuned\" block, figure by figure); slowdown GPU-hours"
  echo "below every tuned configuration's; p95 pending of 2-, 4- and 8-GPU pods each at most +5% against \`tuned\`."
  echo "The FGD paper's mode is judged over the fill (first arrival to an hour after the last), the rest over"
  echo "the whole window. After each verdict, the 95% confidence interval of the mean (Student's t over the"
  echo "seeds), \"clear\" when the whole interval is on the verdict's side of the target. Issue 13's idle target"
  echo "(-25% against \`tuned\`) is retired: booting and scale-down delay set a floor placement cannot move."
  echo
  echo '| workload | dominated by | idle vs best tuned | cost vs best tuned | slowdown vs lowest tuned | p95, 2-GPU pods vs tuned | p95, 4-GPU pods | p95, 8-GPU pods |'
  echo '|---|---|---|---|---|---|---|---|'
  cat "$goal"
  echo
  goal_tally "$goal"
  echo
  echo "### The targets (issue 33): gangs on NVL72 racks, seeds $seeds"
  echo
  echo "Against \`tuned\`: the operator's gang scheduler (all or nothing on the Ready nodes, as KAI or Kueue's"
  echo "topology-aware scheduling place) with CA scaling pod by pod. Means over the seeds, from the gangs table."
  echo
  echo '| figure | target | topofit | verdict |'
  echo '|---|---|---|---|'
  gang_targets "$gangs_table"
  echo
  echo "### topofit against every baseline, one by one"
  echo
  echo "Each cell: topofit's change against that baseline, of the seeds' means (whole window)."
  echo "Lower is better in every column."
  echo
  echo '| workload | baseline | idle GPU-hours | cost | p95, 2-GPU pods | p95, 4-GPU pods | p95, 8-GPU pods | slowdown GPU-hours |'
  echo '|---|---|---|---|---|---|---|---|'
  cat "$sweep_file"
  echo
  echo "### Held out: the same targets on workloads no decision rule was tried on"
  echo
  echo "topofit against every tuned configuration, the same targets, from the held-out tables above."
  echo
  echo '| workload | dominated by | idle vs best tuned | cost vs best tuned | slowdown vs lowest tuned | p95, 2-GPU pods vs tuned | p95, 4-GPU pods | p95, 8-GPU pods |'
  echo '|---|---|---|---|---|---|---|---|'
  cat "$held_out"
  echo
  goal_tally "$held_out"
  echo
} >>"$section"

# Ablations (issue 13): topofit with one mechanism of its extender off at a time, against tuned. One row
# per policy of the run's "vs tuned" block: the policies are the header's names after tuned, in order.
ablation_rows() {
  local workload=$1 table=$2
  awk -v workload="$workload" '
    !header && /^ +tuned  / { header = 1; n = split($0, names, /  +/); next }
    /^vs tuned$/ { block = 1; next }
    block && /^$/ { block = 0 }
    block {
      m = split($0, cells, /  +/)
      for (i = 2; i <= m; i++) {
        if (!match(cells[i], /\([-+][0-9.]+%/)) continue
        value[cells[1], i] = substr(cells[i], RSTART + 1, RLENGTH - 1)
      }
    }
    END {
      # names[1] is empty (the label column), names[2] tuned; the vs-tuned cells start at column 2.
      for (i = 3; i <= n; i++) {
        printf "| %s | %s | %s | %s | %s | %s |\n", workload, names[i], value["idle GPU-hours", i - 1],
          value["cost", i - 1], value["pending p95, multi-GPU pods", i - 1], value["slowdown GPU-hours", i - 1]
      }
    }' <<<"$table"
}
{
  echo "### Ablations (issue 13): each mechanism of topofit's extender off in turn, against tuned, seeds $seeds"
  echo
  echo "\`topofit-no-wait\`: pods preferring a topology place now instead of waiting for the capacity grown for"
  echo "them; \`topofit-no-holds\`: new capacity is not held for the pods it was grown for (nobody waits either);"
  echo "\`topofit-no-score\`: the extender's prioritize score has weight 0; \`topofit-no-requests\`: no"
  echo "ProvisioningRequests for pods refused for topology; \`topofit-no-guard\`: pods that got the topology"
  echo "they would refuse or wait for elsewhere do not carry CA's \`safe-to-evict: \"false\"\`. \`extender-only\`"
  echo "and \`expander-only\` in the tables above are the component ablations. \`topofit-affinity\` is an addition,"
  echo "not an ablation: topofit whose pods that require a topology carry the tuned operator's node affinity, as a"
  echo "mutating admission webhook would write it, so that CA's simulation sees the requirement. Each cell: the"
  echo "mean change against \`tuned\`."
  echo
  echo '| workload | policy | idle GPU-hours | cost | p95 pending, multi-GPU pods | slowdown GPU-hours |'
  echo '|---|---|---|---|---|---|'
} >>"$section"
for spec in "Synthetic default:" "openb, trace times:--workload openb" "openb, paper mode:--workload openb --openb-interval 1" \
  "Azure LLM:--workload azure-llm"; do
  title=${spec%%:*}
  read -r -a extra <<<"${spec#*:}"
  echo "bench-results.sh: ablations, $title" >&2
  table=$("$topofit" bench --no-progress --no-legend --baselines tuned --policies topofit,ablations,topofit-affinity --seeds "$seeds" "${extra[@]}")
  ablation_rows "$title" "$table" >>"$section"
done
echo >>"$section"

{
  echo "### Sensitivity: the slowdown model's comm_fraction (synthetic default, tuned vs topofit)"
  echo
  echo "Every multi-GPU pod's share of run time in collectives set to one value (\`--comm-fraction\`); the"
  echo "workload's own values are 0.15 (2-GPU inference), 0.2 (4-, 8-GPU inference) and 0.3 (training)."
  echo
  echo '| comm_fraction | row | tuned | topofit | topofit vs tuned |'
  echo '|---|---|---|---|---|'
} >>"$section"
# A row's cells, separated by |: the label, then one per policy (cells are two or more spaces apart).
cells() { grep -m1 "^$1  " | sed -E 's/  +/|/g'; }
for fraction in 0 0.1 0.3 0.5; do
  echo "bench-results.sh: comm_fraction $fraction" >&2
  table=$("$topofit" bench --no-progress --no-legend --baselines tuned --policies topofit --seeds "$seeds" \
    --comm-fraction "$fraction")
  changes=$(sed -n '/^vs tuned$/,/^$/p' <<<"$table")
  for row in "GPU-hours idle:idle GPU-hours" "cost:cost" "slowdown GPU-hours:" \
    "pending p95, multi-GPU pods:pending p95, multi-GPU pods"; do
    label=${row%%:*} change_label=${row#*:}
    line=$(cells "$label" <<<"$table")
    change=-
    [[ -n $change_label ]] && change=$(cells "$change_label" <<<"$changes" | cut -d'|' -f2)
    printf '| %s | %s | %s | %s | %s |\n' "$fraction" "$label" "$(cut -d'|' -f2 <<<"$line")" \
      "$(cut -d'|' -f3 <<<"$line")" "$change" >>"$section"
  done
done

{
  echo
  echo "### Speed and memory (targets: openb under all policies <= 30 s; 1 M synthetic pods <= 10 min and <= 4 GiB per seed)"
  echo
  echo "One seed, all eight policies, two replays at a time (\`--jobs\` default: one per core); wall time and"
  echo "peak RSS from \`/usr/bin/time\`."
  echo
  echo '| run | command | wall time | peak RSS |'
  echo '|---|---|---|---|'
} >>"$section"
measure "openb, trace times" --workload openb --baselines stock,sweep
measure "openb, NVLink required" --workload openb --nv-required --baselines stock,sweep
measure "1,000,000 synthetic pods" --pods 1000000 --baselines stock,sweep
echo "<!-- bench-results:end -->" >>"$section"

# Splice: the lines before the begin marker, the new section, the lines after the end marker.
{
  sed '/<!-- bench-results:begin -->/,$d' "$results"
  cat "$section"
  sed '1,/<!-- bench-results:end -->/d' "$results"
} >"$results.new"
mv "$results.new" "$results"
echo "bench-results.sh: wrote $results" >&2
