#include "cli/ledger_flags.h"

#include <catch2/catch.hpp>

#include <spdlog/sinks/null_sink.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kubeclient/config.h"
#include "tests/cli/scratch_dir.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit::cli {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::FakeApiServer;

TEST_CASE("UseLedger(api): the process's ledger lives on the pending pods, ready once they are listed",
          "[cli][ledger]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  FakeApiServer api(*certs);
  REQUIRE(api.valid());
  nlohmann::json pod = kubeclient::testing::PodJson("ml", "trainer", "", "topofit");
  pod["metadata"]["uid"] = "uid-trainer";
  api.Upsert(kubeclient::testing::Resource::kPods, pod);
  testing::ScratchDir scratch("topofit-ledger-flags-test");
  scratch.Write("kubeconfig", testing::ScratchDir::Kubeconfig(absl::StrCat(
                                  "server: \"", api.url(), "\", certificate-authority: \"", certs->ca_cert_file(), "\"")));
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());

  ProcessState process;
  REQUIRE_OK(UseLedger("api", scratch.path("kubeconfig"), process, log));
  REQUIRE(process.ledger_watch->WaitForSync(kubeclient::testing::kPatience));
  decision::Intent intent;
  intent.node_group = "p4d";
  intent.node_count = 1;
  intent.pod_uids = {"uid-trainer"};
  process.ledger->RecordIntent(intent);

  // Written to the pod the watch named; the watch lists pending pods only.
  const auto patched = [&] {
    for (const auto& request : api.requests()) {
      if (request.method == "PATCH" && request.target == "/api/v1/namespaces/ml/pods/trainer" &&
          absl::StrContains(request.body, "topofit.io/scale-up-intent")) {
        return true;
      }
    }
    return false;
  };
  CHECK(Eventually(patched));
  const auto first_of = [&](absl::string_view prefix) {
    for (const auto& request : api.requests()) {
      if (absl::StartsWith(request.target, prefix)) return request;
    }
    return kubeclient::testing::RecordedRequest{};
  };
  CHECK(first_of("/api/v1/pods").Param("fieldSelector") == "spec.nodeName=");
  // The node group templates the expander learns are read back from their ConfigMap in this namespace.
  const std::string config_map =
      absl::StrCat("/api/v1/namespaces/", kubeclient::OwnNamespace(), "/configmaps/topofit-node-groups");
  CHECK(Eventually([&] { return !first_of(config_map).method.empty(); }));
  // The write and the watch are metrics (cli/kube_observability.h); the write is counted once its reply is in.
  CHECK(Eventually([&] { return absl::StrContains(process.registry.Render(), "topofit_ledger_writes_total{result=\"ok\"} 1\n"); }));
  const std::string metrics = process.registry.Render();
  CHECK_THAT(metrics, Catch::Contains("topofit_watch_synced{resource=\"pending_pods\"} 1\n"));
  CHECK_THAT(metrics, Catch::Contains("topofit_kube_api_requests_total{client=\"ledger\",verb=\"PATCH\",code=\"200\"} 1\n"));
}

TEST_CASE("UseLedger(memory) keeps the process's own ledger, ready at once", "[cli][ledger]") {
  ProcessState process;
  const ledger::Ledger* in_memory = process.ledger.get();
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  REQUIRE_OK(UseLedger("memory", "", process, log));
  CHECK(process.ledger.get() == in_memory);
  CHECK(process.ledger_watch == nullptr);  // nothing to list: "ledger-sync" passes at once
  CHECK_STATUS(UseLedger("disk", "", process, log), absl::StatusCode::kInvalidArgument, "--ledger");
}

}  // namespace
}  // namespace topofit::cli
