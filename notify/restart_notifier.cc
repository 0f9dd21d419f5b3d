#include "notify/restart_notifier.h"

#include <utility>

namespace topofit::notify {

RestartNotifier::RestartNotifier(RestartNoticeOptions options, std::vector<std::unique_ptr<WebhookSink>> sinks,
                                 const server::Clock& clock, server::MetricsRegistry& registry)
    : clock_(clock),
      skipped_(registry.AddCounter("topofit_restart_notifications_skipped_total",
                                   "Restarts recorded but not sent to the webhooks, by why: muted (the pod had a "
                                   "message within the mute window), past-max-restarts, exited-zero, out-of-scope.",
                                   {"reason"})),
      gate_(std::move(options)),
      sinks_(std::move(sinks)) {}

void RestartNotifier::Restarted(const kube::Pod& pod, const history::Record& record) {
  RestartNotice notice;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const NoticeVerdict verdict = gate_.Admit(pod.metadata, record, clock_.Now());
    if (verdict != NoticeVerdict::kSend) {
      skipped_.Inc({std::string(NoticeVerdictName(verdict))});
      return;
    }
    notice.channel = gate_.ChannelOf(pod.metadata);
  }
  notice.record = record;
  for (const std::unique_ptr<WebhookSink>& sink : sinks_) sink->Offer(notice);
}

bool RestartNotifier::WaitIdle(absl::Duration timeout) {
  bool idle = true;
  for (const std::unique_ptr<WebhookSink>& sink : sinks_) idle = sink->WaitIdle(timeout) && idle;
  return idle;
}

void RestartNotifier::Stop() {
  for (const std::unique_ptr<WebhookSink>& sink : sinks_) sink->Stop();
}

}  // namespace topofit::notify
