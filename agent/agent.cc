#include "agent/agent.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codec/topology_json.h"
#include "kube/topofit_annotations.h"
#include "server/logging.h"

namespace topofit::agent {
namespace {

// Before the first successful discovery, nvidia-smi is tried again this often (or at the health
// interval, when that is shorter).
constexpr absl::Duration kDiscoveryRetry = absl::Seconds(5);
constexpr absl::Duration kRegisterTimeout = absl::Seconds(5);
// After a refused registration, the next try waits this long (doubling up to the maximum).
constexpr absl::Duration kRegisterBackoff = absl::Milliseconds(500);
constexpr absl::Duration kRegisterMaxBackoff = absl::Seconds(10);
constexpr absl::Duration kPodResourcesTimeout = absl::Seconds(5);
// How often the correction loop looks for pod events between its periodic rounds.
constexpr absl::Duration kCorrectionPoll = absl::Milliseconds(200);

}  // namespace

absl::StatusOr<std::unique_ptr<Agent>> Agent::Create(AgentOptions options, CommandRunner& runner,
                                                     kubeclient::RestClient& rest, server::MetricsRegistry& registry,
                                                     spdlog::logger& log) {
  if (options.node_name.empty()) return absl::InvalidArgumentError("the node name is required (--node-name or $NODE_NAME)");
  if (options.clock == nullptr) return absl::InvalidArgumentError("the agent needs a clock");
  if (options.resource_name.find('/') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("resource name \"", options.resource_name,
                                                   "\" is not an extended resource name (vendor-domain/name)"));
  }
  if (options.health_interval <= absl::ZeroDuration() || options.correction_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the health and correction intervals must be positive");
  }
  return std::unique_ptr<Agent>(new Agent(std::move(options), runner, rest, registry, log));
}

Agent::Agent(AgentOptions options, CommandRunner& runner, kubeclient::RestClient& rest,
             server::MetricsRegistry& registry, spdlog::logger& log)
    : options_(std::move(options)),
      log_(log),
      rest_(rest),
      metrics_(AgentMetrics::Create(registry)),
      discovery_(runner, options_.nvidia_smi),
      kube_(rest),
      annotator_(kube_, log),
      service_(devices_, pods_, metrics_, log, options_.strategies,
               [this](const ChosenPod& pod, topology::GpuSet given) {
                 const std::pair<std::string, std::string> name = absl::StrSplit(pod.key, absl::MaxSplits('/', 1));
                 annotator_.Set(name.first, name.second, std::string(kube::kGpuAllocatedAnnotation), given.ToString());
               }),
      socket_(service_, absl::StrCat(options_.device_plugin_dir, "/", options_.endpoint)),
      pod_resources_(options_.pod_resources_socket, kPodResourcesTimeout) {
  if (options_.decisions != nullptr) {
    service_.RecordDecisionsTo({options_.decisions, options_.node_name, options_.clock});
  }
  kubeclient::ListWatchOptions watch = options_.pod_watch;
  watch.field_selector = absl::StrCat("spec.nodeName=", options_.node_name);
  kubeclient::WatchHandler<kube::Pod> handler = pods_.Handler();
  handler.on_sync = [this, sync = handler.on_sync](std::vector<kube::Pod> pods) {
    sync(std::move(pods));
    absl::MutexLock lock(&mu_);
    pods_changed_ = true;
  };
  handler.on_event = [this, changed = handler.on_event](kubeclient::WatchEventType type, kube::Pod pod) {
    changed(type, std::move(pod));
    absl::MutexLock lock(&mu_);
    pods_changed_ = true;
  };
  pod_watch_ = kubeclient::ListWatcher::ForPods(rest_, watch, std::move(handler));
}

Agent::~Agent() { Stop(); }

void Agent::Start() {
  if (started_) return;
  started_ = true;
  server::LogEvent(log_, "agent_start", {{"node", options_.node_name},
                                         {"resource", options_.resource_name},
                                         {"socket", absl::StrCat(options_.device_plugin_dir, "/", options_.endpoint)}});
  pod_watch_->Start();
  gpu_thread_ = std::thread([this] { GpuLoop(); });
  kubelet_thread_ = std::thread([this] { KubeletLoop(); });
  correction_thread_ = std::thread([this] { CorrectionLoop(); });
}

void Agent::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  stop_.Notify();
  service_.Stop();
  for (std::thread* thread : {&gpu_thread_, &kubelet_thread_, &correction_thread_}) {
    if (thread->joinable()) thread->join();
  }
  socket_.Stop();
  pod_watch_->Stop();
  annotator_.Stop();
}

