// Issue 35: `topofit extender --live-state --collect-restarts` against the fake API server: a container of a
// bound GPU pod is OOM-killed and restarts; the restart, diagnosed, with the pod's Warning event and the
// previous container's log, is in the decision history, `topofit explain restart` tells it, and a Warning
// Event lands on the pod.

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "cli/decision_history.h"
#include "cli/extender_command.h"
#include "history/explain_query.h"
#include "tests/cli/scratch_dir.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
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

}  // namespace
}  // namespace topofit
