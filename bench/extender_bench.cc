// The scheduler extender measured over HTTP, as kube-scheduler drives it: the real server (the routes of
// scheduler/extender_http.h over server/http_server.h) stands up in-process on 127.0.0.1 and is driven by
// bench/http_client.h's clients (Go-like: large reads into a kept buffer) on keep-alive connections from
// their own threads. Not Google Benchmark: the unit is an
// HTTP exchange with a server that has its own threads, and the output is a latency distribution.
//
// Input (seeded, deterministic): 8-GPU nodes as an API server returns them (labels of a mix of
// p4d.24xlarge, p5.48xlarge, g5.48xlarge and p3.16xlarge, GFD labels, annotations, taints, capacity,
// 5 conditions, addresses, nodeInfo, and --images images: 50 by default, the most kubelet reports
// (--node-status-max-images), which a GPU node that has run many jobs reaches; about 16 KB of JSON each, 9 KB
// with 20 images as in the figures before bench/RESULTS.md's "Moving the bytes"), a share of their GPUs reported in
// use through POST /admin/pods, and pods of 1 container asking for 1/2/4/8 GPUs, some with
// `topofit.io/min-link: NV` under `topofit.io/topology-policy: required`.
//
// Scenarios:
//   - scheduling cycles: one /filter then one /prioritize (on the nodes that passed, as kube-scheduler
//     does) for 100, 1,000 and 5,000 candidate nodes, with full Nodes (nodeCacheCapable: false) and with
//     NodeNames (nodeCacheCapable: true); p50/p99 of filter, prioritize and the pair, request bytes;
//   - throughput of 100-node /filter requests from 4 client threads for a fixed duration;
//   - an in-process breakdown (no HTTP) of one request's stages: JSON parse, node decode, Filter,
//     serialization; and the cost of learning nodes never seen (topology resolution).
//
//   extender_bench [--quick] [--iterations=N] [--duration=S] [--sizes=100,1000,5000] [--client-threads=4]
//                  [--server-threads=4] [--in-use=0.45] [--seed=1] [--max-body-mb=256] [--images=50] [--no-breakdown]
//                  [--no-throughput] [--no-cycles] [--decision-db=PATH|:memory:] [--modes=nodes,names]
//                  [--dump=PATH] [--warm=GPUS:REPLICAS,...]
//
// --modes chooses the request shapes: `nodes` (full Node objects) and/or `names` (NodeNames); both by default.
//
// --dump=PATH writes every scheduling cycle's /filter and /prioritize reply bodies to PATH: two builds given
// the same flags must write the same file (how a speed-up shows it changed no decision).
//
// --warm keeps buffered sets whole in prioritize (decision/warm_capacity.h), as `topofit extender --live-state`
// does where CapacityBuffers exist: one buffer per entry, of pods asking GPUS GPUs (4 and 8 with
// topofit.io/min-link NV, as topofit's headroom shapes NVLink sets), REPLICAS of them. Its cost is the figure.
//
// --decision-db records every decision to a decision history (history/), as `topofit extender` does:
// run with and without it to see what recording costs a request.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "bench/http_client.h"
#include "codec/extender_json.h"
#include "decision/pod_demand.h"
#include "decision/warm_capacity.h"
#include "kube/topofit_annotations.h"
#include "history/recorder.h"
#include "history/store.h"
#include "ledger/ledger.h"
#include "scheduler/extender.h"
#include "scheduler/extender_http.h"
#include "scheduler/extender_metrics.h"
#include "scheduler/gpu_state.h"
#include "scheduler/kube_client.h"
#include "scheduler/warm_source.h"
#include "server/clock.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace topofit::bench {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr char kAdminToken[] = "bench-admin-token";

// ---------------------------------------------------------------------------------------------- flags

struct Flags {
  bool quick = false;
  int iterations = 1000;     // scheduling cycles at 100 nodes; fewer at larger sizes (see CyclesFor)
  double duration_s = 10;    // per throughput run
  std::vector<int> sizes = {100, 1000, 5000};
  int client_threads = 4;
  int server_threads = 4;    // HttpServerOptions' default
  double in_use = 0.45;      // share of nodes with GPUs already held
  uint64_t seed = 1;
  size_t max_body_mb = 256;  // the server's default (8 MiB) refuses ~500+ full nodes; see RESULTS.md
  int images = 50;           // status.images per node
  bool breakdown = true;
  bool throughput = true;
  bool cycles = true;
  std::vector<bool> modes = {false, true};  // NodeNames (nodeCacheCapable) off, then on
  std::string decision_db;   // record decisions here (":memory:": in memory); empty: not recorded
  std::string dump_path;     // the cycles' reply bodies written here; empty: not written
  std::vector<std::pair<int, int>> warm;  // buffered shapes kept whole: (GPUs, replicas)
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  bool iterations_set = false, duration_set = false;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    const auto value = [&](absl::string_view name) -> std::optional<absl::string_view> {
      if (!absl::StartsWith(arg, name) || arg.size() <= name.size() || arg[name.size()] != '=') return std::nullopt;
      return arg.substr(name.size() + 1);
    };
    bool ok = true;
    if (arg == "--quick") {
      flags.quick = true;
    } else if (arg == "--no-breakdown") {
      flags.breakdown = false;
    } else if (arg == "--no-throughput") {
      flags.throughput = false;
    } else if (arg == "--no-cycles") {
      flags.cycles = false;
    } else if (auto v = value("--iterations")) {
      ok = absl::SimpleAtoi(*v, &flags.iterations) && flags.iterations > 0;
      iterations_set = true;
    } else if (auto v = value("--duration")) {
      ok = absl::SimpleAtod(*v, &flags.duration_s) && flags.duration_s > 0;
      duration_set = true;
    } else if (auto v = value("--sizes")) {
      flags.sizes.clear();
      for (absl::string_view s : absl::StrSplit(*v, ',')) {
        int n = 0;
        ok = ok && absl::SimpleAtoi(s, &n) && n > 0;
        flags.sizes.push_back(n);
      }
    } else if (auto v = value("--client-threads")) {
      ok = absl::SimpleAtoi(*v, &flags.client_threads) && flags.client_threads > 0;
    } else if (auto v = value("--server-threads")) {
      ok = absl::SimpleAtoi(*v, &flags.server_threads) && flags.server_threads > 0;
    } else if (auto v = value("--in-use")) {
      ok = absl::SimpleAtod(*v, &flags.in_use) && flags.in_use >= 0 && flags.in_use <= 1;
    } else if (auto v = value("--seed")) {
      ok = absl::SimpleAtoi(*v, &flags.seed);
    } else if (auto v = value("--images")) {
      ok = absl::SimpleAtoi(*v, &flags.images) && flags.images >= 0;
    } else if (auto v = value("--decision-db")) {
      flags.decision_db = std::string(*v);
      ok = !flags.decision_db.empty();
    } else if (auto v = value("--dump")) {
      flags.dump_path = std::string(*v);
      ok = !flags.dump_path.empty();
    } else if (auto v = value("--modes")) {
      flags.modes.clear();
      for (absl::string_view m : absl::StrSplit(*v, ',')) {
        ok = ok && (m == "nodes" || m == "names");
        flags.modes.push_back(m == "names");
      }
    } else if (auto v = value("--warm")) {
      for (absl::string_view entry : absl::StrSplit(*v, ',')) {
        std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(entry, absl::MaxSplits(':', 1));
        int gpus = 0, replicas = 0;
        ok = ok && absl::SimpleAtoi(parts.first, &gpus) && absl::SimpleAtoi(parts.second, &replicas) && gpus > 0 &&
             gpus <= 64 && replicas > 0;
        flags.warm.emplace_back(gpus, replicas);
      }
    } else if (auto v = value("--max-body-mb")) {
      ok = absl::SimpleAtoi(*v, &flags.max_body_mb) && flags.max_body_mb > 0;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "extender_bench: bad argument %s\n", argv[i]);
      return false;
    }
  }
  if (flags.quick) {
    if (!iterations_set) flags.iterations = 100;
    if (!duration_set) flags.duration_s = 2;
  }
  return true;
}

