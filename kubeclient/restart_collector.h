#pragma once

// The restart collector (issue 35): on every increase of a container's restartCount it records why, in the
// decision history, with what the restart left behind: the fields k8s-pod-restart-info-collector gathers
// (the last termination, the container's state, the pod's Warning events, the previous container's log
// tail) and what only topofit knows (the pod's GPU ids, those of them the node agent reports unhealthy, the
// Xid codes, a classification:
// decision/restart_diagnosis.h). The record also becomes a Warning Event on the pod (history/pod_events.h)
// through the process's recorder, and `topofit explain restart NS/NAME` tells it.
//
// Fed by a watch of bound pods (a container restarts only on a node). The first LIST sets the baseline and
// reports nothing; after a relist (the watch was down) an increase counts, so no restart is lost to a gap.
// The watch thread only compares counts and queues; one worker reads events and logs through the API
// (its own client and QPS budget) and records. A full queue drops the restart and counts it.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/logger.h>

#include "decision/pod_scope.h"
#include "history/recorder.h"
#include "kube/container_status.h"
#include "kube/objects.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/list_watcher.h"
#include "server/clock.h"
#include "server/metrics.h"

namespace topofit::kubeclient {

struct RestartCollectorOptions {
  decision::PodScope scope;                        // the pods whose restarts are recorded
  int log_tail_lines = 50;                         // the reference's
  int64_t log_tail_bytes = 16 * 1024;
  int max_warnings = 20;
  size_t queue_capacity = 1000;
  // Called with each restart record as it goes to the history, on the thread that records it (the
  // notifications: notify/restart_notifier.h). Must not block.
  std::function<void(const kube::Pod&, const history::Record&)> on_restart;
};

class RestartCollector {
 public:
  // `api`, `recorder`, `clock`, `log` and `registry` must outlive this object. Starts the worker.
  RestartCollector(KubeApi& api, history::DecisionRecorder& recorder, const server::Clock& clock, spdlog::logger& log,
                   server::MetricsRegistry& registry, RestartCollectorOptions options = {});
  ~RestartCollector();  // Stop()
  RestartCollector(const RestartCollector&) = delete;
  RestartCollector& operator=(const RestartCollector&) = delete;

  // For a ListWatcher of "/api/v1/pods" (field selector "spec.nodeName!="): pods as the API sent them.
  ListWatcher::Sink Sink();

  // Waits up to `timeout` until every restart queued so far is recorded or dropped; true when it is.
  bool WaitIdle(absl::Duration timeout);
  // Records what is queued, then joins the worker. Idempotent.
  void Stop();

 private:
  struct Seen {
    std::map<std::string, int32_t> restarts;  // by container name ("init:" prefixed for init containers)
  };
  struct Job {
    kube::Pod pod;
    std::vector<kube::ContainerStatus> restarted;
  };

  // Decodes a pod; false when it cannot be read (counted by the watcher as undecodable).
  bool Decode(const nlohmann::json& object, kube::Pod& pod, std::vector<kube::ContainerStatus>& containers) const;
  // Compares with what was seen of the pod and remembers the new counts; the containers that restarted.
  std::vector<kube::ContainerStatus> Compare(const kube::Pod& pod, const std::vector<kube::ContainerStatus>& containers,
                                             bool report);
  void Enqueue(Job job);
  // What the pod's node says: of the pod's GPUs those its agent reports unhealthy, its conditions and its
  // Warning events (a GET of the node and a LIST of its events; what fails is logged and left empty).
  struct NodeEvidence {
    std::vector<int> unhealthy_gpus;
    std::string conditions;
    std::vector<std::string> warnings;
  };
  NodeEvidence NodeEvidenceOf(const kube::Pod& pod);
  void Run();
  // Records a restart (the job's first container) from the pod, its Warning events, the log tail and what
  // its node says.
  void RecordRestart(const Job& job, const std::vector<std::string>& warnings, const std::string& log_tail,
                     const NodeEvidence& node);

  KubeApi& api_;
  history::DecisionRecorder& recorder_;
  const server::Clock& clock_;
  spdlog::logger& log_;
  const RestartCollectorOptions options_;
  server::Counter& restarts_;  // topofit_restarts_total{cause}
  server::Counter& unread_;    // topofit_restarts_unread_total{reason}

  // The watch thread's alone (both callbacks run on it).
  std::map<std::string, Seen> seen_;  // by pod uid
  // While a LIST is delivered page by page: what seen_ held for the pods the pages have not yet brought.
  std::map<std::string, Seen> relisted_from_;
  bool listed_ = false;

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace topofit::kubeclient