std::string Agent::NotReadyReason() const {
  {
    absl::MutexLock lock(&mu_);
    if (devices_.Snapshot().version == 0) return absl::StrCat("GPUs not discovered: ", discovery_error_);
    if (!registration_error_.empty()) return absl::StrCat("not registered with the kubelet: ", registration_error_);
  }
  if (!pod_watch_->synced()) {
    return absl::StrCat("the pods of node ", options_.node_name, " are not listed yet (is the API server reachable?)");
  }
  return "";
}

void Agent::GpuLoop() {
  const absl::Duration retry = std::min(kDiscoveryRetry, options_.health_interval);
  do {
    CheckGpus();
    PublishNodeAnnotations();
  } while (!stop_.WaitForNotificationWithTimeout(devices_.Snapshot().version == 0 ? retry : options_.health_interval));
}

void Agent::CheckGpus() {
  if (devices_.Snapshot().version == 0) {
    absl::StatusOr<NodeGpus> found = discovery_.Discover();
    absl::MutexLock lock(&mu_);
    if (!found.ok()) {
      metrics_.discovery_errors.Inc();
      discovery_error_ = std::string(found.status().message());
      server::LogEvent(log_, "gpu_discovery", {{"error", discovery_error_}}, spdlog::level::err);
      return;
    }
    known_ = found->queried;
    discovery_error_.clear();
    devices_.SetDiscovered(*found);
    server::LogEvent(log_, "gpu_discovery",
                     {{"gpus", found->queried.size()}, {"product", found->queried.front().name}});
  } else {
    absl::StatusOr<std::vector<QueriedGpu>> now = discovery_.Query();
    if (!now.ok()) {
      metrics_.discovery_errors.Inc();
      server::LogEvent(log_, "gpu_health", {{"error", std::string(now.status().message())}}, spdlog::level::err);
    }
    std::vector<bool> healthy;
    {
      absl::MutexLock lock(&mu_);
      healthy = HealthAfterCheck(known_, now);
    }
    if (devices_.SetHealth(healthy)) {
      const DeviceSnapshot snapshot = devices_.Snapshot();
      server::LogEvent(log_, "gpu_health",
                       {{"healthy", snapshot.Healthy().ToString()}, {"of", snapshot.devices.size()}},
                       spdlog::level::warn);
    }
  }
  UpdateDeviceGauge();
}

void Agent::UpdateDeviceGauge() {
  const DeviceSnapshot snapshot = devices_.Snapshot();
  const int healthy = snapshot.Healthy().size();
  metrics_.devices.Set(healthy, {kHealthy});
  metrics_.devices.Set(static_cast<double>(snapshot.devices.size()) - healthy, {kUnhealthy});
}

