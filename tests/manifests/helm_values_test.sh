#!/usr/bin/env bash
# CTest manifests.helm_values: manifests/examples/cluster-autoscaler-values.yaml against what the
# cluster-autoscaler chart's templates/deployment.yaml does with it. Helm is not packaged in Debian, so the
# three keys it reads are rendered here as the template renders them:
#   extraArgs:          {{- range $key, $value := .Values.extraArgs }}
#                         - --{{ $key | mustRegexFind "^[^_]+" }}={{ $value }}   (a null value: - --{{ $key }})
#   extraVolumes:       {{- toYaml .Values.extraVolumes | nindent 8 }}        under the pod's volumes
#   extraVolumeMounts:  {{- toYaml .Values.extraVolumeMounts | nindent 12 }}  under the container's mounts
# and the result is checked: exactly one --expander, topofit's URL and certificate flags, the certificate
# path inside a mount of a volume that exists and holds the CA ConfigMap's ca.crt.
#
# usage: helm_values_test.sh <values file>   exit 0 pass, 1 fail, 77 skipped (no python3 with PyYAML)
set -uo pipefail
values=${1:?usage: helm_values_test.sh <values file>}
if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "skipped: python3 with PyYAML not found"
  exit 77
fi
python3 - "$values" <<'PY'
import re, sys, yaml

values = yaml.safe_load(open(sys.argv[1]))
errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)

def go_text(v):  # how text/template prints a YAML scalar
    if v is True: return "true"
    if v is False: return "false"
    return str(v)

# The chart's default extraArgs, merged under ours as Helm merges maps.
args = {"logtostderr": True, "stderrthreshold": "info", "v": 4}
args.update(values.get("extraArgs") or {})
flags = []
for key in sorted(args):  # Go templates range over a map in key order
    name = re.match(r"^[^_]+", key).group(0)
    flags.append(f"--{name}" if args[key] is None else f"--{name}={go_text(args[key])}")
print("rendered flags:", " ".join(flags))

expanders = [f for f in flags if f.startswith("--expander=") or f == "--expander"]
check(expanders == ["--expander=grpc,least-waste"], f"one --expander=grpc,least-waste, got {expanders}")
check("--grpc-expander-url=topofit-expander.topofit-system.svc:8444" in flags, "--grpc-expander-url")
check("--enable-provisioning-requests=true" in flags, "--enable-provisioning-requests=true")
certs = [f.split("=", 1)[1] for f in flags if f.startswith("--grpc-expander-cert=")]
check(len(certs) == 1, "one --grpc-expander-cert")

volumes = {v["name"]: v for v in values.get("extraVolumes") or []}
mounts = values.get("extraVolumeMounts") or []
for m in mounts:
    check(m.get("name") in volumes, f"mount {m.get('name')} has no volume in extraVolumes")
    check(m.get("readOnly") is True, f"mount {m.get('name')} read-only")
if certs:
    cert = certs[0]
    holders = [m for m in mounts if cert.startswith(m["mountPath"].rstrip("/") + "/")]
    check(len(holders) == 1, f"{cert} lies in one of extraVolumeMounts")
    if holders:
        vol = volumes.get(holders[0]["name"], {})
        cm = vol.get("configMap", {})
        check(cm.get("name") == "topofit-expander-ca", "the certificate's volume is ConfigMap topofit-expander-ca")
        rel = cert[len(holders[0]["mountPath"].rstrip("/")) + 1:]
        check({"key": "ca.crt", "path": rel} in cm.get("items", []), f"the ConfigMap's ca.crt is mounted as {rel}")
# toYaml of both lists must be plain Kubernetes objects: re-dumping them changes nothing.
for key in ("extraVolumes", "extraVolumeMounts"):
    check(yaml.safe_load(yaml.safe_dump(values.get(key))) == values.get(key), f"{key} round-trips through toYaml")
unknown = set(values) - {"extraArgs", "extraVolumes", "extraVolumeMounts"}
check(not unknown, f"keys the snippet should not set: {sorted(unknown)}")

for e in errors:
    print("FAIL:", e)
if errors:
    sys.exit(1)
print("ok: the chart renders one --expander=grpc,least-waste, topofit's URL, the CA certificate mounted from "
      "ConfigMap topofit-expander-ca")
PY
