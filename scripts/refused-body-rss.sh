#!/usr/bin/env bash
# Peak memory of `topofit extender` for a refused /filter body (issue 38): for each hostile body, a fresh
# extender on loopback, its RSS high-water mark (VmHWM) read once it is ready and again after the one
# request, and the growth as a multiple of the body. Nothing is reached beyond loopback: the kubeconfig
# names a port no one listens on (a filter never calls the API).
#   scripts/refused-body-rss.sh [MB]     (default 28; build with scripts/build.sh first)
# Bodies: MB of nested arrays ([[[...]]]) and MB of a flat array of zeros ([0,0,...]).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mb=${1:-28}
[[ $mb =~ ^[1-9][0-9]*$ ]] || { echo "usage: refused-body-rss.sh [MB] (the build directory is \$BUILD_DIR)" >&2; exit 2; }
build=${BUILD_DIR:-$root/build}
work=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=scripts/loopback.sh
. "$root/scripts/loopback.sh"
write_kubeconfig "$work/kubeconfig" "http://127.0.0.1:$(free_port)" none
bytes=$((mb * 1000 * 1000))
python3 - "$bytes" "$work" <<'PY'
import sys
n, work = int(sys.argv[1]), sys.argv[2]
open(f"{work}/nested.json", "w").write("[" * (n // 2) + "]" * (n // 2))
open(f"{work}/flat.json", "w").write("[" + "0," * (n // 2 - 1) + "0]")
PY
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$server/status"; }
for body in nested flat; do
  port=$(free_port)
  ops_port=$(free_port)
  "$build/cli/topofit" extender --address=127.0.0.1 --port="$port" --ops-port="$ops_port" \
    --kubeconfig="$work/kubeconfig" --log-level=error >"$work/$body.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$ops_port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  before=$(hwm_kb)
  size=$(stat -c %s "$work/$body.json")
  answer=$(curl -s -o "$work/$body.reply" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$work/$body.json" "http://127.0.0.1:$port/filter")
  after=$(hwm_kb)
  awk -v b="$body" -v s="$size" -v a="$answer" -v r="$(head -c 120 "$work/$body.reply")" -v x="$before" -v y="$after" \
    'BEGIN {printf "%-6s body %.1f MB: HTTP %s %s\n       VmHWM %.1f -> %.1f MiB, growth %.1f MiB = %.2f x the body\n",
            b, s / 1e6, a, r, x / 1024, y / 1024, (y - x) / 1024, (y - x) * 1024 / s}'
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=
done
