#include "kubeclient/pod_event_recorder.h"

#include <unistd.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/logging.h"

namespace topofit::kubeclient {

std::string DefaultReportingInstance() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return kReportingController;
  return absl::StrCat(kReportingController, "-", host);
}

PodEventRecorder::PodEventRecorder(RestClient& rest, const server::Clock& clock, spdlog::logger& log,
                                   PodEventOptions options, PodEventHooks hooks)
    : rest_(rest),
      clock_(clock),
      log_(log),
      options_(std::move(options)),
      hooks_(std::move(hooks)),
      cache_(options_.reporting_instance),
      worker_([this] { Run(); }) {}

PodEventRecorder::~PodEventRecorder() { Stop(); }

void PodEventRecorder::Observe(const history::Record& record) {
  for (history::PodEvent& event : history::PodEventsOf(record)) Emit(std::move(event));
}

void PodEventRecorder::Emit(history::PodEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_ && queue_.size() < options_.queue_capacity) {
      queue_.push_back(Queued{std::move(event), clock_.Now()});
      ++queued_;
      if (queue_.size() == 1) wake_.notify_one();
      return;
    }
  }
  if (hooks_.on_dropped) hooks_.on_dropped("queue-full");
}

bool PodEventRecorder::WaitIdle(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = queued_;
  return idle_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [&] { return handled_ >= target; });
}

void PodEventRecorder::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (worker_.joinable()) worker_.join();
}

void PodEventRecorder::Run() {
  absl::Time next_tick = clock_.Now() + options_.tick;
  for (;;) {
    std::deque<Queued> batch;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, absl::ToChronoMilliseconds(options_.tick), [&] { return stop_ || !queue_.empty(); });
      batch.swap(queue_);
      stopping = stop_;
    }
    for (const Queued& queued : batch) {
      if (std::optional<EventWrite> write = cache_.Observe(queued.event, queued.time)) Write(*write);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      handled_ += batch.size();
    }
    idle_.notify_all();
    if (stopping) return;
    const absl::Time now = clock_.Now();
    if (now >= next_tick || batch.empty()) {
      for (const EventWrite& write : cache_.Tick(now)) Write(write);
      next_tick = now + options_.tick;
    }
  }
}

void PodEventRecorder::Write(const EventWrite& write) {
  const std::string ns = write.event["metadata"]["namespace"].get<std::string>();
  const std::string name = write.event["metadata"]["name"].get<std::string>();
  absl::Status status;
  absl::string_view op = "create";
  if (write.series) {
    op = "patch";
    status = rest_.Patch(EventPath(ns, name), {{"series", write.event["series"]}},
                         "application/strategic-merge-patch+json")
                 .status();
    // The API server let it expire (or never had it): create it, series and all.
    if (absl::IsNotFound(status)) {
      op = "create";
      status = rest_.Post(EventsPath(ns), write.event).status();
    }
  } else {
    status = rest_.Post(EventsPath(ns), write.event).status();
  }
  if (status.ok()) {
    if (hooks_.on_written) hooks_.on_written(op);
    return;
  }
  if (hooks_.on_dropped) hooks_.on_dropped("write-failed");
  server::LogEvent(log_, "pod_event",
                   {{"pod", absl::StrCat(ns, "/", write.event["regarding"].value("name", ""))},
                    {"reason", write.event.value("reason", "")}, {"result", "dropped"},
                    {"error", std::string(status.message())}},
                   spdlog::level::warn);
}

}  // namespace topofit::kubeclient
