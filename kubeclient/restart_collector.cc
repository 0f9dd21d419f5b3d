#include "kubeclient/restart_collector.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codec/container_status_json.h"
#include "codec/kube_json.h"
#include "decision/pod_demand.h"
#include "decision/restart_diagnosis.h"
#include "history/from_decisions.h"
#include "history/pod_events.h"
#include "kube/topofit_annotations.h"
#include "server/logging.h"

namespace topofit::kubeclient {
namespace {

// What one restart record keeps of text a container or an event wrote: enough to diagnose from, small
// enough that a restart storm cannot swell the history.
constexpr size_t kMaxMessageBytes = 4096;  // the kubelet's own cap on a termination message
constexpr size_t kMaxWarningBytes = 512;

std::string ContainerKey(const kube::ContainerStatus& container) {
  return container.init ? absl::StrCat("init:", container.name) : container.name;
}

// The reason of a DisruptionTarget condition that holds: the pod is being preempted, evicted or deleted.
std::string DisruptionOf(const kube::Pod& pod) {
  for (const kube::Condition& condition : pod.status.conditions) {
    if (condition.type == "DisruptionTarget" && condition.status == "True") {
      return condition.reason.empty() ? std::string("DisruptionTarget") : condition.reason;
    }
  }
  return "";
}

}  // namespace

RestartCollector::NodeEvidence RestartCollector::NodeEvidenceOf(const kube::Pod& pod) {
  NodeEvidence evidence;
  if (pod.spec.node_name.empty()) return evidence;
  const auto unread = [&](const absl::Status& status) {
    server::LogEvent(log_, "restart_node_unread", {{"node", pod.spec.node_name}, {"error", std::string(status.message())}},
                     spdlog::level::warn);
  };
  if (absl::StatusOr<KubeApi::NodeSummary> node = api_.GetNodeSummary(pod.spec.node_name); node.ok()) {
    evidence.conditions = history::TruncateUtf8(std::move(node->conditions), kMaxMessageBytes);
    const auto ids = pod.metadata.annotations.find(std::string(kube::kGpuIdsAnnotation));
    const auto unhealthy = node->annotations.find(std::string(kube::kUnhealthyGpusAnnotation));
    if (ids != pod.metadata.annotations.end() && unhealthy != node->annotations.end()) {
      evidence.unhealthy_gpus = decision::PodGpusReportedUnhealthy(ids->second, unhealthy->second);
    }
  } else {
    unread(node.status());
  }
  if (absl::StatusOr<std::vector<std::string>> warnings = api_.NodeWarnings(pod.spec.node_name, options_.max_warnings);
      warnings.ok()) {
    for (std::string& warning : *warnings) evidence.warnings.push_back(history::TruncateUtf8(std::move(warning), kMaxWarningBytes));
  } else {
    unread(warnings.status());
  }
  return evidence;
}

RestartCollector::RestartCollector(KubeApi& api, history::DecisionRecorder& recorder, const server::Clock& clock,
                                   spdlog::logger& log, server::MetricsRegistry& registry,
                                   RestartCollectorOptions options)
    : api_(api),
      recorder_(recorder),
      clock_(clock),
      log_(log),
      options_(std::move(options)),
      restarts_(registry.AddCounter("topofit_restarts_total",
                                    "Container restarts recorded in the decision history, by diagnosed cause.",
                                    {"cause"})),
      unread_(registry.AddCounter("topofit_restarts_unread_total",
                                   "Restarts recorded without the pod's events and log (the queue was full: a "
                                   "restart storm), by reason.",
                                   {"reason"})),
      worker_([this] { Run(); }) {}

RestartCollector::~RestartCollector() { Stop(); }

void RestartCollector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

ListWatcher::Sink RestartCollector::Sink() {
  ListWatcher::Sink sink;
  sink.on_list_page = [this](std::vector<nlohmann::json> page, bool first) {
    int64_t undecodable = 0;
    if (first) {
      // A LIST that did not complete moved some pods from relisted_from_ into seen_, with counts as new as
      // any: both together are what the pods were seen at.
      for (auto& [uid, seen] : seen_) relisted_from_[uid] = std::move(seen);
      seen_.clear();
    }
    std::map<std::string, Seen>& before = relisted_from_;
    for (const nlohmann::json& object : page) {
      kube::Pod pod;
      std::vector<kube::ContainerStatus> containers;
      if (!Decode(object, pod, containers)) {
        ++undecodable;
        continue;
      }
      if (!options_.scope.Covers(pod.metadata.namespace_name, pod.metadata.name)) continue;
      // A pod seen before the relist keeps its counts: an increase while the watch was down is reported.
      if (auto it = before.find(pod.metadata.uid); it != before.end()) seen_[pod.metadata.uid] = std::move(it->second);
      std::vector<kube::ContainerStatus> restarted = Compare(pod, containers, listed_);
      if (!restarted.empty()) Enqueue(Job{std::move(pod), std::move(restarted)});
    }
    return undecodable;
  };
  sink.on_sync = [this] {
    relisted_from_.clear();
    listed_ = true;
  };
  sink.on_event = [this](WatchEventType type, const nlohmann::json& object) {
    kube::Pod pod;
    std::vector<kube::ContainerStatus> containers;
    if (!Decode(object, pod, containers)) return false;
    if (type == WatchEventType::kDeleted) {
      seen_.erase(pod.metadata.uid);
      return true;
    }
    if (!options_.scope.Covers(pod.metadata.namespace_name, pod.metadata.name)) return true;
    std::vector<kube::ContainerStatus> restarted = Compare(pod, containers, /*report=*/true);
    if (!restarted.empty()) Enqueue(Job{std::move(pod), std::move(restarted)});
    return true;
  };
  return sink;
}

bool RestartCollector::Decode(const nlohmann::json& object, kube::Pod& pod,
                              std::vector<kube::ContainerStatus>& containers) const {
  absl::StatusOr<kube::Pod> decoded = codec::PodFromJson(object);
  if (!decoded.ok()) return false;
  absl::StatusOr<std::vector<kube::ContainerStatus>> statuses = codec::ContainerStatusesFromJson(object);
  if (!statuses.ok()) return false;
  pod = *std::move(decoded);
  containers = *std::move(statuses);
  return true;
}

std::vector<kube::ContainerStatus> RestartCollector::Compare(const kube::Pod& pod,
                                                             const std::vector<kube::ContainerStatus>& containers,
                                                             bool report) {
  const bool known = seen_.count(pod.metadata.uid) > 0;
  Seen& seen = seen_[pod.metadata.uid];
  std::vector<kube::ContainerStatus> restarted;
  for (const kube::ContainerStatus& container : containers) {
    const std::string key = ContainerKey(container);
    auto it = seen.restarts.find(key);
    // A pod or container seen for the first time sets the baseline: its earlier restarts were before us.
    if (report && known && it != seen.restarts.end() && container.restart_count > it->second) {
      restarted.push_back(container);
    }
    seen.restarts[key] = container.restart_count;
  }
  return restarted;
}

void RestartCollector::Enqueue(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() < options_.queue_capacity && !stopping_) {
      queue_.push_back(std::move(job));
      wake_.notify_one();
      return;
    }
  }
  // A restart storm: recorded at once from what the watch carried, without the API reads, never lost.
  unread_.Inc({"queue-full"});
  for (const kube::ContainerStatus& container : job.restarted) {
    RecordRestart(Job{job.pod, {container}}, {}, "", {});
  }
}

