#!/usr/bin/env bash
# CTest manifests.kustomize: renders manifests/ with `kubectl kustomize` and checks what came out.
# Client side only, no cluster: nothing here runs `kubectl apply` (not even --dry-run=client, which still
# needs an API server for discovery), and KUBECONFIG points at an empty file.
#
# usage: kustomize_test.sh <manifests dir>      exit 0 pass, 1 fail, 77 skipped (no kubectl)
#
# Checks: the base renders without the generated manifests/tls/; the kinds and counts; the key fields of the
# KubeSchedulerConfiguration (grep always; with PyYAML also a strict parse against the upstream v1 field
# names, the exact RBAC rules, and the wiring between objects, on the base and on every overlay); the
# cert-manager overlay; the cluster-autoscaler component on a stock CA Deployment; the node-agent,
# pod-monitor and webhook components; and, with openssl, scripts/make-tls.sh into a temporary directory plus
# the overlay it writes (with and without the webhook).
set -uo pipefail

dir=${1:?usage: kustomize_test.sh <manifests dir>}
if ! command -v kubectl >/dev/null 2>&1; then
  echo "skipped: kubectl not found"
  exit 77
fi
dir=$(cd "$dir" && pwd)
scripts=$(cd "$dir/../scripts" 2>/dev/null && pwd || true)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/kubeconfig"
export KUBECONFIG=$tmp/kubeconfig

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# The base must not need the generated (git-ignored) manifests/tls/: render a copy without it.
cp -r "$dir" "$tmp/manifests"
rm -rf "$tmp/manifests/tls"
render=$tmp/rendered.yaml
if ! kubectl kustomize "$tmp/manifests" >"$render" 2>"$tmp/err"; then
  cat "$tmp/err"
  fail "kubectl kustomize manifests/ failed"
  exit 1
fi
ok "kubectl kustomize manifests/ renders ($(grep -c '^kind:' "$render") objects) without manifests/tls/"

expect_kind() { # kind count
  local n
  n=$(grep -c "^kind: $1\$" "$render")
  if [[ $n == "$2" ]]; then ok "$2 x $1"; else fail "expected $2 x kind $1, got $n"; fi
}
expect_kind Namespace 1
expect_kind ServiceAccount 2
expect_kind ClusterRole 2
expect_kind ClusterRoleBinding 4
expect_kind Role 3
expect_kind RoleBinding 4
expect_kind ConfigMap 1
expect_kind Deployment 2
expect_kind Service 1
expect_kind PodDisruptionBudget 2
expect_kind NetworkPolicy 2
expect_kind Secret 0 # referenced by name, made by make-tls.sh or cert-manager
expect_kind Pod 0    # examples/ stays out of the kustomization

expect_line() { # fixed string, as a whole line modulo indentation and a leading "- "
  if grep -Eq "^[[:space:]]*(- )?$(printf '%s' "$1" | sed 's/[][\.*^$/]/\\&/g')[[:space:]]*\$" "$render"; then
    ok "has '$1'"
  else
    fail "missing line '$1'"
  fi
}
expect_line "kind: KubeSchedulerConfiguration"
expect_line "apiVersion: kubescheduler.config.k8s.io/v1"
expect_line "schedulerName: topofit"
expect_line "leaderElect: true"
expect_line "resourceNamespace: topofit-system"
expect_line "resourceName: topofit-scheduler"
expect_line "urlPrefix: http://127.0.0.1:8443"
expect_line "filterVerb: filter"
expect_line "prioritizeVerb: prioritize"
expect_line "bindVerb: bind"
expect_line "preemptVerb: preempt"
expect_line "weight: 5"
expect_line "enableHTTPS: false"
expect_line "httpTimeout: 5s"
expect_line "nodeCacheCapable: true"
expect_line "name: nvidia.com/gpu"
expect_line "ignoredByScheduler: false"
expect_line "ignorable: false"
expect_line "--config=/etc/kubernetes/scheduler/config.yaml"
expect_line "name: system:kube-scheduler"
expect_line "name: system:volume-scheduler"
expect_line "name: extension-apiserver-authentication-reader"
expect_line "pods/binding"
expect_line "provisioningrequests"
expect_line "leases"
expect_line "image: ghcr.io/topofit/topofit:v0.1.0"
if grep -Eq '^[[:space:]]*image: registry\.k8s\.io/kube-scheduler:v1\.33\.[0-9]+$' "$render"; then
  ok "stock kube-scheduler image v1.33.x"
else
  fail "kube-scheduler image is not registry.k8s.io/kube-scheduler:v1.33.<patch>"
fi

# Strict checks with PyYAML, when it is importable: on the base here, on each overlay below.
strict=""
if python3 -c 'import yaml' 2>/dev/null; then
  strict=$tmp/strict.py
  cat >"$strict" <<'PY'
import os, sys, yaml

errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)
    return cond

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
objs = {}
for d in docs:
    objs[(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])] = d
def get(kind, ns, name):
    o = objs.get((kind, ns, name))
    check(o is not None, f"no {kind} {ns}/{name}")
    return o or {}

# --- KubeSchedulerConfiguration: parse, and only upstream v1 field names (kube-scheduler decodes strictly).
cms = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("topofit-scheduler-config")]
check(len(cms) == 1, "one ConfigMap topofit-scheduler-config*")
cm = cms[0] if cms else {"metadata": {"name": ""}, "data": {}}
raw = cm.get("data", {}).get("config.yaml")
check(raw is not None, "ConfigMap has key config.yaml")
try:
    cfg = yaml.safe_load(raw or "") or {}
except yaml.YAMLError as e:
    errors.append(f"config.yaml does not parse: {e}")
    cfg = {}
print("config.yaml parses as YAML")

def only_keys(obj, allowed, where):
    extra = set(obj) - set(allowed)
    check(not extra, f"{where}: keys not in kubescheduler.config.k8s.io/v1: {sorted(extra)}")

TOP = {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "healthzBindAddress",
       "metricsBindAddress", "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
       "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive"}
LEADER = {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName",
          "resourceNamespace"}
EXTENDER = {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
            "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"}