// Cycles for `nodes` candidates: `iterations` at 100 nodes, proportionally fewer above, at least 5.
int CyclesFor(const Flags& flags, int nodes) {
  return std::max(5, static_cast<int>(static_cast<int64_t>(flags.iterations) * 100 / nodes));
}

// ------------------------------------------------------------------------------------------- input

struct InstanceType {
  const char* name;
  const char* product;
  const char* family;
  const char* gpu_memory;
  const char* compute_major;
  const char* cpu;
  const char* memory_ki;
  const char* efa;
  int weight;  // share of the fleet, percent
};

constexpr InstanceType kInstanceTypes[] = {
    {"p4d.24xlarge", "NVIDIA-A100-SXM4-40GB", "ampere", "40960", "8", "96", "1176430876Ki", "4", 35},
    {"p5.48xlarge", "NVIDIA-H100-80GB-HBM3", "hopper", "81559", "9", "192", "2097152000Ki", "32", 30},
    {"g5.48xlarge", "NVIDIA-A10G", "ampere", "23028", "8", "192", "781471100Ki", "1", 20},
    {"p3.16xlarge", "Tesla-V100-SXM2-16GB", "volta", "16384", "7", "64", "503358728Ki", "0", 15},
};

constexpr const char* kZones[] = {"us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"};

// Images a GPU node typically has pulled: system daemons, the GPU operator, and a few training images.
constexpr const char* kImages[] = {
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni-init",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-ebs-csi-driver",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/csi-node-driver-registrar",
    "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/livenessprobe",
    "nvcr.io/nvidia/gpu-operator",
    "nvcr.io/nvidia/k8s-device-plugin",
    "nvcr.io/nvidia/gpu-feature-discovery",
    "nvcr.io/nvidia/k8s/dcgm-exporter",
    "nvcr.io/nvidia/k8s/container-toolkit",
    "nvcr.io/nvidia/cloud-native/k8s-driver-manager",
    "nvcr.io/nvidia/cloud-native/gpu-operator-validator",
    "registry.k8s.io/nfd/node-feature-discovery",
    "public.ecr.aws/aws-observability/aws-for-fluent-bit",
    "quay.io/prometheus/node-exporter",
    "nvcr.io/nvidia/pytorch",
    "ml-registry.example.com/research/llm-trainer",
    "ml-registry.example.com/research/data-loader",
};
// Past kImages, a node that has run many jobs keeps several versions of the training images.
constexpr const char* kJobImages[] = {
    "nvcr.io/nvidia/pytorch",
    "ml-registry.example.com/research/llm-trainer",
    "ml-registry.example.com/research/data-loader",
    "ml-registry.example.com/research/eval-harness",
};

std::string Hex(std::mt19937_64& rng, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(digits), '0');
  for (char& c : out) c = kDigits[rng() % 16];
  return out;
}

std::string Uuid(std::mt19937_64& rng) {
  return absl::StrCat(Hex(rng, 8), "-", Hex(rng, 4), "-", Hex(rng, 4), "-", Hex(rng, 4), "-", Hex(rng, 12));
}

const InstanceType& PickType(std::mt19937_64& rng) {
  int roll = static_cast<int>(rng() % 100);
  for (const InstanceType& type : kInstanceTypes) {
    if (roll < type.weight) return type;
    roll -= type.weight;
  }
  return kInstanceTypes[0];
}

json Condition(const char* type, const char* status, const char* reason, const char* message) {
  return {{"type", type},
          {"status", status},
          {"lastHeartbeatTime", "2024-06-03T11:42:17Z"},
          {"lastTransitionTime", "2024-05-14T08:22:09Z"},
          {"reason", reason},
          {"message", message}};
}

