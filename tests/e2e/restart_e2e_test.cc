// Issue 35: `topofit extender --live-state --collect-restarts` against the fake API server: a container of a
// bound GPU pod is OOM-killed and restarts; the restart, diagnosed, with the pod's Warning event and the
// previous container's log, is in the decision history, `topofit explain restart` tells it, and a Warning
// Event lands on the pod; with webhooks, Slack and a JSON receiver are told once per mute window.

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "cli/decision_history.h"
#include "cli/extender_command.h"
#include "history/explain_query.h"
#include "tests/cli/scratch_dir.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/notify/webhook_receiver.h"
#include "tests/server/test_certs.h"

namespace topofit {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::FakeApiServer;
using kubeclient::testing::Resource;

nlohmann::json RunningTrainer(int restarts) {
  nlohmann::json pod = testing::PendingGpuPod("trainer", 8, {{"topofit.io/gpu-ids", "0,1,2,3,4,5,6,7"}});
  pod["spec"]["nodeName"] = "gpu-0";
  pod["status"] = {{"phase", "Running"},
                   {"containerStatuses", {{{"name", "main"}, {"restartCount", restarts}}}}};
  if (restarts > 0) {
    pod["status"]["containerStatuses"][0]["lastState"] = {
        {"terminated", {{"exitCode", 137}, {"signal", 9}, {"reason", "OOMKilled"}}}};
  }
  return pod;
}

TEST_CASE("extender --collect-restarts: an OOM-killed GPU container is recorded, explained and told on the pod",
          "[e2e][restarts]") {
  std::unique_ptr<testing::TestCerts> certs = testing::TestCerts::Create().value();
  FakeApiServer api(*certs);
  api.Upsert(Resource::kNodes, testing::P4dNode("gpu-0"));
  api.Upsert(Resource::kPods, RunningTrainer(0));
  cli::testing::ScratchDir scratch("topofit-restart-e2e-test");
  spdlog::logger log("e2e", std::make_shared<spdlog::sinks::null_sink_mt>());
  cli::ProcessState process;
  cli::ExtenderOptions options = testing::LoopbackExtenderOptions(scratch, api.url(), certs->ca_cert_file());

  SECTION("it needs --live-state") {
    options.live_state = false;
    options.collect_restarts = true;
    CHECK_THAT(std::string(cli::BuildExtender(options, process, log, {}).status().message()),
               Catch::Contains("--collect-restarts: needs --live-state"));
  }
  SECTION("a restart") {
    options.collect_restarts = true;
    process.decisions = cli::OpenDecisionHistory("", options.decision_db_max_bytes, process.registry, log);
    REQUIRE(process.decisions.store != nullptr);
    absl::StatusOr<cli::ExtenderServers> extender = cli::BuildExtender(options, process, log, {});
    REQUIRE(extender.ok());
    REQUIRE(extender->restart_watch->WaitForSync(kubeclient::testing::kPatience));
    api.PutStoredObject("/api/v1/namespaces/ml/events/trainer.1",
                        {{"metadata", {{"name", "trainer.1"}, {"namespace", "ml"}}},
                         {"involvedObject", {{"kind", "Pod"}, {"uid", "uid-trainer"}}},
                         {"type", "Warning"}, {"reason", "BackOff"}, {"message", "Back-off restarting failed container"}});
    api.SetPreviousLog("ml", "trainer", "main", "loading shard 7\nKilled\n");
    api.Upsert(Resource::kPods, RunningTrainer(1));

    const history::PageSource pages = [&](const history::DecisionQuery& q) { return process.decisions.store->Query(q); };
    REQUIRE(Eventually([&] {
      absl::StatusOr<history::Explanation> told = history::Explain(history::Subject::kRestart, "ml/trainer", 10, pages);
      return told.ok() && !told->records.empty();
    }));
    const history::Explanation told = history::Explain(history::Subject::kRestart, "ml/trainer", 10, pages).value();
    CHECK_THAT(told.text, Catch::Contains("is oom"));
    CHECK_THAT(told.text, Catch::Contains("warning event: BackOff: Back-off restarting failed container"));
    CHECK_THAT(told.text, Catch::Contains("    | Killed\n"));
    CHECK_THAT(told.text, Catch::Contains("GPUs: 0,1,2,3,4,5,6,7 on gpu-0"));
    // The Event on the pod, through the process's event writer.
    REQUIRE(Eventually([&] {
      for (const nlohmann::json& event : api.StoredObjects("/apis/events.k8s.io/v1/namespaces/ml/events")) {
        if (event.value("reason", "") == "RestartDiagnosed" && event.value("type", "") == "Warning") return true;
      }
      return false;
    }));
  }
}

TEST_CASE("extender --collect-restarts with webhooks: Slack and a JSON receiver are told once a mute window",
          "[e2e][restarts]") {
  std::unique_ptr<testing::TestCerts> certs = testing::TestCerts::Create().value();
  FakeApiServer api(*certs);
  api.Upsert(Resource::kNodes, testing::P4dNode("gpu-0"));
  nlohmann::json trainer = RunningTrainer(0);
  trainer["metadata"]["labels"] = {{"alert-slack-channel", "ml-oncall"}};
  api.Upsert(Resource::kPods, trainer);
  notify::testing::WebhookReceiver slack;
  notify::testing::WebhookReceiver receiver(certs.get());
  receiver.Script({{503}});  // the JSON receiver fails once, then recovers
  cli::testing::ScratchDir scratch("topofit-restart-notify-e2e-test");
  scratch.Write("slack-url", slack.url() + "\n");
  scratch.Write("json-url", receiver.url("/hooks/restarts"));
  spdlog::logger log("e2e", std::make_shared<spdlog::sinks::null_sink_mt>());
  cli::ProcessState process;
  cli::ExtenderOptions options = testing::LoopbackExtenderOptions(scratch, api.url(), certs->ca_cert_file());
  process.decisions = cli::OpenDecisionHistory("", options.decision_db_max_bytes, process.registry, log);
  options.restart_notify.slack_webhook_file = scratch.path("slack-url");
  options.restart_notify.json_webhook_file = scratch.path("json-url");
  options.restart_notify.ca_file = certs->ca_cert_file();
  options.restart_notify.cluster = "prod-eu";

  SECTION("webhooks need --collect-restarts") {
    CHECK_THAT(std::string(cli::BuildExtender(options, process, log, {}).status().message()),
               Catch::Contains("need --collect-restarts"));
  }
  SECTION("a URL file that holds no http(s) URL is refused, and the error does not repeat it") {
    options.collect_restarts = true;
    scratch.Write("json-url", "hooks.example.com/T0/B0/s3cr3t");
    const std::string message(cli::BuildExtender(options, process, log, {}).status().message());
    CHECK_THAT(message, Catch::Contains("--restart-webhook-file: the URL in"));
    CHECK_THAT(message, !Catch::Contains("s3cr3t"));
    scratch.Write("json-url", "https://a b");
    CHECK_THAT(std::string(cli::BuildExtender(options, process, log, {}).status().message()),
               Catch::Contains("does not hold one URL"));
  }
  SECTION("two restarts within the mute window: both recorded, one message each") {
    options.collect_restarts = true;
    absl::StatusOr<cli::ExtenderServers> extender = cli::BuildExtender(options, process, log, {});
    REQUIRE(extender.ok());
    REQUIRE(extender->restart_watch->WaitForSync(kubeclient::testing::kPatience));
    for (int restarts : {1, 2}) {
      nlohmann::json restarted = RunningTrainer(restarts);
      restarted["metadata"]["labels"] = trainer["metadata"]["labels"];
      api.Upsert(Resource::kPods, restarted);
      REQUIRE(Eventually([&] {
        return process.decisions.store->Query({}).value().records.size() >= static_cast<size_t>(restarts);
      }));
    }
    REQUIRE(extender->restart_collector->WaitIdle(kubeclient::testing::kPatience));
    REQUIRE(extender->restart_notifier->WaitIdle(kubeclient::testing::kPatience));
    REQUIRE(slack.accepted().size() == 1);
    CHECK(slack.accepted()[0]["channel"] == "ml-oncall");
    CHECK_THAT(slack.accepted()[0]["text"].get<std::string>(),
               Catch::Contains("`ml/trainer` container `main`, restart 1, node `gpu-0`, cluster `prod-eu`"));
    CHECK(receiver.posts() == 2);  // the 503, then the retry
    REQUIRE(receiver.accepted().size() == 1);
    CHECK(receiver.paths() == std::vector<std::string>{"/hooks/restarts", "/hooks/restarts"});
    CHECK(receiver.accepted()[0]["record"]["restart"]["exitCode"] == 137);
    CHECK_THAT(process.registry.Render(),
               Catch::Contains("topofit_restart_notifications_skipped_total{reason=\"muted\"} 1"));
  }
}

}  // namespace
}  // namespace topofit