TLS = {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
MANAGED = {"name", "ignoredByScheduler"}

only_keys(cfg, TOP, "config")
check(cfg.get("apiVersion") == "kubescheduler.config.k8s.io/v1", "config apiVersion")
check(cfg.get("kind") == "KubeSchedulerConfiguration", "config kind")
le = cfg.get("leaderElection", {})
only_keys(le, LEADER, "leaderElection")
check(le.get("leaderElect") is True, "leaderElect true")
check(le.get("resourceNamespace") == "topofit-system", "lease namespace topofit-system")
check(le.get("resourceName") == "topofit-scheduler", "lease name topofit-scheduler")
check([p.get("schedulerName") for p in cfg.get("profiles", [])] == ["topofit"], "one profile, topofit")
exts = cfg.get("extenders", [])
check(len(exts) == 1, "one extender")
ext = exts[0] if exts else {}
only_keys(ext, EXTENDER, "extenders[0]")
only_keys(ext.get("tlsConfig", {}), TLS, "extenders[0].tlsConfig")
for m in ext.get("managedResources", []):
    only_keys(m, MANAGED, "extenders[0].managedResources[]")
want = {"urlPrefix": "http://127.0.0.1:8443", "filterVerb": "filter",
        "prioritizeVerb": "prioritize", "bindVerb": "bind", "preemptVerb": "preempt", "weight": 5,
        "enableHTTPS": False, "httpTimeout": "5s", "nodeCacheCapable": True, "ignorable": False,
        "managedResources": [{"name": "nvidia.com/gpu", "ignoredByScheduler": False}]}
for k, v in want.items():
    check(k in ext and ext[k] == v, f"extender {k}: want {v!r}, got {ext.get(k)!r}")
check("tlsConfig" not in ext, "no tlsConfig: the extender is on loopback")

# --- RBAC, exactly.
def triples(rules):
    out = set()
    for r in rules:
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    out.add((g, res, v, tuple(r.get("resourceNames", []))))
    return out
def T(groups, resources, verbs, names=()):
    return {(g, r, v, tuple(names)) for g in groups for r in resources for v in verbs}

cr = get("ClusterRole", None, "topofit-extender")
want_cr = (T([""], ["pods"], ["get", "list", "watch", "patch"]) | T([""], ["pods/binding"], ["create"])
           | T([""], ["nodes"], ["get", "list", "watch"])
           | T(["autoscaling.x-k8s.io"], ["provisioningrequests"], ["get", "create", "delete"])
           | T([""], ["podtemplates"], ["get", "list", "watch", "create", "delete"])
           | T(["autoscaling.x-k8s.io"], ["capacitybuffers"], ["list", "watch"])
           | T(["scheduling.k8s.io"], ["podgroups", "workloads"], ["get"])
           | T(["", "events.k8s.io"], ["events"], ["create", "patch"]))
got = triples(cr.get("rules", []))
check(got == want_cr, f"ClusterRole topofit-extender: extra {sorted(got - want_cr)}, missing {sorted(want_cr - got)}")
cr = get("ClusterRole", None, "topofit-expander")
got = triples(cr.get("rules", []))
want_cr = T([""], ["pods"], ["get", "list", "watch", "patch"]) | T(["events.k8s.io"], ["events"], ["create", "patch"])
check(got == want_cr, f"ClusterRole topofit-expander: extra {sorted(got - want_cr)}, missing {sorted(want_cr - got)}")
r = get("Role", "topofit-system", "topofit-scheduler-leader-election")
check(triples(r.get("rules", [])) == (T(["coordination.k8s.io"], ["leases"], ["create"])
      | T(["coordination.k8s.io"], ["leases"], ["get", "update"], ["topofit-scheduler"])),
      "Role topofit-scheduler-leader-election: leases create, get/update of topofit-scheduler")
# The node group templates' ConfigMap (--ledger=api): the expander creates and patches it, the extender reads it.
r = get("Role", "topofit-system", "topofit-expander-node-groups")
check(triples(r.get("rules", [])) == (T([""], ["configmaps"], ["create"])
      | T([""], ["configmaps"], ["get", "patch"], ["topofit-node-groups"])),
      "Role topofit-expander-node-groups: configmaps create, get/patch of topofit-node-groups")
r = get("Role", "topofit-system", "topofit-extender-node-groups")
check(triples(r.get("rules", [])) == T([""], ["configmaps"], ["get"], ["topofit-node-groups"]),
      "Role topofit-extender-node-groups: get of topofit-node-groups")
for d in docs:
    if "rules" in d:
        for rule in d["rules"]:
            check("*" not in rule.get("verbs", []) + rule.get("resources", []) + rule.get("apiGroups", []),
                  f"{d['kind']} {d['metadata']['name']}: no wildcards")

def bound(kind, ns, name, role_kind, role, sa):
    b = get(kind, ns, name)
    check(b.get("roleRef", {}) == {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
          f"{kind} {name} -> {role_kind} {role}")
    check(b.get("subjects") == [{"kind": "ServiceAccount", "name": sa, "namespace": "topofit-system"}],
          f"{kind} {name} subject {sa}")
bound("ClusterRoleBinding", None, "topofit-scheduler-as-kube-scheduler", "ClusterRole", "system:kube-scheduler", "topofit-scheduler")
bound("ClusterRoleBinding", None, "topofit-scheduler-as-volume-scheduler", "ClusterRole", "system:volume-scheduler", "topofit-scheduler")
bound("RoleBinding", "topofit-system", "topofit-scheduler-leader-election", "Role", "topofit-scheduler-leader-election", "topofit-scheduler")
bound("RoleBinding", "topofit-system", "topofit-expander-node-groups", "Role", "topofit-expander-node-groups", "topofit-expander")
bound("RoleBinding", "topofit-system", "topofit-extender-node-groups", "Role", "topofit-extender-node-groups", "topofit-scheduler")
bound("RoleBinding", "kube-system", "topofit-scheduler-extension-apiserver-authentication-reader", "Role",
      "extension-apiserver-authentication-reader", "topofit-scheduler")
# The extender container runs under the scheduler pod's service account.
bound("ClusterRoleBinding", None, "topofit-extender", "ClusterRole", "topofit-extender", "topofit-scheduler")
bound("ClusterRoleBinding", None, "topofit-expander", "ClusterRole", "topofit-expander", "topofit-expander")
for kind, name in (("ServiceAccount", "topofit-scheduler"), ("ServiceAccount", "topofit-expander")):
    get(kind, "topofit-system", name)
get("Namespace", None, "topofit-system")

# --- Deployments and their wiring.
TOPOFIT_IMAGE = "ghcr.io/topofit/topofit:v0.1.0"  # manifests/base/kustomization.yaml images:, the one place
def containers(dep):
    return {c["name"]: c for c in dep.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])}
def volumes(dep):
    return {v["name"]: v for v in dep["spec"]["template"]["spec"].get("volumes", [])}
def mounts(c):
    return {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
def hardened(dep):
    name = dep["metadata"]["name"]
    pod = dep["spec"]["template"]["spec"]
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True, f"{name}: runAsNonRoot")
    for cname, c in containers(dep).items():
        sc = c.get("securityContext", {})
        check(sc.get("readOnlyRootFilesystem") is True, f"{name}/{cname}: readOnlyRootFilesystem")
        check(sc.get("allowPrivilegeEscalation") is False, f"{name}/{cname}: allowPrivilegeEscalation false")
        check(sc.get("capabilities", {}).get("drop") == ["ALL"], f"{name}/{cname}: drop ALL")
        res = c.get("resources", {})
        check({"cpu", "memory"} <= set(res.get("requests", {})) and "memory" in res.get("limits", {}),
              f"{name}/{cname}: resource requests and limits")