// A v1.Node as the API server returns it (managedFields omitted: kube-scheduler's informers trim them).
json MakeNode(std::mt19937_64& rng, int index, const InstanceType& type, int image_count, std::string& name) {
  const int a = 16 + index / 65536, b = (index / 256) % 256, c = index % 256;
  const std::string ip = absl::StrCat("10.", a, ".", b, ".", c);
  name = absl::StrCat("ip-10-", a, "-", b, "-", c, ".us-west-2.compute.internal");
  const std::string zone = kZones[rng() % 4];
  const std::string instance_id = absl::StrCat("i-0", Hex(rng, 16));
  const std::string nodegroup = absl::StrCat("gpu-", absl::StrReplaceAll(type.name, {{".", "-"}}));
  json labels = {
      {"beta.kubernetes.io/arch", "amd64"},
      {"beta.kubernetes.io/instance-type", type.name},
      {"beta.kubernetes.io/os", "linux"},
      {"eks.amazonaws.com/capacityType", "ON_DEMAND"},
      {"eks.amazonaws.com/nodegroup", nodegroup},
      {"eks.amazonaws.com/nodegroup-image", "ami-0c5f1e1b8f4a7d3e2"},
      {"eks.amazonaws.com/sourceLaunchTemplateId", "lt-0a1b2c3d4e5f60718"},
      {"eks.amazonaws.com/sourceLaunchTemplateVersion", "7"},
      {"failure-domain.beta.kubernetes.io/region", "us-west-2"},
      {"failure-domain.beta.kubernetes.io/zone", zone},
      {"k8s.io/cloud-provider-aws", "5a1c8e0e1f3d4b2a9c7e6f5d4c3b2a19"},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/hostname", name},
      {"kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", type.name},
      {"topology.ebs.csi.aws.com/zone", zone},
      {"topology.kubernetes.io/region", "us-west-2"},
      {"topology.kubernetes.io/zone", zone},
      {"feature.node.kubernetes.io/cpu-model.vendor_id", "Intel"},
      {"feature.node.kubernetes.io/kernel-version.full", "5.10.217-205.860.amzn2.x86_64"},
      {"feature.node.kubernetes.io/pci-10de.present", "true"},
      {"feature.node.kubernetes.io/system-os_release.ID", "amzn"},
      {"nvidia.com/cuda.driver.major", "535"},
      {"nvidia.com/cuda.driver.minor", "161"},
      {"nvidia.com/cuda.driver.rev", "08"},
      {"nvidia.com/cuda.runtime.major", "12"},
      {"nvidia.com/cuda.runtime.minor", "2"},
      {"nvidia.com/gfd.timestamp", "1717414937"},
      {"nvidia.com/gpu.compute.major", type.compute_major},
      {"nvidia.com/gpu.compute.minor", "0"},
      {"nvidia.com/gpu.count", "8"},
      {"nvidia.com/gpu.deploy.container-toolkit", "true"},
      {"nvidia.com/gpu.deploy.dcgm-exporter", "true"},
      {"nvidia.com/gpu.deploy.device-plugin", "true"},
      {"nvidia.com/gpu.deploy.driver", "pre-installed"},
      {"nvidia.com/gpu.deploy.gpu-feature-discovery", "true"},
      {"nvidia.com/gpu.deploy.operator-validator", "true"},
      {"nvidia.com/gpu.family", type.family},
      {"nvidia.com/gpu.machine", type.name},
      {"nvidia.com/gpu.memory", type.gpu_memory},
      {"nvidia.com/gpu.present", "true"},
      {"nvidia.com/gpu.product", type.product},
      {"nvidia.com/gpu.replicas", "1"},
      {"nvidia.com/mig.capable", std::string(type.family) == "volta" ? "false" : "true"},
      {"nvidia.com/mig.strategy", "single"},
  };
  json annotations = {
      {"alpha.kubernetes.io/provided-node-ip", ip},
      {"csi.volume.kubernetes.io/nodeid", absl::StrCat("{\"ebs.csi.aws.com\":\"", instance_id, "\"}")},
      {"nfd.node.kubernetes.io/feature-labels",
       "cpu-model.vendor_id,kernel-version.full,pci-10de.present,system-os_release.ID"},
      {"nfd.node.kubernetes.io/master.version", "v0.14.2"},
      {"nfd.node.kubernetes.io/worker.version", "v0.14.2"},
      {"node.alpha.kubernetes.io/ttl", "0"},
      {"nvidia.com/gpu-driver-upgrade-enabled", "true"},
      {"volumes.kubernetes.io/controller-managed-attach-detach", "true"},
  };
  json metadata = {{"name", name},
                   {"uid", Uuid(rng)},
                   {"resourceVersion", std::to_string(100000000 + rng() % 900000000)},
                   {"creationTimestamp", "2024-05-14T08:21:37Z"},
                   {"labels", std::move(labels)},
                   {"annotations", std::move(annotations)}};
  json spec = {{"providerID", absl::StrCat("aws:///", zone, "/", instance_id)},
               {"taints", json::array({{{"key", "nvidia.com/gpu"}, {"value", "true"}, {"effect", "NoSchedule"}}})}};
  const auto resources = [&](bool allocatable) {
    return json{{"cpu", allocatable ? absl::StrCat(std::stoi(type.cpu) * 1000 - 1930, "m") : std::string(type.cpu)},
                {"ephemeral-storage", allocatable ? "1846542914720" : "2003691500Ki"},
                {"hugepages-1Gi", "0"},
                {"hugepages-2Mi", "0"},
                {"memory", type.memory_ki},
                {"nvidia.com/gpu", "8"},
                {"pods", "737"},
                {"vpc.amazonaws.com/efa", type.efa}};
  };
  json images = json::array();
  for (size_t i = 0; i < static_cast<size_t>(image_count); ++i) {
    const char* image = i < std::size(kImages) ? kImages[i] : kJobImages[i % std::size(kJobImages)];
    const std::string tag = absl::StrCat("v", 1 + rng() % 3, ".", rng() % 20, ".", rng() % 10);
    images.push_back({{"names", {absl::StrCat(image, "@sha256:", Hex(rng, 64)), absl::StrCat(image, ":", tag)}},
                      {"sizeBytes", 20000000 + rng() % 9000000000ULL}});
  }
  json status = {
      {"capacity", resources(false)},
      {"allocatable", resources(true)},
      {"conditions",
       json::array({Condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    Condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    Condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    Condition("KernelDeadlock", "False", "KernelHasNoDeadlock", "kernel has no deadlock"),
                    Condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")})},
      {"addresses", json::array({{{"type", "InternalIP"}, {"address", ip}},
                                 {{"type", "InternalDNS"}, {"address", name}},
                                 {{"type", "Hostname"}, {"address", name}}})},
      {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
      {"nodeInfo",
       {{"machineID", Hex(rng, 32)},
        {"systemUUID", Uuid(rng)},
        {"bootID", Uuid(rng)},
        {"kernelVersion", "5.10.217-205.860.amzn2.x86_64"},
        {"osImage", "Amazon Linux 2"},
        {"containerRuntimeVersion", "containerd://1.7.11"},
        {"kubeletVersion", "v1.29.3-eks-ae9a62a"},
        {"kubeProxyVersion", "v1.29.3-eks-ae9a62a"},
        {"operatingSystem", "linux"},
        {"architecture", "amd64"}}},
      {"images", std::move(images)},
  };
  return {{"kind", "Node"},
          {"apiVersion", "v1"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

// A pending v1.Pod of a training job: one container asking for `gpus` GPUs.
json MakePod(std::mt19937_64& rng, int index, int gpus, bool nv_required) {
  const std::string job = absl::StrCat("llm-pretrain-", index / 8);
  const std::string name = absl::StrCat(job, "-worker-", index % 8, "-", Hex(rng, 5));
  const std::string job_uid = Uuid(rng);
  json annotations = {{"kubectl.kubernetes.io/default-container", "trainer"}};
  if (nv_required) {
    annotations["topofit.io/min-link"] = "NV";
    annotations["topofit.io/topology-policy"] = "required";
  }
  const json resources = {{"cpu", std::to_string(gpus * 10)},
                          {"memory", absl::StrCat(gpus * 120, "Gi")},
                          {"nvidia.com/gpu", std::to_string(gpus)}};
  json container = {
      {"name", "trainer"},
      {"image", "ml-registry.example.com/research/llm-trainer:v2.14.1"},
      {"command", {"torchrun"}},
      {"args", {"--nnodes=4", "--nproc-per-node=8", "train.py", "--config=/etc/trainer/config.yaml"}},
      {"env", json::array({{{"name", "NCCL_DEBUG"}, {"value", "WARN"}},
                           {{"name", "NCCL_SOCKET_IFNAME"}, {"value", "eth0"}},
                           {{"name", "FI_PROVIDER"}, {"value", "efa"}},
                           {{"name", "WANDB_PROJECT"}, {"value", "pretrain"}},
                           {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.name"}}}}}}})},
      {"resources", {{"limits", resources}, {"requests", resources}}},
      {"volumeMounts", json::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}},
                                    {{"name", "data"}, {"mountPath", "/data"}},
                                    {{"name", "kube-api-access-x7k2p"},
                                     {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                                     {"readOnly", true}}})},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "File"},
      {"imagePullPolicy", "IfNotPresent"},
  };
  return {
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"generateName", absl::StrCat(job, "-worker-", index % 8, "-")},
        {"namespace", "ml-research"},
        {"uid", Uuid(rng)},
        {"resourceVersion", std::to_string(200000000 + rng() % 900000000)},
        {"creationTimestamp", "2024-06-03T11:40:02Z"},
        {"labels", {{"app", "llm-pretrain"}, {"batch.kubernetes.io/job-name", job}, {"job-name", job},
                    {"batch.kubernetes.io/controller-uid", job_uid}, {"controller-uid", job_uid},
                    {"team", "research"}}},
        {"annotations", std::move(annotations)},
        {"ownerReferences", json::array({{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", job},
                                          {"uid", job_uid}, {"controller", true}, {"blockOwnerDeletion", true}}})}}},
      {"spec",
       {{"containers", json::array({std::move(container)})},
        {"volumes", json::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "64Gi"}}}},
                                 {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "pretrain-data"}}}},
                                 {{"name", "kube-api-access-x7k2p"},
                                  {"projected", {{"defaultMode", 420},
                                                 {"sources", json::array({{{"serviceAccountToken", {{"expirationSeconds", 3607}, {"path", "token"}}}},
                                                                          {{"configMap", {{"name", "kube-root-ca.crt"}, {"items", json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}}})}}}}})},
        {"restartPolicy", "Never"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"serviceAccountName", "trainer"},
        {"serviceAccount", "trainer"},
        {"securityContext", json::object()},
        {"schedulerName", "default-scheduler"},
        {"tolerations", json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}},
                                     {{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
                                     {{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}}})},
        {"priority", 0},
        {"enableServiceLinks", true},
        {"preemptionPolicy", "PreemptLowerPriority"}}},
      {"status", {{"phase", "Pending"}, {"qosClass", "Guaranteed"}}},
  };
}

