#pragma once

// Restart messages (issue 35): the restart collector hands each restart record here
// (RestartCollectorOptions::on_restart); the gate decides whether it is news (restart_notice.h) and every
// webhook sink gets it (webhook_sink.h). Restarts that are not sent are counted by why, so a quiet channel
// can be told from a broken one.

#include <memory>
#include <mutex>
#include <vector>

#include "history/record.h"
#include "kube/objects.h"
#include "notify/restart_notice.h"
#include "notify/webhook_sink.h"
#include "server/clock.h"
#include "server/metrics.h"

namespace topofit::notify {

class RestartNotifier {
 public:
  // `clock` and `registry` must outlive the notifier.
  RestartNotifier(RestartNoticeOptions options, std::vector<std::unique_ptr<WebhookSink>> sinks,
                  const server::Clock& clock, server::MetricsRegistry& registry);

  // A restart record of `pod`: to every sink when the gate lets it through. Never blocks on a sink; safe
  // from any thread.
  void Restarted(const kube::Pod& pod, const history::Record& record);
  // Waits for every sink (tests, and an orderly exit).
  bool WaitIdle(absl::Duration timeout);
  void Stop();

 private:
  const server::Clock& clock_;
  server::Counter& skipped_;  // topofit_restart_notifications_skipped_total{reason}
  std::mutex mu_;
  RestartNoticeGate gate_;  // guarded by mu_
  std::vector<std::unique_ptr<WebhookSink>> sinks_;
};

}  // namespace topofit::notify