def spread(dep):
    """One replica per node: required or preferred pod anti-affinity on the hostname, or a hostname spread."""
    pod = dep["spec"]["template"]["spec"]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    anti = pod.get("affinity", {}).get("podAntiAffinity", {})
    terms = anti.get("requiredDuringSchedulingIgnoredDuringExecution", []) + [
        t.get("podAffinityTerm", {}) for t in anti.get("preferredDuringSchedulingIgnoredDuringExecution", [])]
    def selects(sel):
        return all(labels.get(k) == v for k, v in sel.get("matchLabels", {}).items()) and sel.get("matchLabels")
    by_anti = any(t.get("topologyKey") == "kubernetes.io/hostname" and selects(t.get("labelSelector", {})) for t in terms)
    by_spread = any(c.get("topologyKey") == "kubernetes.io/hostname" and c.get("whenUnsatisfiable") == "DoNotSchedule"
                    and selects(c.get("labelSelector", {})) for c in pod.get("topologySpreadConstraints", []))
    check(by_anti, f"{dep['metadata']['name']}: pod anti-affinity on kubernetes.io/hostname")
    return by_anti or by_spread
def budget(dep):
    labels = dep["spec"]["template"]["metadata"]["labels"]
    pdbs = [d for d in docs if d["kind"] == "PodDisruptionBudget" and
            all(labels.get(k) == v for k, v in d["spec"].get("selector", {}).get("matchLabels", {}).items())]
    check(len(pdbs) == 1, f"{dep['metadata']['name']}: one PodDisruptionBudget selects its pods")
    if pdbs:
        p = pdbs[0]["spec"]
        replicas = dep["spec"].get("replicas", 1)
        allowed = p["maxUnavailable"] if "maxUnavailable" in p else replicas - p.get("minAvailable", replicas)
        check(0 < allowed < replicas, f"{dep['metadata']['name']}: the PDB lets one go and keeps one ({p})")
def ready_for_all(dep, c):
    """Every replica Ready: no leader election in topofit (readiness does not follow a Lease)."""
    args = c.get("command", []) + c.get("args", [])
    check("--leader-elect" not in args, f"{dep['metadata']['name']}/{c['name']}: no --leader-elect (all replicas Ready)")
    check(dep["spec"].get("strategy", {}).get("type", "RollingUpdate") == "RollingUpdate",
          f"{dep['metadata']['name']}: RollingUpdate")

sched = get("Deployment", "topofit-system", "topofit-scheduler")
if sched:
    cs = containers(sched)
    check(set(cs) == {"kube-scheduler", "topofit-extender"}, f"scheduler pod containers {sorted(cs)}")
    hardened(sched)
    check(sched["spec"].get("replicas", 1) >= 2, "scheduler replicas >= 2 (kube-scheduler's own Lease)")
    spread(sched)
    budget(sched)
    check(sched["spec"]["template"]["spec"].get("serviceAccountName") == "topofit-scheduler", "scheduler SA")
    c = cs.get("kube-scheduler", {})
    check(c.get("image", "").startswith("registry.k8s.io/kube-scheduler:v1.33."), "scheduler image")
    args = c.get("command", []) + c.get("args", [])
    check("--config=/etc/kubernetes/scheduler/config.yaml" in args, "scheduler --config")
    vols, mnt = volumes(sched), mounts(c)
    check(vols.get("config", {}).get("configMap", {}).get("name") == cm["metadata"]["name"],
          "scheduler mounts the generated ConfigMap (hashed name)")
    check(mnt.get("config") == "/etc/kubernetes/scheduler", "config mounted at /etc/kubernetes/scheduler")
    check([n for n, v in vols.items() if "secret" in v] == ["admin-token"],
          "the scheduler pod mounts no Secret but the admin token (loopback, no TLS)")
    for probe in ("livenessProbe", "readinessProbe"):
        h = c.get(probe, {}).get("httpGet", {})
        check(h.get("port") == 10259 and h.get("scheme") == "HTTPS", f"scheduler {probe} HTTPS 10259")

    x = cs.get("topofit-extender", {})
    ready_for_all(sched, x)
    check(x.get("image") == TOPOFIT_IMAGE, f"extender image {x.get('image')} from images:")
    xargs = x.get("args", [])
    def flag(args, name):
        return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None
    check(xargs[:1] == ["extender"], "the extender container runs `topofit extender`")
    check(flag(xargs, "--address") == "127.0.0.1", "extender verbs on loopback")
    check(flag(xargs, "--port") == ext.get("urlPrefix", "").rsplit(":", 1)[-1], "urlPrefix port is the extender's --port")
    check(flag(xargs, "--scheduler-name") == "topofit", "extender --scheduler-name is the profile's")
    check(flag(xargs, "--ledger") == "api", "extender --ledger api")
    def keeps_history(dep, c, args, who):
        # The decision history on a writable volume of the pod (the root filesystem is read-only).
        db = flag(args, "--decision-db") or ""
        where = mounts(c).get("history")
        check(where is not None and db.startswith(where + "/") and "emptyDir" in volumes(dep).get("history", {}),
              f"{who} --decision-db {db!r} on the pod's history volume")
    keeps_history(sched, x, xargs, "extender")
    def admin_token(dep, c, args, who):
        # The admin token from its Secret: /decisions, /mcp and /intents are off without it.
        path = flag(args, "--admin-token-file") or ""
        where = mounts(c).get("admin-token")
        secret = volumes(dep).get("admin-token", {}).get("secret", {})
        check(where is not None and path == where + "/token" and secret.get("secretName") == "topofit-admin-token",
              f"{who} --admin-token-file {path!r} from Secret topofit-admin-token")
    admin_token(sched, x, xargs, "extender")
    check(flag(xargs, "--ops-address") == "0.0.0.0", "extender ops port beyond loopback, for probes and Prometheus")
    for f in ("--live-state", "--provisioning-requests"):
        check(f in xargs, f"extender {f}")
    check("--tls-client-ca" not in xargs and "--insecure" not in xargs, "loopback needs neither mTLS nor --insecure")
    ports = {p["name"]: p["containerPort"] for p in x.get("ports", [])}
    check(ports == {"ops": int(flag(xargs, "--ops-port") or 0)}, f"extender exposes only its ops port: {ports}")
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        h = x.get(probe, {}).get("httpGet", {})
        check(h.get("path") == path and h.get("port") == "ops", f"extender {probe} {path} on ops")