struct Fleet {
  std::vector<std::string> names;
  std::vector<std::string> node_json;  // serialized, as sent in Nodes.items
  std::vector<std::string> pod_json;
  struct Report {
    std::string uid, node;
    int gpus = 0;
    std::string ids;  // "" when reported by count only
  };
  std::vector<Report> in_use;
};

Fleet MakeFleet(const Flags& flags, int nodes) {
  std::mt19937_64 rng(flags.seed);
  Fleet fleet;
  for (int i = 0; i < nodes; ++i) {
    std::string name;
    const InstanceType& type = PickType(rng);
    fleet.node_json.push_back(MakeNode(rng, i, type, flags.images, name).dump());
    fleet.names.push_back(std::move(name));
    if (static_cast<double>(rng() % 10000) < flags.in_use * 10000) {
      // One or two pods holding 1, 2 or 4 GPUs; most report their ids, some only a count.
      int next = 0;
      const int pods = 1 + static_cast<int>(rng() % 2);
      for (int p = 0; p < pods; ++p) {
        const int gpus = 1 << (rng() % 3);
        if (next + gpus > 8) break;
        Fleet::Report report{absl::StrCat("running-", i, "-", p), fleet.names.back(), gpus, ""};
        if (rng() % 5 != 0) {
          std::vector<int> ids;
          for (int g = next; g < next + gpus; ++g) ids.push_back(g);
          report.ids = absl::StrJoin(ids, ",");
        }
        next += gpus;
        fleet.in_use.push_back(std::move(report));
      }
    }
  }
  constexpr int kPods = 256;
  constexpr int kGpuChoices[] = {1, 1, 1, 2, 2, 2, 4, 4, 4, 8, 8};
  for (int i = 0; i < kPods; ++i) {
    const int gpus = kGpuChoices[rng() % std::size(kGpuChoices)];
    const bool nv_required = gpus > 1 && rng() % 10 < 4;
    fleet.pod_json.push_back(MakePod(rng, i, gpus, nv_required).dump());
  }
  return fleet;
}

