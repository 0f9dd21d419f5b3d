# A stand-in Kubernetes API server for scripts/extender-rss.sh (python3's standard library only): NODES GPU
# nodes and PODS bound pods, served as LIST (paginated with limit/continue) and WATCH (chunked JSON lines,
# bookmarks) of /api/v1/nodes and /api/v1/pods, with the field selectors topofit's watches send
# (spec.nodeName, spec.schedulerName, status.phase; = and !=). Every other path is a 404 Status, as for an
# API group the cluster does not serve. Once POST /stand-in/churn arrives, CHURN pods a second are deleted
# and replaced by new ones on the same node holding the same GPUs (new names and uids), so a soak sees the
# steady turnover of a busy cluster rather than a frozen one.
#
#   python3 extender-rss.py PORT NODES PODS CHURN
# With `drive` first, it is the scheduler's side instead: a NodeNames /filter naming every node for a 2-GPU
# pod, then /prioritize on the nodes that passed, twice a second for SECONDS on one keep-alive connection;
# prints the count, the errors, and p50/p99 of each verb in ms.
#   python3 extender-rss.py drive EXTENDER_PORT NODES SECONDS
import http.client
import http.server
import json
import sys
import threading
import time
import urllib.parse

GPUS_PER_NODE = 8

lock = threading.Condition()
revision = 1
nodes, pods = {}, {}  # name -> object (pods keyed "namespace/name")
events = []           # (revision, kind, type, object): the history watches replay from
serial = 0


def stamp(obj):
    global revision
    revision += 1
    obj["metadata"]["resourceVersion"] = str(revision)
    return revision


def node_name(i):
    return f"ip-10-{i // 65536}-{i // 256 % 256}-{i % 256}.us-west-2.compute.internal"


def make_node(i):
    name = node_name(i)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"node-uid-{i}",
                         "labels": {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "p4d.24xlarge",
                                    "topology.kubernetes.io/zone": f"us-west-2{'abc'[i % 3]}",
                                    "eks.amazonaws.com/nodegroup": "gpu-p4d-24xlarge",
                                    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "8"}},
            "spec": {"providerID": f"aws:///us-west-2a/i-0{i:016x}"},
            "status": {"capacity": {"cpu": "96", "memory": "1180591Mi", "nvidia.com/gpu": "8", "pods": "250"},
                       "allocatable": {"cpu": "95690m", "memory": "1167891Mi", "nvidia.com/gpu": "8", "pods": "250"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def make_pod(node, gpu_ids):
    """A bound, running pod; holding `gpu_ids` (a list) on `node` when not empty."""
    global serial
    serial += 1
    name = f"{'train' if gpu_ids else 'web'}-{serial}"
    resources = {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"memory": "16Gi"}}
    annotations = {"kubectl.kubernetes.io/default-container": "main"}
    if gpu_ids:
        resources["requests"]["nvidia.com/gpu"] = str(len(gpu_ids))
        resources["limits"]["nvidia.com/gpu"] = str(len(gpu_ids))
        annotations["topofit.io/gpu-ids"] = ",".join(str(g) for g in gpu_ids)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"pod-uid-{serial}",
                         "labels": {"app": name.split("-")[0]}, "annotations": annotations},
            "spec": {"nodeName": node, "schedulerName": "topofit-scheduler",
                     "containers": [{"name": "main", "image": "registry.example.com/app:v1.2.3",
                                     "resources": resources}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def key(pod):
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def populate():
    # GPU pods first, two GPUs each, until half the GPUs are held; the rest of PODS hold none.
    node_names = []
    for i in range(NODES):
        node = make_node(i)
        stamp(node)
        nodes[node["metadata"]["name"]] = node
        node_names.append(node["metadata"]["name"])
    gpu_pods = min(PODS, NODES * GPUS_PER_NODE // 4)
    for i in range(PODS):
        if i < gpu_pods:
            node, slot = node_names[i % NODES], i // NODES
            pod = make_pod(node, [2 * slot, 2 * slot + 1])
        else:
            pod = make_pod(node_names[i % NODES], [])
        stamp(pod)
        pods[key(pod)] = pod


def churn_forever():
    while True:
        time.sleep(1)
        with lock:
            victims = list(pods.keys())[:CHURN]
            for victim in victims:
                old = pods.pop(victim)
                rev = stamp(old)
                events.append((rev, "pods", "DELETED", old))
                ids = old["metadata"]["annotations"].get("topofit.io/gpu-ids")
                new = make_pod(old["spec"]["nodeName"], [int(g) for g in ids.split(",")] if ids else [])
                rev = stamp(new)
                pods[key(new)] = new
                events.append((rev, "pods", "ADDED", new))
            lock.notify_all()


def field(obj, path):
    value = obj
    for part in path.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return value


def selected(obj, selector):
    for term in filter(None, selector.split(",")):
        negated = "!=" in term
        path, want = term.split("!=" if negated else "=", 1)
        if (field(obj, path) == want) == negated:
            return False
    return True


class Api(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def chunk(self, data):
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        kind = {"/api/v1/nodes": "nodes", "/api/v1/pods": "pods"}.get(url.path)
        if kind is None:
            return self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                    "reason": "NotFound", "code": 404})
        selector = query.get("fieldSelector", "")
        if query.get("watch") in ("true", "1"):
            return self.watch(kind, int(query.get("resourceVersion") or 0), selector,
                              int(query.get("timeoutSeconds", "300")))
        limit = int(query.get("limit", "0") or 0)
        offset, list_rev = 0, None
        if query.get("continue"):
            list_rev, offset = (int(p) for p in query["continue"].split(":"))
        with lock:
            store = nodes if kind == "nodes" else pods
            items = [o for _, o in sorted(store.items()) if selected(o, selector)]
            list_rev = list_rev or revision
        page = items[offset:offset + limit] if limit > 0 else items[offset:]
        metadata = {"resourceVersion": str(list_rev)}
        if limit > 0 and offset + limit < len(items):
            metadata["continue"] = f"{list_rev}:{offset + limit}"
        self.reply(200, {"kind": "NodeList" if kind == "nodes" else "PodList", "apiVersion": "v1",
                         "metadata": metadata, "items": page})

    def watch(self, kind, since, selector, timeout):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        deadline = time.time() + timeout
        sent = since
        try:
            while time.time() < deadline:
                with lock:
                    lock.wait(timeout=min(5, max(0.01, deadline - time.time())))
                    fresh = [e for e in events if e[0] > sent and e[1] == kind]
                    current = revision
                for rev, _, kind_of_event, obj in fresh:
                    if selected(obj, selector):
                        self.chunk(json.dumps({"type": kind_of_event, "object": obj}).encode() + b"\n")
                    sent = rev
                bookmark = {"kind": "Node" if kind == "nodes" else "Pod", "apiVersion": "v1",
                            "metadata": {"resourceVersion": str(current)}}
                self.chunk(json.dumps({"type": "BOOKMARK", "object": bookmark}).encode() + b"\n")
                sent = max(sent, current)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        if self.path == "/stand-in/churn":
            threading.Thread(target=churn_forever, daemon=True).start()
            return self.reply(200, {"churn": CHURN})
        self.reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})

    do_PUT = do_PATCH = do_DELETE = do_POST

    def log_message(self, *args):
        pass