exp = get("Deployment", "topofit-system", "topofit-expander")
if exp:
    cs = containers(exp)
    check(list(cs) == ["topofit"], f"expander containers {list(cs)}")
    c = cs.get("topofit", {})
    hardened(exp)
    ready_for_all(exp, c)
    check(exp["spec"].get("replicas", 1) >= 2, "expander replicas >= 2")
    check(spread(exp), "expander replicas spread over nodes")
    budget(exp)
    check(exp["spec"]["template"]["spec"].get("serviceAccountName") == "topofit-expander", "expander SA")
    check(c.get("image") == TOPOFIT_IMAGE, f"expander image {c.get('image')} from images:")
    args = c.get("args", [])
    check(args[:1] == ["expander"], "`topofit expander`")
    for pair in (["--ledger", "api"], ["--tls-cert", "/etc/topofit/tls/tls.crt"], ["--tls-key", "/etc/topofit/tls/tls.key"],
                 ["--grpc-port", "8444"]):
        check(any(args[i:i + 2] == pair for i in range(len(args))), f"expander {' '.join(pair)}")
    check("--insecure" not in args, "expander serves TLS")
    keeps_history(exp, c, args, "expander")
    admin_token(exp, c, args, "expander")
    for name in ("--address", "--ops-address"):
        check(flag(args, name) == "0.0.0.0", f"expander {name} 0.0.0.0: its callers are in other pods")
    vols, mnt = volumes(exp), mounts(c)
    check(vols.get("tls", {}).get("secret", {}).get("secretName") == "topofit-expander-tls", "tls Secret volume")
    check(mnt.get("tls") == "/etc/topofit/tls", "tls mounted at /etc/topofit/tls")
    labels = exp["spec"]["template"]["metadata"]["labels"]
    svc = get("Service", "topofit-system", "topofit-expander")
    sel = svc.get("spec", {}).get("selector", {})
    check(sel and all(labels.get(k) == v for k, v in sel.items()), "Service selects the expander pods")
    sp = {p["port"]: p.get("targetPort") for p in svc.get("spec", {}).get("ports", [])}
    check(sp == {8444: "grpc", 9091: "ops"}, f"Service ports {sp}")

# --- NetworkPolicies: each topofit pod selected, ingress only on the ports it serves.
def policy_ports(app):
    ps = [d for d in docs if d["kind"] == "NetworkPolicy"
          and d["spec"].get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/name") == app]
    check(len(ps) == 1 and "Ingress" in ps[0]["spec"].get("policyTypes", []) if ps else False,
          f"a NetworkPolicy (Ingress) selects {app}")
    return {p["port"] for d in ps for rule in d["spec"].get("ingress", []) for p in rule.get("ports", [])}
check(policy_ports("topofit-scheduler") == {9090, 10259}, "scheduler pod: ingress only on ops 9090 and 10259 (not 8443)")
check(policy_ports("topofit-expander") == {8444, 9091}, "expander: ingress only on gRPC 8444 and ops 9091")

# --- The image is named in one place: every topofit container renders to the images: entry.
for d in docs:
    for c in d.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []) if d["kind"] in ("Deployment", "DaemonSet") else []:
        if "topofit" in c.get("image", "") and "kube-scheduler" not in c.get("image", ""):
            check(c["image"] == TOPOFIT_IMAGE, f"{d['metadata']['name']}/{c['name']} image {c['image']}")

# --- The demo pod (not rendered; parsed on its own).
pod = yaml.safe_load(open(sys.argv[2]))
check(pod.get("kind") == "Pod" and pod["spec"].get("schedulerName") == "topofit", "demo pod schedulerName topofit")
check(str(pod["spec"]["containers"][0]["resources"]["limits"].get("nvidia.com/gpu")) == "4", "demo pod 4 GPUs")
check(pod["metadata"].get("annotations") == {"topofit.io/min-link": "NV", "topofit.io/topology-policy": "required"},
      "demo pod annotations")

for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
PY
else
  echo "skipped (part): PyYAML not importable; the KubeSchedulerConfiguration parse and the strict checks did not run"
fi
strict_checks() { # rendered file, what it is
  [[ -n $strict ]] || return 0
  if python3 "$strict" "$1" "$dir/examples/gpu-pod.yaml"; then ok "PyYAML checks on $2"; else fail "PyYAML checks on $2"; fi
}
strict_checks "$render" "the base"

# The cert-manager overlay.
if kubectl kustomize "$tmp/manifests/overlays/cert-manager" >"$tmp/cm.yaml" 2>"$tmp/err"; then
  if [[ $(grep -c '^kind: Certificate$' "$tmp/cm.yaml") == 2 && $(grep -c '^kind: Issuer$' "$tmp/cm.yaml") == 2 ]] &&
    grep -q 'secretName: topofit-expander-tls' "$tmp/cm.yaml" &&
    grep -q -- '- topofit-expander.topofit-system.svc$' "$tmp/cm.yaml" &&
    grep -q -- '- topofit-expander.topofit-system.svc.cluster.local$' "$tmp/cm.yaml" &&
    [[ $(grep -c '^kind: Deployment$' "$tmp/cm.yaml") == 2 ]]; then
    ok "overlays/cert-manager renders: base + 2 Issuers + 2 Certificates for the service names"
    strict_checks "$tmp/cm.yaml" "overlays/cert-manager"
  else
    fail "overlays/cert-manager output lacks the Issuers/Certificates"
  fi
else
  cat "$tmp/err"
  fail "kubectl kustomize overlays/cert-manager failed"
fi

# The cluster-autoscaler component, on a stock CA Deployment as the upstream example manifests write it
# (flags in `command`, a volume of its own): topofit's flags appended, the CA certificate mounted.
ca=$tmp/ca-overlay
mkdir -p "$ca"
cat >"$ca/cluster-autoscaler.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cluster-autoscaler
  namespace: kube-system
spec:
  selector:
    matchLabels: {app: cluster-autoscaler}
  template:
    metadata:
      labels: {app: cluster-autoscaler}
    spec:
      containers:
        - name: cluster-autoscaler
          image: registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0
          command: [./cluster-autoscaler, --cloud-provider=aws, --expander=least-waste]
          volumeMounts:
            - {name: ssl-certs, mountPath: /etc/ssl/certs/ca-certificates.crt, readOnly: true}
      volumes:
        - name: ssl-certs
          hostPath: {path: /etc/ssl/certs/ca-bundle.crt}
YAML
cat >"$ca/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [cluster-autoscaler.yaml]
components: [../manifests/components/cluster-autoscaler]
YAML
if kubectl kustomize "$ca" >"$tmp/ca.yaml" 2>"$tmp/err"; then
  missing=""
  for line in "- --expander=grpc,least-waste" "- --grpc-expander-url=topofit-expander.topofit-system.svc:8444" \
    "- --grpc-expander-cert=/etc/topofit/ca/ca.crt" "- --enable-provisioning-requests=true" \
    "- --cloud-provider=aws" "- mountPath: /etc/topofit/ca" "name: topofit-expander-ca" "- key: ca.crt" \
    "name: ssl-certs"; do
    grep -qF -- "$line" "$tmp/ca.yaml" || missing+=" '$line'"
  done
  # CA's flags are Go flags: with two --expander the winner would depend on their order; one stays.
  expanders=$(grep -c -- '--expander=' "$tmp/ca.yaml")
  if [[ -z $missing ]] && [[ $expanders == 1 ]] && grep -qF -- "- --expander=grpc,least-waste" "$tmp/ca.yaml" &&
    ! grep -q "topofit-cluster-autoscaler-flags" "$tmp/ca.yaml"; then
    ok "components/cluster-autoscaler replaces --expander (one left), adds the flags, mounts the CA certificate"
  else
    fail "components/cluster-autoscaler output lacks:$missing, or has $expanders --expander flags, or its local config"
  fi