// ExtenderArgs as kube-scheduler's encoding/json writes it (field order of the Go struct).
std::string FullArgs(const std::string& pod, const std::vector<std::string>& node_json, const std::vector<size_t>& which) {
  size_t bytes = pod.size() + 64;
  for (size_t i : which) bytes += node_json[i].size() + 1;
  std::string out;
  out.reserve(bytes);
  absl::StrAppend(&out, "{\"Pod\":", pod, ",\"Nodes\":{\"metadata\":{},\"items\":[");
  for (size_t k = 0; k < which.size(); ++k) {
    if (k > 0) out.push_back(',');
    out.append(node_json[which[k]]);
  }
  out.append("]},\"NodeNames\":null}");
  return out;
}

std::string NameArgs(const std::string& pod, const std::vector<std::string>& names, const std::vector<size_t>& which) {
  std::string out = absl::StrCat("{\"Pod\":", pod, ",\"Nodes\":null,\"NodeNames\":[");
  for (size_t k = 0; k < which.size(); ++k) absl::StrAppend(&out, k > 0 ? "," : "", "\"", names[which[k]], "\"");
  out.append("]}");
  return out;
}

// ------------------------------------------------------------------------------------------ server

class SucceedingKubeClient final : public scheduler::KubeClient {
 public:
  absl::StatusOr<kube::Pod> GetPod(const std::string&, const std::string& name) override {
    return absl::NotFoundError(absl::StrCat("pods \"", name, "\" not found"));
  }
  absl::Status AnnotatePod(const std::string&, const std::string&, const kube::StringMap&) override {
    return absl::OkStatus();
  }
  absl::Status RemovePodAnnotation(const std::string&, const std::string&, const std::string&) override {
    return absl::OkStatus();
  }
  absl::Status BindPod(const std::string&, const std::string&, const std::string&, const std::string&,
                       const kube::StringMap&) override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<int>> WorkloadGangMinCount(const kube::Pod&) override {
    return absl::NotFoundError("no Workload API objects");
  }
};

// Buffers that never change, as a cluster's are between two CapacityBuffer events.
class FixedWarm final : public scheduler::WarmSource {
 public:
  explicit FixedWarm(const std::vector<std::pair<int, int>>& shapes) {
    std::vector<decision::WarmShape> warm;
    for (const auto& [gpus, replicas] : shapes) {
      kube::Pod pod;
      kube::Container& container = pod.spec.containers.emplace_back();
      container.resources.limits[kube::kResourceNvidiaGpu] = int64_t{gpus} * 1000;
      if (gpus >= 4) pod.metadata.annotations[std::string(kube::kMinLinkAnnotation)] = "NV";
      absl::StatusOr<decision::GpuDemand> demand = decision::DemandOf(pod);
      if (!demand.ok()) {
        std::fprintf(stderr, "--warm: %s\n", std::string(demand.status().message()).c_str());
        std::exit(1);
      }
      warm.push_back({*std::move(demand), replicas});
    }
    warm_ = std::make_shared<const decision::WarmCapacity>(std::move(warm));
  }
  std::shared_ptr<const decision::WarmCapacity> Warm() const override { return warm_; }

 private:
  std::shared_ptr<const decision::WarmCapacity> warm_;
};

// The wiring of tests/scheduler/extender_http_test.cc, with the production defaults except the body limit.
struct Server {
  server::RealClock clock;
  server::MetricsRegistry registry;
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  std::unique_ptr<ledger::Ledger> ledger = ledger::NewInMemoryLedger(clock);
  SucceedingKubeClient kube;
  scheduler::ExtenderMetrics metrics = scheduler::ExtenderMetrics::Create(registry);
  spdlog::logger log{"extender", std::make_shared<spdlog::sinks::null_sink_mt>()};
  // With --decision-db: declared before the extender that records to them, so they outlive it.
  std::unique_ptr<history::DecisionStore> decisions;
  std::unique_ptr<history::AsyncRecorder> recorder;
  scheduler::Extender extender{*state, *ledger, kube, metrics, log, clock};
  std::unique_ptr<FixedWarm> warm;
  std::unique_ptr<server::HttpServer> http;
  int port = 0;

  explicit Server(const Flags& flags) {
    if (!flags.warm.empty()) {
      warm = std::make_unique<FixedWarm>(flags.warm);
      extender.KeepWarmFrom(warm.get());
    }
    if (!flags.decision_db.empty()) {
      absl::StatusOr<std::unique_ptr<history::DecisionStore>> opened =
          history::DecisionStore::Open(flags.decision_db == ":memory:" ? "" : flags.decision_db);
      if (!opened.ok()) {
        std::fprintf(stderr, "--decision-db: %s\n", std::string(opened.status().message()).c_str());
        std::exit(1);
      }
      decisions = *std::move(opened);
      recorder = std::make_unique<history::AsyncRecorder>(*decisions);
      extender.RecordDecisionsTo(recorder.get());
    }
    server::HttpServerOptions options;
    options.address = "127.0.0.1";
    options.max_body_bytes = flags.max_body_mb << 20;
    options.threads = flags.server_threads;
    options.idle_timeout = absl::Seconds(60);
    options.request_timeout = absl::Seconds(60);
    options.write_timeout = absl::Seconds(60);
    options.name = "extender";
    absl::StatusOr<std::unique_ptr<server::HttpServer>> created = server::HttpServer::Create(options, registry);
    if (!created.ok()) {
      std::fprintf(stderr, "server: %s\n", std::string(created.status().message()).c_str());
      std::exit(1);
    }
    http = *std::move(created);
    scheduler::RegisterExtenderRoutes(*http, extender, kAdminToken);
    absl::StatusOr<int> started = http->Start();
    if (!started.ok()) {
      std::fprintf(stderr, "server: %s\n", std::string(started.status().message()).c_str());
      std::exit(1);
    }
    port = *started;
  }
};