def drive(port, node_count, seconds):
    names = [node_name(i) for i in range(node_count)]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies = {"filter": [], "prioritize": []}
    errors, cycle = 0, 0
    end = time.time() + seconds
    while time.time() < end:
        cycle += 1
        pod = {"metadata": {"name": f"probe-{cycle}", "namespace": "default", "uid": f"probe-uid-{cycle}"},
               "spec": {"schedulerName": "topofit-scheduler",
                        "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}
        passed = names
        for verb in ("filter", "prioritize"):
            body = json.dumps({"Pod": pod, "NodeNames": passed}).encode()
            start = time.time()
            try:
                conn.request("POST", f"/{verb}", body, {"Content-Type": "application/json"})
                reply = conn.getresponse()
                data = reply.read()
                ok = reply.status == 200
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                ok, data = False, b""
            latencies[verb].append((time.time() - start) * 1000)
            if not ok:
                errors += 1
                break
            if verb == "filter":
                result = json.loads(data)
                failed = set(result.get("FailedNodes") or {}) | set(result.get("FailedAndUnresolvableNodes") or {})
                passed = [n for n in (result.get("NodeNames") or []) if n not in failed]
        time.sleep(max(0.0, 0.5 - (time.time() - start)))
    for verb, values in latencies.items():
        values.sort()
        if values:
            print(f"{verb}: {len(values)} requests, p50 {values[len(values) // 2]:.1f} ms, "
                  f"p99 {values[min(len(values) - 1, len(values) * 99 // 100)]:.1f} ms")
    print(f"errors: {errors}")
    return 1 if errors else 0


if sys.argv[1] == "drive":
    sys.exit(drive(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
PORT, NODES, PODS, CHURN = (int(a) for a in sys.argv[1:5])
populate()
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Api).serve_forever()