else
  cat "$tmp/err"
  fail "kubectl kustomize with components/cluster-autoscaler failed"
fi

# It fails loudly, instead of doing nothing, where its target is not what it expects: the Deployment named as
# the Helm chart names it, the container named otherwise, no --expander flag to replace.
expect_component_failure() { # what, sed expression applied to the stock Deployment, text the error must name
  mkdir -p "$ca-bad"
  sed "$2" "$ca/cluster-autoscaler.yaml" >"$ca-bad/cluster-autoscaler.yaml"
  cp "$ca/kustomization.yaml" "$ca-bad/kustomization.yaml"
  if kubectl kustomize "$ca-bad" >/dev/null 2>"$tmp/err"; then
    fail "components/cluster-autoscaler on $1: rendered, should fail"
  elif grep -qF -- "$3" "$tmp/err"; then
    ok "components/cluster-autoscaler on $1: fails, naming '$3'"
  else
    cat "$tmp/err"
    fail "components/cluster-autoscaler on $1: failed without naming '$3'"
  fi
}
expect_component_failure "a Deployment named by the Helm chart" \
  's/^  name: cluster-autoscaler$/  name: cluster-autoscaler-aws-cluster-autoscaler/' "nothing selected by Deployment"
expect_component_failure "a container named otherwise" \
  's/- name: cluster-autoscaler$/- name: aws-cluster-autoscaler/' "/spec/template/spec/containers/0/name failed"
expect_component_failure "no --expander flag" 's/, --expander=least-waste\]/]/' "--expander=*"

# The node-agent component on the base: the DaemonSet on GPU nodes with the kubelet's two folders, its node
# name from the downward API, nvidia-smi through the NVIDIA runtime class, and RBAC limited to what it calls.
na=$tmp/node-agent-overlay
mkdir -p "$na"
cat >"$na/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../manifests/base]
components: [../manifests/components/node-agent]
YAML
if kubectl kustomize "$na" >"$tmp/na.yaml" 2>"$tmp/err"; then
  missing=""
  for line in "kind: DaemonSet" "name: topofit-node-agent" "nvidia.com/gpu.present: \"true\"" "runtimeClassName: nvidia" \
    "fieldPath: spec.nodeName" "path: /var/lib/kubelet/device-plugins" "path: /var/lib/kubelet/pod-resources" \
    "- agent" "path: /readyz" "priorityClassName: system-node-critical" "key: nvidia.com/gpu"; do
    grep -qF -- "$line" "$tmp/na.yaml" || missing+=" '$line'"
  done
  [[ $(grep -c '^kind: DaemonSet$' "$tmp/na.yaml") == 1 ]] || missing+=" (one DaemonSet)"
  if [[ -z $missing ]]; then ok "components/node-agent adds the DaemonSet"; else fail "components/node-agent lacks:$missing"; fi
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
    if python3 - "$tmp/na.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
role = next(d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "topofit-node-agent")
rules = sorted((tuple(r["apiGroups"]), tuple(r["resources"]), tuple(sorted(r["verbs"]))) for r in role["rules"])
want = [(("",), ("nodes",), ("get", "patch")), (("",), ("pods",), ("list", "patch", "watch"))]
sys.exit(0 if rules == want else f"node agent RBAC is {rules}, want {want}")
PY
    then ok "node agent RBAC: pods list/watch/patch, nodes get/patch, nothing else"; else fail "node agent RBAC"; fi
  fi
else
  cat "$tmp/err"
  fail "kubectl kustomize with components/node-agent failed"
fi
# An extender component on the base: its flag on the extender container (and only there, beside
# --live-state, which it needs), and a ClusterRole with exactly the rules given (Python literal, sorted
# (apiGroups, resources, verbs) tuples) bound to the scheduler's ServiceAccount.
#   check_extender_component <component> <flag> <ClusterRole> <rules> <what it grants, for the ok line>
check_extender_component() {
  local component=$1 flag=$2 role=$3 rules=$4 grants=$5
  local overlay=$tmp/$component-overlay
  mkdir -p "$overlay"
  cat >"$overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../manifests/base]
components: [../manifests/components/$component]
YAML
  if ! kubectl kustomize "$overlay" >"$tmp/$component.yaml" 2>"$tmp/err"; then
    cat "$tmp/err"
    fail "kubectl kustomize with components/$component failed"
  elif command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
    if python3 - "$tmp/$component.yaml" "$flag" "$role" "$rules" <<'PY'
import ast, sys, yaml
path, flag, role_name, want = sys.argv[1], sys.argv[2], sys.argv[3], ast.literal_eval(sys.argv[4])
docs = [d for d in yaml.safe_load_all(open(path)) if d]
deployment = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "topofit-scheduler")
containers = {c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]}
extender_args = containers["topofit-extender"]["args"]
if extender_args.count(flag) != 1 or "--live-state" not in extender_args:
    sys.exit(f"extender args {extender_args}")
name = flag.split("=")[0]
if any(name in a for c in containers.values() if c["name"] != "topofit-extender" for a in c.get("args", []) + c.get("command", [])):
    sys.exit(f"{name} on another container")
role = next(d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == role_name)
rules = sorted((tuple(r["apiGroups"]), tuple(sorted(r["resources"])), tuple(sorted(r["verbs"]))) for r in role["rules"])
if rules != want:
    sys.exit(f"{role_name} rules are {rules}, want {want}")
binding = next(d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == role_name)
sa = next(d for d in docs if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == deployment["spec"]["template"]["spec"]["serviceAccountName"])
if binding["subjects"] != [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": sa["metadata"]["namespace"]}]:
    sys.exit(f"binding subjects {binding['subjects']}")
PY
    then ok "components/$component: $flag on the extender only, $grants for its ServiceAccount"
    else fail "components/$component"; fi
  fi
}
check_extender_component dra --dra=v1 topofit-extender-dra \
  '[(("resource.k8s.io",), ("resourceclaims", "resourceslices"), ("list", "watch"))]' \
  "resourceslices/resourceclaims list/watch"