// POST and fail loudly on anything but 200: a benchmark of error replies measures nothing. The reply is
// valid until the client's next call.
absl::string_view MustPost(KeepAliveClient& client, const char* path, absl::string_view body,
                           const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  const int status = client.Post(path, body, headers);
  if (status < 0) {
    std::fprintf(stderr, "POST %s: %s\n", path, client.error().c_str());
    std::exit(1);
  }
  if (status != 200) {
    std::fprintf(stderr, "POST %s: %d %s\n", path, status, std::string(client.reply().substr(0, 300)).c_str());
    std::exit(1);
  }
  return client.reply();
}

// Teaches the server every node (a full-Nodes filter, in chunks) and reports the GPUs in use.
void Prepare(Server& server, const Fleet& fleet) {
  KeepAliveClient client(server.port);
  constexpr size_t kChunk = 500;
  for (size_t start = 0; start < fleet.names.size(); start += kChunk) {
    std::vector<size_t> which;
    for (size_t i = start; i < std::min(fleet.names.size(), start + kChunk); ++i) which.push_back(i);
    MustPost(client, "/filter", FullArgs(fleet.pod_json[0], fleet.node_json, which));
  }
  const std::vector<std::pair<std::string, std::string>> auth = {{"Authorization", absl::StrCat("Bearer ", kAdminToken)}};
  for (const Fleet::Report& report : fleet.in_use) {
    json body = {{"uid", report.uid}, {"namespace", "ml-research"}, {"name", report.uid}, {"node", report.node},
                 {"gpus", report.gpus}};
    if (!report.ids.empty()) body["gpuIds"] = report.ids;
    MustPost(client, "/admin/pods", body.dump(), auth);
  }
}

// ------------------------------------------------------------------------------------------- stats

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double CpuMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
double ThreadCpuMs() { return CpuMs(CLOCK_THREAD_CPUTIME_ID); }
// CPU time from a mark on: OthersMs() is what the rest of the process (the server, while this thread waits
// on its call) used since. On a loaded machine wall time is mostly waiting for a core; this is not.
struct CpuMark {
  double process = CpuMs(CLOCK_PROCESS_CPUTIME_ID), thread = ThreadCpuMs();
  double OthersMs() const { return (CpuMs(CLOCK_PROCESS_CPUTIME_ID) - process) - (ThreadCpuMs() - thread); }
};

std::string Bytes(double b) {
  if (b >= 1 << 20) return absl::StrFormat("%.1f MiB", b / (1 << 20));
  if (b >= 1 << 10) return absl::StrFormat("%.1f KiB", b / (1 << 10));
  return absl::StrFormat("%.0f B", b);
}

// ------------------------------------------------------------------------------------------ cycles

// The nodes that passed a filter: the candidates minus FailedNodes and FailedAndUnresolvableNodes.
// Parsed without building the (possibly large) Nodes echo.
std::vector<size_t> Passing(absl::string_view reply, const std::vector<std::string>& names, const std::vector<size_t>& candidates) {
  const json parsed = json::parse(reply.begin(), reply.end(), [](int depth, json::parse_event_t event, json& parsed) {
    return !(depth == 1 && event == json::parse_event_t::key && parsed == "Nodes");
  });
  std::set<std::string> failed;
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    if (auto it = parsed.find(key); it != parsed.end() && it->is_object()) {
      for (auto node = it->begin(); node != it->end(); ++node) failed.insert(node.key());
    }
  }
  std::vector<size_t> out;
  for (size_t i : candidates) {
    if (!failed.count(names[i])) out.push_back(i);
  }
  return out;
}

struct CycleRow {
  int nodes = 0;
  bool cache = false;
  int cycles = 0;
  double filter_bytes = 0, prioritize_bytes = 0, filter_reply_bytes = 0, passed = 0;
  double filter_p50 = 0, filter_p99 = 0, prio_p50 = 0, prio_p99 = 0, pair_p50 = 0, pair_p99 = 0;
  double pair_server_cpu_p50 = 0;  // ms of CPU the server used for the pair (user + system)
};

CycleRow RunCycles(Server& server, const Fleet& fleet, int nodes, bool cache, int cycles, std::ostream* dump) {
  KeepAliveClient client(server.port);
  std::vector<size_t> candidates(static_cast<size_t>(nodes));
  for (size_t i = 0; i < candidates.size(); ++i) candidates[i] = i;
  std::string nodes_part;
  const auto args = [&](const std::string& pod, const std::vector<size_t>& which) {
    return cache ? NameArgs(pod, fleet.names, which) : FullArgs(pod, fleet.node_json, which);
  };
  CycleRow row{nodes, cache, cycles};
  std::vector<double> filter_ms, prio_ms, pair_ms, server_cpu_ms;
  const int warmup = 2;
  for (int c = -warmup; c < cycles; ++c) {
    const std::string& pod = fleet.pod_json[static_cast<size_t>(c + warmup) % fleet.pod_json.size()];
    const std::string filter_body = args(pod, candidates);
    const CpuMark filter_cpu;
    const Clock::time_point t0 = Clock::now();
    const absl::string_view filter_reply = MustPost(client, "/filter", filter_body);
    const Clock::time_point t1 = Clock::now();
    const double filter_server_cpu = filter_cpu.OthersMs();
    const size_t filter_reply_size = filter_reply.size();
    if (dump != nullptr) *dump << nodes << (cache ? " NodeNames" : " Nodes") << " cycle " << c << " filter " << filter_reply << "\n";
    const std::vector<size_t> passed = Passing(filter_reply, fleet.names, candidates);
    const std::string prio_body = args(pod, passed);
    const CpuMark prio_cpu;
    const Clock::time_point t2 = Clock::now();
    const absl::string_view prio_reply = MustPost(client, "/prioritize", prio_body);
    const Clock::time_point t3 = Clock::now();
    if (dump != nullptr) *dump << nodes << (cache ? " NodeNames" : " Nodes") << " cycle " << c << " prioritize " << prio_reply << "\n";
    const double prio_server_cpu = prio_cpu.OthersMs();
    if (c < 0) continue;
    server_cpu_ms.push_back(filter_server_cpu + prio_server_cpu);
    filter_ms.push_back(Ms(t1 - t0));
    prio_ms.push_back(Ms(t3 - t2));
    pair_ms.push_back(Ms(t1 - t0) + Ms(t3 - t2));
    row.filter_bytes += static_cast<double>(filter_body.size()) / cycles;
    row.prioritize_bytes += static_cast<double>(prio_body.size()) / cycles;
    row.filter_reply_bytes += static_cast<double>(filter_reply_size) / cycles;
    row.passed += static_cast<double>(passed.size()) / cycles;
  }
  row.filter_p50 = Percentile(filter_ms, 50);
  row.filter_p99 = Percentile(filter_ms, 99);
  row.prio_p50 = Percentile(prio_ms, 50);
  row.prio_p99 = Percentile(prio_ms, 99);
  row.pair_p50 = Percentile(pair_ms, 50);
  row.pair_p99 = Percentile(pair_ms, 99);
  row.pair_server_cpu_p50 = Percentile(server_cpu_ms, 50);
  return row;
}

