#!/usr/bin/env bash
# The extender's memory at scale (issue 36): `topofit extender --live-state` watching a stand-in API server
# (scripts/extender-rss.py) that holds NODES GPU nodes and PODS bound pods. Prints the RSS once both watches
# have listed everything (and the high-water mark of the listing), then every 30 s of a soak of SECONDS in which CHURN pods a second are replaced
# (watch events) and a NodeNames filter + prioritize naming every node runs twice a second; then the
# driver's figures and the change from the synced RSS to the end. Exits 1 if the extender dies, the driver
# saw an error, or the watches never sync.
#   scripts/extender-rss.sh [NODES] [PODS] [SECONDS] [CHURN]    (defaults 5000 50000 600 50)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nodes=${1:-5000}
pods=${2:-50000}
seconds=${3:-600}
churn=${4:-50}
for n in "$nodes" "$pods" "$seconds" "$churn"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "usage: extender-rss.sh [NODES] [PODS] [SECONDS] [CHURN] (integers)" >&2; exit 2; }
done
build=${BUILD_DIR:-$root/build}
# shellcheck source=scripts/loopback.sh
. "$root/scripts/loopback.sh"
loopback_workspace
api_port=$(free_port)
python3 "$root/scripts/extender-rss.py" "$api_port" "$nodes" "$pods" "$churn" &
pids+=($!)
write_kubeconfig "$work/kubeconfig" "http://127.0.0.1:$api_port" rss
port=$(free_port); ops_port=$(free_port)
"$build/cli/topofit" extender --address=127.0.0.1 --port="$port" --ops-port="$ops_port" \
  --kubeconfig="$work/kubeconfig" --live-state --log-level=warn >"$work/extender.log" 2>&1 &
extender=$!
pids+=($extender)

rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$extender/status"; }
hwm_mb() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$extender/status"; }  # the peak so far
synced() {
  curl -sf "http://127.0.0.1:$ops_port/metrics" 2>/dev/null |
    awk '/^topofit_watch_synced\{.*resource="(nodes|bound_pods)"/ && $2 == 1 {n++} END {exit !(n >= 2)}'
}
started=$(date +%s)
until synced; do
  kill -0 "$extender" 2>/dev/null || { echo "extender-rss: the extender died" >&2; tail -20 "$work/extender.log" >&2; exit 1; }
  (( $(date +%s) - started < 600 )) || { echo "extender-rss: the watches did not sync in 10 minutes" >&2; exit 1; }
  sleep 1
done
echo "synced ${nodes} nodes and ${pods} bound pods in $(( $(date +%s) - started )) s"
sleep 5  # the list's transient memory returned
synced_rss=$(rss_mb)
echo "RSS at sync: ${synced_rss} MB (high-water mark while listing: $(hwm_mb) MB)"
curl -sf -X POST "http://127.0.0.1:$api_port/stand-in/churn" >/dev/null
python3 "$root/scripts/extender-rss.py" drive "$port" "$nodes" "$seconds" >"$work/driver.out" 2>&1 &
driver=$!
pids+=($driver)
status=0
peak=$synced_rss
elapsed=0
while kill -0 "$driver" 2>/dev/null; do
  sleep 5
  elapsed=$((elapsed + 5))
  kill -0 "$extender" 2>/dev/null || { echo "extender-rss: the extender died" >&2; status=1; break; }
  rss=$(rss_mb)
  peak=$(awk -v a="$peak" -v b="$rss" 'BEGIN {print (b > a ? b : a)}')
  (( elapsed % 30 == 0 )) && echo "  ${elapsed} s: RSS ${rss} MB"
done
wait "$driver" || status=1
end_rss=$(rss_mb 2>/dev/null || echo "?")
cat "$work/driver.out"
echo "RSS: ${synced_rss} MB at sync, peak ${peak} MB after it, ${end_rss} MB at the end of ${seconds} s" \
  "($(awk -v a="$synced_rss" -v b="$end_rss" 'BEGIN {printf "%+.1f", b - a}') MB)"
echo "extender log lines at warn or above: $(grep -ci 'warn\|error' "$work/extender.log" || true)"
[ "$status" -eq 0 ] || tail -20 "$work/extender.log" >&2
exit $status
