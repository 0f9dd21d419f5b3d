// Issue 35: a restart storm, 10,000 restarts in one minute over 500 crash-looping pods, through the whole
// path the extender runs: the restart collector fed by the watch (its API reads through a slow API server),
// the decision history's writer and store (the defaults: a 512 MB cap), and the notifier with a webhook. Every
// restart must be in the history; each pod gets one message (the mute window), the rest are counted as muted;
// nothing waits on the receiver, and every queue stays at its bound.

#include <catch2/catch.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "history/recorder.h"
#include "history/store.h"
#include "kubeclient/restart_collector.h"
#include "notify/restart_notifier.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/notify/webhook_receiver.h"
#include "tests/server/fake_clock.h"
#include "tests/server/rendered_metric.h"

namespace topofit::notify {
namespace {

using kubeclient::testing::kPatience;
using server::testing::RenderedValue;

nlohmann::json CrashLoopingPod(int pod, int restarts) {
  nlohmann::json json = kubeclient::testing::PodJson("ml", absl::StrCat("worker-", pod), "gpu-1", "topofit");
  json["metadata"]["uid"] = absl::StrCat("uid-", pod);
  json["spec"]["containers"][0]["name"] = "train";
  nlohmann::json status = {{"name", "train"}, {"restartCount", restarts}};
  if (restarts > 0) {
    status["lastState"] = {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}};
    status["state"] = {{"waiting", {{"reason", "CrashLoopBackOff"}}}};
  }
  json["status"]["containerStatuses"] = nlohmann::json::array({status});
  return json;
}

TEST_CASE("A restart storm of 10,000 a minute: all in the history, one message a pod, queues at their bounds",
          "[notify][restarts]") {
  constexpr int kPods = 500;
  constexpr int kRestartsEach = 20;
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  std::unique_ptr<kubeclient::RestClient> rest = kubeclient::testing::DirectClientFor(api, *certs);
  kubeclient::KubeApi kube(*rest);
  api.DelayReplies(absl::Milliseconds(5));  // the collector's reads fall behind: its queue fills
  std::unique_ptr<history::DecisionStore> store = history::DecisionStore::Open("").value();
  history::AsyncRecorder recorder(*store);
  server::FakeClock clock;
  server::MetricsRegistry registry;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());

  testing::WebhookReceiver receiver;
  WebhookSinkOptions sink_options;
  sink_options.queue_capacity = 100;
  std::vector<std::unique_ptr<WebhookSink>> sinks;
  sinks.push_back(std::make_unique<WebhookSink>(codec::ParseHttpUrl(receiver.url()).value(), sink_options, log, registry));
  RestartNotifier notifier({}, std::move(sinks), clock, registry);

  kubeclient::RestartCollectorOptions options;
  options.queue_capacity = 100;
  options.on_restart = [&notifier](const kube::Pod& pod, const history::Record& record) { notifier.Restarted(pod, record); };
  kubeclient::RestartCollector collector(kube, recorder, clock, log, registry, options);
  kubeclient::ListWatcher::Sink sink = collector.Sink();
  std::vector<nlohmann::json> listed;
  for (int p = 0; p < kPods; ++p) listed.push_back(CrashLoopingPod(p, 0));
  REQUIRE(sink.List(listed) == 0);

  // One minute: 10,000 watch events, each a restart, 6 ms apart.
  for (int round = 1; round <= kRestartsEach; ++round) {
    for (int p = 0; p < kPods; ++p) {
      clock.Advance(absl::Milliseconds(6));
      REQUIRE(sink.on_event(kubeclient::WatchEventType::kModified, CrashLoopingPod(p, round)));
    }
  }
  REQUIRE(collector.WaitIdle(kPatience));
  recorder.Flush();
  REQUIRE(notifier.WaitIdle(kPatience));

  // Nothing lost from the history, and what could not wait for the API is counted.
  CHECK(store->Count().value() == kPods * kRestartsEach);
  CHECK(RenderedValue(registry, "topofit_restarts_total{cause=\"application-error\"}") == kPods * kRestartsEach);
  CHECK(RenderedValue(registry, "topofit_restarts_unread_total{reason=\"queue-full\"}") > 0);
  // One message a pod: the other 19 restarts of each are muted. What the webhook's queue could not hold while
  // the receiver answered is dropped, never waited for.
  CHECK(RenderedValue(registry, "topofit_restart_notifications_skipped_total{reason=\"muted\"}") ==
        kPods * (kRestartsEach - 1));
  const double sent = RenderedValue(registry, "topofit_restart_notifications_total{sink=\"webhook\",result=\"sent\"}");
  const double dropped = RenderedValue(registry, "topofit_restart_notifications_total{sink=\"webhook\",result=\"dropped\"}");
  CHECK(sent + dropped == kPods);
  CHECK(sent >= sink_options.queue_capacity);
  std::set<std::string> told;
  for (const nlohmann::json& body : receiver.accepted()) told.insert(body["record"]["pods"][0]["pod"].get<std::string>());
  CHECK(told.size() == receiver.accepted().size());  // no pod told twice
  CHECK(receiver.accepted().size() == static_cast<size_t>(sent));
}

}  // namespace
}  // namespace topofit::notify