// --------------------------------------------------------------------------------------- throughput

struct ThroughputRow {
  bool cache = false;
  int threads = 0;
  double seconds = 0;
  int64_t requests = 0;
  double p50 = 0, p99 = 0;
};

ThroughputRow RunThroughput(Server& server, const Fleet& fleet, bool cache, int threads, double seconds) {
  std::vector<size_t> candidates(100);
  for (size_t i = 0; i < candidates.size(); ++i) candidates[i] = i;
  std::vector<std::string> bodies;
  for (size_t p = 0; p < 32; ++p) {
    bodies.push_back(cache ? NameArgs(fleet.pod_json[p], fleet.names, candidates)
                           : FullArgs(fleet.pod_json[p], fleet.node_json, candidates));
  }
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  const Clock::time_point start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      KeepAliveClient client(server.port);
      std::vector<double>& mine = latencies[static_cast<size_t>(t)];
      for (size_t k = static_cast<size_t>(t); !stop.load(std::memory_order_relaxed); ++k) {
        const Clock::time_point t0 = Clock::now();
        MustPost(client, "/filter", bodies[k % bodies.size()]);
        mine.push_back(Ms(Clock::now() - t0));
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& w : workers) w.join();
  ThroughputRow row{cache, threads, std::chrono::duration<double>(Clock::now() - start).count()};
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  row.requests = static_cast<int64_t>(all.size());
  row.p50 = Percentile(all, 50);
  row.p99 = Percentile(all, 99);
  return row;
}

// ---------------------------------------------------------------------------------------- breakdown

// Median wall-clock and median CPU milliseconds of `reps` runs of `f` on this thread. On a shared machine
// the CPU time is the figure that does not depend on the load.
struct Timing {
  double wall = 0, cpu = 0;
  std::string ToString() const { return absl::StrFormat("%.2f (%.2f)", wall, cpu); }
};
template <typename F>
Timing MedianMs(int reps, F f) {
  std::vector<double> wall, cpu;
  for (int r = 0; r < reps; ++r) {
    const double c0 = ThreadCpuMs();
    const Clock::time_point t0 = Clock::now();
    f();
    wall.push_back(Ms(Clock::now() - t0));
    cpu.push_back(ThreadCpuMs() - c0);
  }
  return {Percentile(wall, 50), Percentile(cpu, 50)};
}

template <typename T>
void Keep(const T& value) {
  asm volatile("" : : "r"(&value) : "memory");
}

void PrintBreakdown(const Flags& flags, Server& server, const Fleet& fleet) {
  std::printf("\n### In-process breakdown of one full-Nodes request (no HTTP): median wall ms (median CPU ms)\n\n");
  std::printf("| nodes | body | nlohmann parse (reference) | ParseArgs, nodes known | ParseArgs, nodes new | Filter | "
              "EncodeFilterResult | ~ExtenderArgs | Prioritize + serialize | filter path total |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int nodes : flags.sizes) {
    std::vector<size_t> which(static_cast<size_t>(nodes));
    for (size_t i = 0; i < which.size(); ++i) which[i] = i;
    const std::string body = FullArgs(fleet.pod_json[9], fleet.node_json, which);
    const int reps = std::max(3, (flags.quick ? 20 : 60) * 100 / nodes);
    Timing parse;  // the document's destruction not included, as for ParseArgs below
    {
      std::vector<double> w, c;
      for (int r = 0; r < reps; ++r) {
        std::optional<json> doc;
        const Timing t = MedianMs(1, [&] { doc = json::parse(body); });
        w.push_back(t.wall), c.push_back(t.cpu);
      }
      parse = {Percentile(w, 50), Percentile(c, 50)};
    }
    // As the server parses (the nodes are known at their resourceVersion, so only located), and as it
    // parses nodes it has not seen (every node decoded). Parse and destroy timed apart, one request
    // alive at a time (as in the server, which reuses freed memory).
    std::optional<codec::ExtenderArgs> parsed;
    Timing args_ms, destroy;
    {
      std::vector<double> aw, ac, dw, dc;
      for (int r = 0; r < reps; ++r) {
        Timing a = MedianMs(1, [&] { parsed = *server.extender.ParseArgs(body); });
        Timing d = MedianMs(1, [&] { parsed.reset(); });
        aw.push_back(a.wall), ac.push_back(a.cpu), dw.push_back(d.wall), dc.push_back(d.cpu);
      }
      args_ms = {Percentile(aw, 50), Percentile(ac, 50)};
      destroy = {Percentile(dw, 50), Percentile(dc, 50)};
    }
    const Timing args_new = MedianMs(reps, [&] { Keep(codec::ParseExtenderArgs(body)); });
    const codec::ExtenderArgs args = *server.extender.ParseArgs(body);
    const Timing filter = MedianMs(reps, [&] { Keep(server.extender.Filter(args)); });
    const codec::ExtenderFilterResult result = *server.extender.Filter(args);
    const Timing serialize = MedianMs(reps, [&] { Keep(codec::EncodeFilterResult(result)); });
    const Timing prioritize = MedianMs(reps, [&] {
      Keep(codec::SerializeHostPriorityList(*server.extender.Prioritize(args)));
    });
    const Timing total{args_ms.wall + filter.wall + serialize.wall + destroy.wall,
                       args_ms.cpu + filter.cpu + serialize.cpu + destroy.cpu};
    std::printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", nodes,
                Bytes(static_cast<double>(body.size())).c_str(), parse.ToString().c_str(), args_ms.ToString().c_str(),
                args_new.ToString().c_str(), filter.ToString().c_str(), serialize.ToString().c_str(),
                destroy.ToString().c_str(), prioritize.ToString().c_str(), total.ToString().c_str());
    std::fflush(stdout);
  }
  // Learning nodes never seen: topology resolution and snapshots (UpsertNode past the resourceVersion check).
  {
    const int nodes = flags.sizes.back();
    std::vector<size_t> which(static_cast<size_t>(nodes));
    for (size_t i = 0; i < which.size(); ++i) which[i] = i;
    const std::string body = FullArgs(fleet.pod_json[9], fleet.node_json, which);
    const codec::ExtenderArgs args = *codec::ParseExtenderArgs(body);
    std::vector<double> cold, warm;
    for (int r = 0; r < 3; ++r) {
      Server fresh(flags);
      fresh.http->Stop();
      cold.push_back(MedianMs(1, [&] { Keep(fresh.extender.Filter(args)); }).cpu);
      warm.push_back(MedianMs(1, [&] { Keep(fresh.extender.Filter(args)); }).cpu);
    }
    std::printf("\nFilter of %d nodes never seen (topology resolution + snapshots): %.2f ms; the same nodes again "
                "(resourceVersion unchanged): %.2f ms (CPU; medians of 3, fresh state each).\n",
                nodes, Percentile(cold, 50), Percentile(warm, 50));
  }
}

