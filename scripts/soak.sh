#!/usr/bin/env bash
# Soak: `topofit serve` on loopback under scheduling cycles and BestOptions calls (bench/soak_driver.cc)
# for SECONDS (default 600), with a memory ceiling. Bind reaches a stand-in API server on loopback that
# keeps the pods the driver creates (bind reads the pod it authorises from there) and accepts every Binding
# and annotation patch (python3's standard library; nothing else is reached).
#   scripts/soak.sh [SECONDS] [CEILING_MB]     (defaults 600 and 512; build with scripts/build.sh first)
# Prints the driver's figures (requests, errors, p50/p99/max per kind) and serve's RSS at the start, the
# peak and the end; exits 1 on any error, on RSS above the ceiling (serve is then stopped) or if serve dies.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
ceiling_mb=${2:-512}
[[ $seconds =~ ^[1-9][0-9]*$ && $ceiling_mb =~ ^[1-9][0-9]*$ ]] ||
  { echo "usage: soak.sh [SECONDS] [CEILING_MB] (positive integers; the build directory is \$BUILD_DIR)" >&2; exit 2; }
build=${BUILD_DIR:-$root/build}
# shellcheck source=scripts/loopback.sh
. "$root/scripts/loopback.sh"
loopback_workspace
api_port=$(free_port)
cat >"$work/api.py" <<'PY'
import http.server, json, sys, threading
# The pods the driver created (POST .../pods) and has not deleted: bind authorises against the stored pod.
pods, lock = {}, threading.Lock()
class Api(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    version = 0
    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))
    def pod_key(self):  # /api/v1/namespaces/NS/pods/NAME[/...]
        parts = self.path.split("?")[0].split("/")
        return (parts[4], parts[6]) if len(parts) > 6 and parts[5] == "pods" else None
    def do_POST(self):  # a pod created, or its Binding
        body = self.body()
        if self.path.endswith("/pods"):
            pod = json.loads(body)
            with lock:
                pods[(pod["metadata"]["namespace"], pod["metadata"]["name"])] = pod
            self.reply(201, pod)
        else:
            self.reply(201, {"kind": "Status", "status": "Success"})
    def do_PATCH(self):  # annotations: the pod back with a new resourceVersion
        self.body()
        Api.version += 1
        namespace, name = self.pod_key()
        self.reply(200, {"kind": "Pod", "metadata": {"namespace": namespace, "name": name,
                                                     "resourceVersion": str(Api.version)}})
    def do_GET(self):
        with lock:
            pod = pods.get(self.pod_key())
        if pod is None:
            self.reply(404, {"kind": "Status", "reason": "NotFound", "code": 404})
        else:
            self.reply(200, pod)
    def do_DELETE(self):
        with lock:
            gone = pods.pop(self.pod_key(), None)
        self.reply(200 if gone else 404, {"kind": "Status", "code": 200 if gone else 404})
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Api).serve_forever()
PY
python3 "$work/api.py" "$api_port" &
pids+=($!)
write_kubeconfig "$work/kubeconfig" "http://127.0.0.1:$api_port" soak
echo "soak-admin-token" >"$work/admin-token"
port=$(free_port); grpc_port=$(free_port); ops_port=$(free_port)
"$build/cli/topofit" serve --address=127.0.0.1 --port="$port" --ops-port="$ops_port" --grpc-port="$grpc_port" \
  --insecure --kubeconfig="$work/kubeconfig" --admin-token-file="$work/admin-token" --log-level=warn \
  >"$work/serve.log" 2>&1 &
serve=$!
pids+=($serve)
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$ops_port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$serve/status"; }
start_rss=$(rss_mb)
"$build/bench/soak_driver" --port="$port" --grpc-port="$grpc_port" --api-port="$api_port" --admin-token=soak-admin-token \
  --seconds="$seconds" >"$work/driver.out" 2>&1 &
driver=$!
pids+=($driver)
peak_rss=$start_rss
status=0
while kill -0 "$driver" 2>/dev/null; do
  if ! kill -0 "$serve" 2>/dev/null; then echo "soak: serve died" >&2; status=1; break; fi
  rss=$(rss_mb)
  peak_rss=$(awk -v a="$peak_rss" -v b="$rss" 'BEGIN {print (b > a ? b : a)}')
  if awk -v r="$rss" -v c="$ceiling_mb" 'BEGIN {exit !(r > c)}'; then
    echo "soak: serve's RSS ${rss} MB is above the ${ceiling_mb} MB ceiling" >&2
    status=1
    break
  fi
  sleep 2
done
wait "$driver" || status=1
end_rss=$(rss_mb 2>/dev/null || echo "?")
cat "$work/driver.out"
echo "serve RSS: start ${start_rss} MB, peak ${peak_rss} MB, end ${end_rss} MB (ceiling ${ceiling_mb} MB), ${seconds}s"
echo "serve log lines at warn or above: $(grep -ci 'warn\|error' "$work/serve.log" || true)"
# By event (text format: time, level, event, fields): which warnings, how many.
awk '$2 ~ /^(warn|warning|error|critical)$/ {n[$3]++} END {for (e in n) printf "  %s %d\n", e, n[e]}' "$work/serve.log" | sort
[ "$status" -eq 0 ] || tail -20 "$work/serve.log" >&2
exit $status