// The annotations the agent keeps on its node: the topology descriptor, and the GPUs its last check found
// unhealthy (absent while all are healthy: the restart collector reads it). One GET, and one merge patch of
// what differs when the node carries something else.
void Agent::PublishNodeAnnotations() {
  const DeviceSnapshot snapshot = devices_.Snapshot();
  if (!snapshot.topology) return;
  const std::string descriptor = codec::TopologyToJson(*snapshot.topology).dump();
  topology::GpuSet unhealthy;
  for (const DeviceInfo& device : snapshot.devices) {
    if (!device.healthy) unhealthy = unhealthy.with(device.gpu);
  }
  const std::string unhealthy_ids = unhealthy.empty() ? std::string() : unhealthy.ToString();
  const std::string wanted = absl::StrCat(descriptor, "\n", unhealthy_ids);
  {
    absl::MutexLock lock(&mu_);
    if (published_ == wanted) return;
  }
  const std::string path = absl::StrCat("/api/v1/nodes/", kubeclient::EscapePathSegment(options_.node_name));
  absl::StatusOr<nlohmann::json> node = rest_.Get(path);
  absl::Status status = node.status();
  if (node.ok()) {
    const nlohmann::json annotations = (*node)["metadata"].value("annotations", nlohmann::json::object());
    const auto carried = [&annotations](absl::string_view key) {
      const auto it = annotations.find(std::string(key));
      return it != annotations.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const bool topology_differs = carried(kube::kGpuTopologyAnnotation) != descriptor;
    const bool health_differs = carried(kube::kUnhealthyGpusAnnotation) != unhealthy_ids;
    if (topology_differs || health_differs) {
      nlohmann::json changed = nlohmann::json::object();
      if (topology_differs) changed[std::string(kube::kGpuTopologyAnnotation)] = descriptor;
      if (health_differs) {
        changed[std::string(kube::kUnhealthyGpusAnnotation)] =
            unhealthy_ids.empty() ? nlohmann::json(nullptr) : nlohmann::json(unhealthy_ids);
      }
      status = rest_.Patch(path, {{"metadata", {{"annotations", changed}}}}, "application/merge-patch+json").status();
      const std::string result = status.ok() ? "ok" : "error";
      if (topology_differs) metrics_.topology_published.Inc({result});
      if (health_differs) metrics_.health_published.Inc({result});
      server::LogEvent(log_, "publish_node_annotations",
                       {{"node", options_.node_name}, {"topology", topology_differs},
                        {"unhealthy_gpus", unhealthy_ids}, {"result", status.ok() ? "ok" : std::string(status.message())}},
                       status.ok() ? spdlog::level::info : spdlog::level::warn);
    }
  } else {
    server::LogEvent(log_, "publish_node_annotations",
                     {{"node", options_.node_name}, {"result", std::string(status.message())}}, spdlog::level::warn);
  }
  if (status.ok()) {
    absl::MutexLock lock(&mu_);
    published_ = wanted;
  }
}

void Agent::KubeletLoop() {
  const std::string kubelet_socket = absl::StrCat(options_.device_plugin_dir, "/kubelet.sock");
  const std::string own_socket = absl::StrCat(options_.device_plugin_dir, "/", options_.endpoint);
  FileIdentity registered_with;
  absl::Duration next_attempt = -absl::InfiniteDuration();  // monotonic
  absl::Duration backoff = kRegisterBackoff;
  do {
    if (devices_.Snapshot().version == 0) continue;  // nothing to list yet
    const FileIdentity kubelet = IdentityOf(kubelet_socket);
    if (!kubelet.exists) {
      if (registered_with.exists) {
        server::LogEvent(log_, "kubelet_gone", {{"socket", kubelet_socket}}, spdlog::level::warn);
        registered_with = {};
      }
      absl::MutexLock lock(&mu_);
      registration_error_ = absl::StrCat("no kubelet socket at ", kubelet_socket);
      continue;
    }
    // A new kubelet (its socket recreated), or our socket deleted under us: serve afresh and register.
    if (kubelet == registered_with && IdentityOf(own_socket).exists) continue;
    if (options_.clock->Monotonic() < next_attempt) continue;
    absl::Status status = socket_.Start();
    if (status.ok()) {
      status = RegisterWithKubelet(kubelet_socket, RegisterRequestFor(options_.endpoint, options_.resource_name),
                                   kRegisterTimeout);
    }
    metrics_.registrations.Inc({status.ok() ? "ok" : "error"});
    server::LogEvent(log_, "register",
                     {{"resource", options_.resource_name},
                      {"endpoint", options_.endpoint},
                      {"result", status.ok() ? "ok" : std::string(status.message())}},
                     status.ok() ? spdlog::level::info : spdlog::level::err);
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      registered_with = kubelet;
      registration_error_.clear();
      backoff = kRegisterBackoff;
    } else {
      registered_with = {};
      registration_error_ = std::string(status.message());
      next_attempt = options_.clock->Monotonic() + backoff;
      backoff = std::min(backoff * 2, kRegisterMaxBackoff);
    }
  } while (!stop_.WaitForNotificationWithTimeout(options_.kubelet_poll));
}

void Agent::CorrectionLoop() {
  absl::Duration next_round = -absl::InfiniteDuration();  // monotonic
  do {
    bool due = options_.clock->Monotonic() >= next_round;
    {
      absl::MutexLock lock(&mu_);
      due = due || pods_changed_;
      pods_changed_ = false;
    }
    if (!due || !pod_watch_->synced() || devices_.Snapshot().version == 0) continue;
    CorrectOnce();
    next_round = options_.clock->Monotonic() + options_.correction_interval;
  } while (!stop_.WaitForNotificationWithTimeout(kCorrectionPoll));
}

void Agent::CorrectOnce() {
  absl::StatusOr<v1::ListPodResourcesResponse> list = pod_resources_.List();
  if (!list.ok()) {
    server::LogEvent(log_, "gpu_ids_correction", {{"error", std::string(list.status().message())}}, spdlog::level::warn);
    return;
  }
  int skipped = 0;
  const std::vector<GpuIdsCorrection> corrections = NotYetSent(
      CorrectionsFor(HeldByPods(*list, options_.resource_name), devices_.Snapshot(),
                     [this](const std::string& namespace_name, const std::string& name) {
                       return pods_.Find(namespace_name, name);
                     },
                     &skipped),
      &corrections_sent_);
  for (const GpuIdsCorrection& correction : corrections) {
    metrics_.mismatches_corrected.Inc();
    server::LogEvent(log_, "gpu_ids_correction",
                     {{"pod", absl::StrCat(correction.namespace_name, "/", correction.name)},
                      {"was", correction.was},
                      {"holds", correction.gpu_ids}},
                     spdlog::level::warn);
    annotator_.Set(correction.namespace_name, correction.name, std::string(kube::kGpuIdsAnnotation), correction.gpu_ids);
  }
}

}  // namespace topofit::agent