// -------------------------------------------------------------------------------------------- main

std::string LoadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string a, b, c;
  file >> a >> b >> c;
  return absl::StrCat(a, " ", b, " ", c);
}

std::string CpuModel() {
  std::ifstream file("/proc/cpuinfo");
  for (std::string line; std::getline(file, line);) {
    if (absl::StartsWith(line, "model name")) return std::string(absl::StripAsciiWhitespace(line.substr(line.find(':') + 1)));
  }
  return "unknown";
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  std::sort(flags.sizes.begin(), flags.sizes.end());
  const int max_nodes = std::max(flags.sizes.back(), 100);

  std::printf("## extender_bench\n\nCPU: %s, %u hardware threads; load average at start: %s\n", CpuModel().c_str(),
              std::thread::hardware_concurrency(), LoadAverage().c_str());
  const Fleet fleet = MakeFleet(flags, max_nodes);
  double node_bytes = 0, pod_bytes = 0;
  for (const std::string& n : fleet.node_json) node_bytes += static_cast<double>(n.size());
  for (const std::string& p : fleet.pod_json) pod_bytes += static_cast<double>(p.size());
  std::printf("Input: %d nodes of %.0f bytes of JSON on average (8 GPUs, %d images each), %zu pods reported holding "
              "GPUs (in-use share %.2f), pods of %.0f bytes on average; seed %llu; server threads %d, body limit %zu MiB.\n",
              max_nodes, node_bytes / max_nodes, flags.images, fleet.in_use.size(), flags.in_use,
              pod_bytes / static_cast<double>(fleet.pod_json.size()), static_cast<unsigned long long>(flags.seed),
              flags.server_threads, flags.max_body_mb);

  std::printf("Decisions recorded: %s\n", flags.decision_db.empty() ? "no" : flags.decision_db.c_str());
  Server server(flags);
  Prepare(server, fleet);

  std::ofstream dump;
  if (!flags.dump_path.empty()) dump.open(flags.dump_path);
  if (flags.cycles) {
    std::printf("\n### Scheduling cycles: one /filter then one /prioritize (ms per HTTP call, client-measured)\n\n");
    std::printf("| nodes | mode | cycles | filter req | passed | filter reply | prioritize req | filter p50 | filter p99 | "
                "prioritize p50 | prioritize p99 | pair p50 | pair p99 | pair server CPU p50 |\n"
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int nodes : flags.sizes) {
      for (bool cache : flags.modes) {
        const CycleRow r = RunCycles(server, fleet, nodes, cache, CyclesFor(flags, nodes),
                                     dump.is_open() ? &dump : nullptr);
        std::printf("| %d | %s | %d | %s | %.0f | %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", r.nodes,
                    r.cache ? "NodeNames" : "Nodes", r.cycles, Bytes(r.filter_bytes).c_str(), r.passed,
                    Bytes(r.filter_reply_bytes).c_str(), Bytes(r.prioritize_bytes).c_str(), r.filter_p50, r.filter_p99,
                    r.prio_p50, r.prio_p99, r.pair_p50, r.pair_p99, r.pair_server_cpu_p50);
        std::fflush(stdout);
      }
    }
  }
  if (flags.throughput) {
    std::printf("\n### Throughput: 100-node /filter, %d client threads, keep-alive\n\n", flags.client_threads);
    std::printf("| mode | threads | seconds | requests | requests/s | p50 ms | p99 ms |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (bool cache : flags.modes) {
      const ThroughputRow r = RunThroughput(server, fleet, cache, flags.client_threads, flags.duration_s);
      std::printf("| %s | %d | %.1f | %lld | %.0f | %.3f | %.3f |\n", r.cache ? "NodeNames" : "Nodes", r.threads,
                  r.seconds, static_cast<long long>(r.requests), static_cast<double>(r.requests) / r.seconds, r.p50,
                  r.p99);
      std::fflush(stdout);
    }
  }
  if (flags.breakdown) PrintBreakdown(flags, server, fleet);
  if (server.recorder != nullptr) {
    server.recorder->Flush();
    std::printf("\nDecision records written: %lld\n", static_cast<long long>(server.decisions->Count().value_or(-1)));
  }
  std::printf("\nLoad average at end: %s\n", LoadAverage().c_str());
  server.http->Stop();
  return 0;
}

}  // namespace
}  // namespace topofit::bench

int main(int argc, char** argv) { return topofit::bench::Main(argc, argv); }