# dra also sends every pod of the profile to the extender (claim pods request no nvidia.com/gpu): its
# scheduler config is the base's without managedResources, nothing else; and the expander watches claims.
if [ -f "$tmp/dra.yaml" ] && command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
  if python3 - "$render" "$tmp/dra.yaml" <<'PY'
import sys, yaml
def config(path):
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("topofit-scheduler-config"))
    return docs, yaml.safe_load(cm["data"]["config.yaml"])
_, base = config(sys.argv[1])
docs, dra = config(sys.argv[2])
if "managedResources" in dra["extenders"][0]:
    sys.exit("dra: the extender still has managedResources")
base["extenders"][0].pop("managedResources")
if base != dra:
    sys.exit("dra: the scheduler config differs from the base's in more than managedResources")
expander = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "topofit-expander")
args = expander["spec"]["template"]["spec"]["containers"][0]["args"]
if args[0] != "expander" or args.count("--dra=v1") != 1:
    sys.exit(f"expander args {args}")
role = next(d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "topofit-expander-dra")
if role["rules"] != [{"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["list", "watch"]}]:
    sys.exit(f"topofit-expander-dra rules {role['rules']}")
binding = next(d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == "topofit-expander-dra")
sa = expander["spec"]["template"]["spec"]["serviceAccountName"]
if binding["subjects"] != [{"kind": "ServiceAccount", "name": sa, "namespace": expander["metadata"]["namespace"]}]:
    sys.exit(f"topofit-expander-dra subjects {binding['subjects']}")
PY
  then ok "components/dra: the base's scheduler config without managedResources; the expander's --dra=v1 and its claims list/watch"
  else fail "components/dra: scheduler config or expander"; fi
fi
check_extender_component compute-domains --compute-domains=v1beta1 topofit-extender-compute-domains \
  '[(("resource.nvidia.com",), ("computedomains",), ("list", "watch"))]' \
  "computedomains list/watch"
# compute-domains also has the expander watch the domains.
if [ -f "$tmp/compute-domains.yaml" ] && command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
  if python3 - "$tmp/compute-domains.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
expander = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "topofit-expander")
args = expander["spec"]["template"]["spec"]["containers"][0]["args"]
if args[0] != "expander" or args.count("--compute-domains=v1beta1") != 1:
    sys.exit(f"expander args {args}")
role = next(d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "topofit-expander-compute-domains")
if role["rules"] != [{"apiGroups": ["resource.nvidia.com"], "resources": ["computedomains"], "verbs": ["list", "watch"]}]:
    sys.exit(f"topofit-expander-compute-domains rules {role['rules']}")
binding = next(d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == "topofit-expander-compute-domains")
sa = expander["spec"]["template"]["spec"]["serviceAccountName"]
if binding["subjects"] != [{"kind": "ServiceAccount", "name": sa, "namespace": expander["metadata"]["namespace"]}]:
    sys.exit(f"topofit-expander-compute-domains subjects {binding['subjects']}")
PY
  then ok "components/compute-domains: the expander's --compute-domains=v1beta1 and its computedomains list/watch"
  else fail "components/compute-domains: expander"; fi
fi
check_extender_component restarts --collect-restarts topofit-extender-restarts \
  '[(("",), ("events",), ("list",)), (("",), ("pods/log",), ("get",))]' "events list and pods/log get"
# restart-notifications on top of restarts: the Slack URL file flag on the extender, read from the Secret
# mounted read-only at the path the flag names.
rn=$tmp/restart-notifications-overlay
mkdir -p "$rn"
cat >"$rn/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../manifests/base]
components: [../manifests/components/restarts, ../manifests/components/restart-notifications]
YAML
if ! kubectl kustomize "$rn" >"$tmp/rn.yaml" 2>"$tmp/err"; then
  cat "$tmp/err"
  fail "kubectl kustomize with components/restart-notifications failed"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
  if python3 - "$tmp/rn.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
deployment = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "topofit-scheduler")
spec = deployment["spec"]["template"]["spec"]
extender = next(c for c in spec["containers"] if c["name"] == "topofit-extender")
flags = [a for a in extender["args"] if a.startswith("--restart-slack-webhook-file=")]
if "--collect-restarts" not in extender["args"] or len(flags) != 1:
    sys.exit(f"extender args {extender['args']}")
path = flags[0].split("=", 1)[1]
mount = next((m for m in extender["volumeMounts"] if path.startswith(m["mountPath"] + "/")), None)
if mount is None or not mount.get("readOnly"):
    sys.exit(f"no read-only mount holds {path}: {extender['volumeMounts']}")
volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
if volume.get("secret", {}).get("secretName") != "topofit-restart-webhooks":
    sys.exit(f"volume {volume}")
PY
  then ok "components/restart-notifications: the Slack webhook URL read from the Secret topofit-restart-webhooks"
  else fail "components/restart-notifications"; fi
fi
# The pod-monitor component, on the base with the node agent: a PodMonitor for each topofit workload, whose
# selector picks that workload's pods and whose port is one they name.
pm=$tmp/pod-monitor-overlay
mkdir -p "$pm"
cat >"$pm/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../manifests/base]
components: [../manifests/components/node-agent, ../manifests/components/pod-monitor]
YAML
if ! kubectl kustomize "$pm" >"$tmp/pm.yaml" 2>"$tmp/err"; then
  cat "$tmp/err"
  fail "kubectl kustomize with components/pod-monitor failed"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
  if python3 - "$tmp/pm.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
