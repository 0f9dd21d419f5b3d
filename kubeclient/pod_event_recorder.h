#pragma once

// Kubernetes Events (events.k8s.io/v1) on the pods topofit decides about: the decision records a person
// should see in `kubectl describe pod` (history/pod_events.h), aggregated into series as client-go's
// EventBroadcaster does (event_series.h).
//
// Never blocks a decision: Observe turns a record into its events on the caller's thread (most records give
// none) and pushes them onto a bounded queue (1,000, client-go's maxQueuedEvents); a full queue drops and
// counts. One worker drains it, aggregates, and writes through a RestClient of its own (its own QPS limit,
// so Events never queue ahead of a Binding); a write that fails after the client's retries is dropped and
// counted, as client-go gives up on an Event.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "history/pod_events.h"
#include "history/recorder.h"
#include "kubeclient/event_series.h"
#include "kubeclient/rest_client.h"
#include "server/clock.h"

namespace topofit::kubeclient {

struct PodEventOptions {
  size_t queue_capacity = 1000;
  std::string reporting_instance = "topofit";  // "topofit-<hostname>" in a server (DefaultReportingInstance)
  absl::Duration tick = absl::Seconds(10);     // how often (real time) finished series and heartbeats are written
};

struct PodEventHooks {
  std::function<void(absl::string_view write)> on_written{};  // "create" or "patch"
  std::function<void(absl::string_view why)> on_dropped{};    // "queue-full" or "write-failed"
};

// "topofit-<hostname>", as client-go's NewRecorder names the reporting instance.
std::string DefaultReportingInstance();

class PodEventRecorder final : public history::RecordObserver {
 public:
  // `rest`, `clock` and `log` must outlive this object. Starts the worker.
  PodEventRecorder(RestClient& rest, const server::Clock& clock, spdlog::logger& log, PodEventOptions options = {},
                   PodEventHooks hooks = {});
  ~PodEventRecorder() override;  // Stop()
  PodEventRecorder(const PodEventRecorder&) = delete;
  PodEventRecorder& operator=(const PodEventRecorder&) = delete;

  void Observe(const history::Record& record) override;
  // Queues one event observed now.
  void Emit(history::PodEvent event);
  // Waits up to `timeout` until everything queued so far is written or dropped; true when it is.
  bool WaitIdle(absl::Duration timeout);
  // Writes what is queued, drops the rest of the series' counts, joins the worker. Idempotent.
  void Stop();

 private:
  struct Queued {
    history::PodEvent event;
    absl::Time time;
  };
  void Run();
  void Write(const EventWrite& write);

  RestClient& rest_;
  const server::Clock& clock_;
  spdlog::logger& log_;
  const PodEventOptions options_;
  const PodEventHooks hooks_;
  EventSeriesCache cache_;  // the worker's alone
  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Queued> queue_;
  uint64_t queued_ = 0;
  uint64_t handled_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace topofit::kubeclient