bool RestartCollector::WaitIdle(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [this] { return queue_.empty() && !busy_; });
}

void RestartCollector::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything queued is recorded
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    // Read the pod's events and each restarted container's log; record.
    std::vector<std::string> warnings;
    absl::StatusOr<std::vector<std::string>> listed =
        api_.PodWarnings(job.pod.metadata.namespace_name, job.pod.metadata.uid, options_.max_warnings);
    if (listed.ok()) {
      warnings = *std::move(listed);
    } else {
      server::LogEvent(log_, "restart_events_unread",
                       {{"pod", absl::StrCat(job.pod.metadata.namespace_name, "/", job.pod.metadata.name)},
                        {"error", std::string(listed.status().message())}},
                       spdlog::level::warn);
    }
    const NodeEvidence node = NodeEvidenceOf(job.pod);
    for (const kube::ContainerStatus& container : job.restarted) {
      absl::StatusOr<std::string> tail =
          api_.PreviousLogTail(job.pod.metadata.namespace_name, job.pod.metadata.name, container.name,
                               options_.log_tail_lines, options_.log_tail_bytes);
      Job one{job.pod, {container}};
      RecordRestart(one, warnings, tail.ok() ? *tail : std::string(), node);
    }
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  busy_ = false;
  idle_.notify_all();
}

void RestartCollector::RecordRestart(const Job& job, const std::vector<std::string>& warnings,
                                     const std::string& log_tail, const NodeEvidence& node) {
  const kube::Pod& pod = job.pod;
  const kube::ContainerStatus& container = job.restarted.front();
  decision::RestartEvidence evidence;
  evidence.container = container;
  for (const std::string& warning : warnings) evidence.warnings.push_back(history::TruncateUtf8(warning, kMaxWarningBytes));
  evidence.disruption = DisruptionOf(pod);
  evidence.unhealthy_gpus = node.unhealthy_gpus;
  const decision::RestartDiagnosis diagnosis = decision::DiagnoseRestart(evidence);

  history::RestartDetail detail;
  detail.container = container.name;
  detail.restart_count = container.restart_count;
  if (container.last_termination) {
    detail.exit_code = container.last_termination->exit_code;
    detail.signal = container.last_termination->signal;
    detail.termination_reason = container.last_termination->reason;
    detail.termination_message = history::TruncateUtf8(container.last_termination->message, kMaxMessageBytes);
  }
  detail.waiting_reason = container.waiting_reason;
  detail.diagnosis = diagnosis.reason;
  detail.warnings = std::move(evidence.warnings);
  detail.log_tail = history::TruncateUtf8(log_tail, static_cast<size_t>(std::max<int64_t>(0, options_.log_tail_bytes)));
  if (auto ids = pod.metadata.annotations.find(std::string(kube::kGpuIdsAnnotation)); ids != pod.metadata.annotations.end()) {
    detail.gpu_ids = ids->second;
  }
  detail.unhealthy_gpus = evidence.unhealthy_gpus;
  detail.xids = diagnosis.xids;
  detail.node_conditions = node.conditions;
  detail.node_warnings = node.warnings;
  const absl::StatusOr<decision::GpuDemand> demand = decision::DemandOf(pod);
  const std::string key = absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name);
  restarts_.Inc({std::string(decision::RestartCauseName(diagnosis.cause))});
  server::LogEvent(log_, "restart",
                   {{"pod", key}, {"container", container.name}, {"restarts", container.restart_count},
                    {"cause", std::string(decision::RestartCauseName(diagnosis.cause))}, {"reason", diagnosis.reason}});
  history::Record record = history::RestartRecord(clock_.Now(), {pod.metadata.uid, key}, pod.spec.node_name,
                                                  demand.ok() ? demand->request.gpus : 0, diagnosis.cause,
                                                  std::move(detail));
  if (options_.on_restart) options_.on_restart(pod, record);
  recorder_.Record(std::move(record));
}

}  // namespace topofit::kubeclient