monitors = [d for d in docs if d["kind"] == "PodMonitor"]
workloads = [d for d in docs if d["kind"] in ("Deployment", "DaemonSet")]
problems = [] if len(monitors) == 3 else [f"{len(monitors)} PodMonitors, want 3"]
for m in monitors:
    want = m["spec"]["selector"]["matchLabels"]
    picked = [w for w in workloads if all(w["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in want.items())]
    ports = {p.get("name") for w in picked for c in w["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
    for e in m["spec"]["podMetricsEndpoints"]:
        if len(picked) != 1 or e["port"] not in ports or e.get("path") != "/metrics":
            problems.append(f"{m['metadata']['name']}: selects {len(picked)} workloads, port {e['port']} of {sorted(ports)}")
sys.exit("; ".join(problems) if problems else 0)
PY
  then ok "components/pod-monitor: a PodMonitor per workload, on its ops port's /metrics"; else fail "components/pod-monitor"; fi
else
  grep -q '^kind: PodMonitor$' "$tmp/pm.yaml" && ok "components/pod-monitor renders" || fail "components/pod-monitor renders no PodMonitor"
fi
# The webhook component on the base: the MutatingWebhookConfiguration's contract (v1 reviews, no side
# effects, Ignore on failure, a short timeout, pods CREATE only, opt-in by label, never topofit's own namespace
# or kube-system), its Service reaching the Deployment's --port on the path the server serves, and RBAC limited
# to reading the node groups' ConfigMap.
wh=$tmp/webhook-overlay
mkdir -p "$wh"
cat >"$wh/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../manifests/base]
components: [../manifests/components/webhook]
YAML
if ! kubectl kustomize "$wh" >"$tmp/wh.yaml" 2>"$tmp/err"; then
  cat "$tmp/err"
  fail "kubectl kustomize with components/webhook failed"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
  if python3 - "$tmp/wh.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
problems = []
def check(cond, msg):
    if not cond:
        problems.append(msg)
def one(kind, name):
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    check(len(found) == 1, f"one {kind} {name}")
    return found[0] if found else {}
mwc = one("MutatingWebhookConfiguration", "topofit-webhook")
hooks = mwc.get("webhooks", [])
check(len(hooks) == 1, "one webhook")
h = hooks[0] if hooks else {}
check(h.get("admissionReviewVersions") == ["v1"], "admissionReviewVersions [v1]")
check(h.get("sideEffects") == "None", "sideEffects None")
check(h.get("failurePolicy") == "Ignore", "failurePolicy Ignore")
check(0 < h.get("timeoutSeconds", 10) <= 5, "timeoutSeconds at most 5")
check(h.get("rules") == [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                          "scope": "Namespaced"}], f"rules: pods CREATE only, got {h.get('rules')}")
check(h.get("objectSelector", {}).get("matchLabels") == {"topofit.io/webhook": "enabled"}, "opt-in objectSelector")
excluded = [e for e in h.get("namespaceSelector", {}).get("matchExpressions", [])
            if e.get("key") == "kubernetes.io/metadata.name" and e.get("operator") == "NotIn"]
check(excluded and {"kube-system", "topofit-system"} <= set(excluded[0].get("values", [])),
      "namespaceSelector leaves out kube-system and topofit-system")
svc_ref = h.get("clientConfig", {}).get("service", {})
check(svc_ref.get("path") == "/mutate", "clientConfig path /mutate (the server's route)")
svc = one("Service", "topofit-webhook")
check(svc_ref.get("name") == "topofit-webhook" and svc_ref.get("namespace") == "topofit-system", "clientConfig names the Service")
ports = {p["port"]: p.get("targetPort") for p in svc.get("spec", {}).get("ports", [])}
dep = one("Deployment", "topofit-webhook")
pod = dep.get("spec", {}).get("template", {}).get("spec", {})
c = (pod.get("containers") or [{}])[0]
args = c.get("args", [])
def flag(name):
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None
check(args[:1] == ["webhook"], "`topofit webhook`")
named = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
check(named.get(ports.get(svc_ref.get("port", 443))) == int(flag("--port") or 0),
      f"Service port {svc_ref.get('port', 443)} reaches the container's --port {flag('--port')}")
check(flag("--tls-cert") == "/etc/topofit/tls/tls.crt" and flag("--tls-key") == "/etc/topofit/tls/tls.key", "TLS files")
check("--insecure" not in args, "the webhook serves TLS")
check(flag("--namespace") == "topofit-system", "reads the ConfigMap in topofit-system")
vols = {v["name"]: v for v in pod.get("volumes", [])}
check(vols.get("tls", {}).get("secret", {}).get("secretName") == "topofit-webhook-tls", "Secret topofit-webhook-tls")
check(pod.get("serviceAccountName") == "topofit-webhook", "its own ServiceAccount")
check(dep.get("spec", {}).get("replicas", 1) >= 2, "two replicas: an outage silently loses affinities")
check(c.get("securityContext", {}).get("readOnlyRootFilesystem") is True, "read-only root filesystem")
for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
    check(c.get(probe, {}).get("httpGet", {}).get("path") == path, f"{probe} {path}")
role = one("Role", "topofit-webhook-node-groups")
check(role.get("rules") == [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["topofit-node-groups"],
                             "verbs": ["get"]}], "Role: get of topofit-node-groups only")
binding = one("RoleBinding", "topofit-webhook-node-groups")
check(binding.get("subjects") == [{"kind": "ServiceAccount", "name": "topofit-webhook", "namespace": "topofit-system"}],
      "RoleBinding to the webhook's ServiceAccount")
check(any(d["kind"] == "PodDisruptionBudget" and d["metadata"]["name"] == "topofit-webhook" for d in docs), "a PDB")
sys.exit("; ".join(problems) if problems else 0)
PY
  then ok "components/webhook: Ignore, v1, pods CREATE, opt-in selectors, Service to --port, /mutate, least RBAC"; else fail "components/webhook"; fi
else
  grep -q '^kind: MutatingWebhookConfiguration$' "$tmp/wh.yaml" && ok "components/webhook renders" || fail "components/webhook renders no MutatingWebhookConfiguration"
fi
# The headroom component on the base: `topofit headroom` writing in the namespace its Role covers, one replica
# (two would write two plans), and RBAC limited to what its writer sends.
hr=$tmp/headroom-overlay
mkdir -p "$hr"
cat >"$hr/kustomization.yaml" <<'YAML'
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../manifests/base]
components: [../manifests/components/headroom]
YAML
if ! kubectl kustomize "$hr" >"$tmp/hr.yaml" 2>"$tmp/err"; then
  cat "$tmp/err"
  fail "kubectl kustomize with components/headroom failed"
elif command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
  if python3 - "$tmp/hr.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
problems = []
def check(cond, msg):
    if not cond:
        problems.append(msg)
def one(kind, name):
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    check(len(found) == 1, f"one {kind} {name}")
    return found[0] if found else {}
dep = one("Deployment", "topofit-headroom")
spec = dep.get("spec", {})
check(spec.get("replicas") == 2, "two replicas")
pod = spec.get("template", {}).get("spec", {})
c = (pod.get("containers") or [{}])[0]
args = c.get("args", [])
def flag(name):
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None
check(args[:1] == ["headroom"], "`topofit headroom`")
check("--leader-elect" in args, "--leader-elect: one of the replicas writes")
check(flag("--api") == "auto", "--api auto")
check(0 < float(flag("--fill-rate") or 0) <= 1, "a fill rate in (0, 1]")
named = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
check(named.get("ops") == int(flag("--ops-port") or 0), "the ops port named ops")
for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
    check(c.get(probe, {}).get("httpGet", {}).get("path") == path, f"{probe} {path}")
check(pod.get("serviceAccountName") == "topofit-headroom", "its own ServiceAccount")
role = one("Role", "topofit-headroom")
check(role.get("metadata", {}).get("namespace") == flag("--namespace"), "the Role covers the --namespace it writes in")
rules = {(tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r.get("resourceNames", []))): sorted(r["verbs"])
         for r in role.get("rules", [])}
check(rules == {(("",), ("podtemplates",), ()): ["create", "delete"],
                (("autoscaling.x-k8s.io",), ("capacitybuffers",), ()): ["create", "delete", "list", "patch"],
                (("apps",), ("deployments",), ()): ["create", "delete", "list", "patch"],
                (("coordination.k8s.io",), ("leases",), ()): ["create"],
                (("coordination.k8s.io",), ("leases",), ("topofit-headroom",)): ["get", "update"]},
      f"Role rules: {rules}")
cluster = one("ClusterRole", "topofit-headroom")
crules = {(tuple(r["apiGroups"]), tuple(r["resources"])): sorted(r["verbs"]) for r in cluster.get("rules", [])}
check(crules == {(("",), ("pods",)): ["list", "watch"],
                 (("scheduling.k8s.io",), ("priorityclasses",)): ["create"]}, f"ClusterRole rules: {crules}")
for kind in ("RoleBinding", "ClusterRoleBinding"):
    binding = one(kind, "topofit-headroom")
    check(binding.get("subjects") == [{"kind": "ServiceAccount", "name": "topofit-headroom",
                                        "namespace": "topofit-system"}], f"{kind} to the ServiceAccount")
sys.exit("; ".join(problems) if problems else 0)
PY
  then ok "components/headroom: two replicas with --leader-elect, the Role where it writes, RBAC limited to its writer's and elector's verbs"; else fail "components/headroom"; fi
else
  grep -q 'name: topofit-headroom$' "$tmp/hr.yaml" && ok "components/headroom renders" || fail "components/headroom renders no Deployment"
fi
# The README's image override, on the base with the node-agent component: every container that runs topofit
# (extender, expander, agent) renders the user's image; without it, the release's.
images_of() { grep -E '^[[:space:]]*image: .*topofit' "$1" | grep -v kube-scheduler | sed -E 's/^[[:space:]]*image: //' | sort | uniq -c | sed -E 's/^ +//'; }
if [[ $(images_of "$tmp/na.yaml") == "3 ghcr.io/topofit/topofit:v0.1.0" ]]; then
  ok "base + node-agent: the three topofit containers run ghcr.io/topofit/topofit:v0.1.0"
else
  fail "base + node-agent images: $(images_of "$tmp/na.yaml" | tr '\n' ';')"
fi
cat >>"$na/kustomization.yaml" <<'YAML'
images:
  - name: ghcr.io/topofit/topofit
    newName: registry.example.com/topofit
    newTag: v9.9.9
YAML
if kubectl kustomize "$na" >"$tmp/na-image.yaml" 2>"$tmp/err" &&
  [[ $(images_of "$tmp/na-image.yaml") == "3 registry.example.com/topofit:v9.9.9" ]]; then
  ok "the README's images: override reaches the base and the node-agent component"
else
  cat "$tmp/err"
  fail "images: override rendered: $(images_of "$tmp/na-image.yaml" | tr '\n' ';')"
fi

# scripts/make-tls.sh into a temporary directory, then the overlay it writes.
if ! command -v openssl >/dev/null 2>&1; then
  echo "skipped (part): openssl not found; scripts/make-tls.sh not exercised"
elif [[ ! -x $scripts/make-tls.sh ]]; then
  fail "scripts/make-tls.sh missing or not executable"
else
  tls=$tmp/tls
  if TOPOFIT_TLS_DIR=$tls "$scripts/make-tls.sh" >"$tmp/make-tls.out" 2>&1; then
    ok "make-tls.sh ran"
    if openssl verify -CAfile "$tls/ca.crt" "$tls/tls.crt" >/dev/null 2>&1 &&
      openssl x509 -in "$tls/tls.crt" -noout -ext subjectAltName 2>/dev/null |
      grep -q 'DNS:topofit-expander.topofit-system.svc, DNS:topofit-expander.topofit-system.svc.cluster.local'; then
      ok "server certificate verifies against the CA and names both service DNS names"
    else
      fail "server certificate does not verify or lacks the SANs"
    fi
    grep -q 'kubectl -n topofit-system create secret generic topofit-expander-tls' "$tmp/make-tls.out" &&
      grep -q 'kubectl -n topofit-system create secret generic topofit-admin-token' "$tmp/make-tls.out" ||
      fail "make-tls.sh does not print the kubectl create secret commands"
    if [[ $(wc -c <"$tls/admin-token") == 64 ]] && grep -qx '[0-9a-f]*' "$tls/admin-token"; then
      ok "make-tls.sh made a 32-byte hex admin token"
    else
      fail "make-tls.sh admin token is not 64 hex digits"
    fi
    if kubectl kustomize "$tls" >"$tmp/tls.yaml" 2>"$tmp/err" &&
      [[ $(grep -c '^kind: Secret$' "$tmp/tls.yaml") == 2 ]] && grep -q '^type: kubernetes.io/tls$' "$tmp/tls.yaml" &&
      grep -q '^  name: topofit-expander-tls$' "$tmp/tls.yaml" && grep -q '^  name: topofit-admin-token$' "$tmp/tls.yaml"; then
      ok "the generated overlay renders the base + Secrets topofit-expander-tls and topofit-admin-token"
      strict_checks "$tmp/tls.yaml" "the overlay make-tls.sh writes"
    else
      cat "$tmp/err"
      fail "the overlay written by make-tls.sh does not render the Secret"
    fi
  else
    cat "$tmp/make-tls.out"
    fail "make-tls.sh failed"
  fi
  # With the webhook: its certificate from the same CA, its Secret, and that CA as the caBundle.
  wtls=$tmp/tls-webhook
  if TOPOFIT_TLS_DIR=$wtls TOPOFIT_WEBHOOK=1 "$scripts/make-tls.sh" >"$tmp/make-tls-webhook.out" 2>&1 &&
    kubectl kustomize "$wtls" >"$tmp/tls-webhook.yaml" 2>"$tmp/err"; then
    if openssl verify -CAfile "$wtls/ca.crt" "$wtls/webhook-tls.crt" >/dev/null 2>&1 &&
      openssl x509 -in "$wtls/webhook-tls.crt" -noout -ext subjectAltName 2>/dev/null |
      grep -q 'DNS:topofit-webhook.topofit-system.svc, DNS:topofit-webhook.topofit-system.svc.cluster.local' &&
      grep -q "caBundle: $(base64 -w0 "$wtls/ca.crt")\$" "$tmp/tls-webhook.yaml" &&
      grep -q '^  name: topofit-webhook-tls$' "$tmp/tls-webhook.yaml" &&
      [[ $(grep -c '^kind: MutatingWebhookConfiguration$' "$tmp/tls-webhook.yaml") == 1 ]]; then
      ok "TOPOFIT_WEBHOOK=1 make-tls.sh: webhook certificate for its Service names, its Secret, the CA as caBundle"
    else
      fail "TOPOFIT_WEBHOOK=1 make-tls.sh: certificate, Secret or caBundle missing"
    fi
  else
    cat "$tmp/make-tls-webhook.out" "$tmp/err"
    fail "TOPOFIT_WEBHOOK=1 make-tls.sh or its overlay failed"
  fi
fi

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all manifest checks passed"
