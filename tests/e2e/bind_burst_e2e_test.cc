// Issue 38: binds at the rate kube-scheduler sends them. kube-scheduler runs each pod's binding cycle in a
// goroutine of its own, so a batch of placed pods arrives as that many concurrent binds; the extender as
// `topofit extender --live-state` builds it, at its default flags, against the fake API server answering
// each call 5 ms late, must bind all of them (refusing none as busy), with one API call each, and give no
// GPU twice. No timing is
// asserted here: bench/bind_bench measures how fast.

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/extender_command.h"
#include "kube/topofit_annotations.h"
#include "tests/cli/scratch_dir.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"

namespace topofit {
namespace {

using kubeclient::testing::FakeApiServer;
using kubeclient::testing::Resource;

TEST_CASE("100 concurrent binds at the default flags are all bound, none refused as busy, no GPU given twice",
          "[e2e][bind]") {
  constexpr int kBinds = 100;
  constexpr int kNodes = (kBinds + 7) / 8;  // pod i binds to node gpu-(i / 8)
  std::unique_ptr<testing::TestCerts> certs = testing::TestCerts::Create().value();
  FakeApiServer api(*certs);
  for (int n = 0; n < kNodes; ++n) api.Upsert(Resource::kNodes, testing::P4dNode(absl::StrCat("gpu-", n)));
  for (int p = 0; p < kBinds; ++p) api.Upsert(Resource::kPods, testing::PendingGpuPod(absl::StrCat("pod-", p), 1));
  cli::testing::ScratchDir scratch("topofit-bind-burst-e2e-test");
  spdlog::logger log("e2e", std::make_shared<spdlog::sinks::null_sink_mt>());
  cli::ProcessState process;
  absl::StatusOr<cli::ExtenderServers> extender = cli::BuildExtender(
      testing::LoopbackExtenderOptions(scratch, api.url(), certs->ca_cert_file()), process, log, {});
  REQUIRE(extender.ok());
  const int port = extender->api->Start().value();
  REQUIRE(extender->node_watch->WaitForSync(kubeclient::testing::kPatience));
  REQUIRE(extender->pod_watch->WaitForSync(kubeclient::testing::kPatience));
  REQUIRE(extender->pending_pod_watch->WaitForSync(kubeclient::testing::kPatience));
  api.DelayReplies(absl::Milliseconds(5));

  std::vector<int> status(kBinds);
  std::vector<std::string> error(kBinds);
  std::atomic<int> connected{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> binds;
  for (int i = 0; i < kBinds; ++i) {
    binds.emplace_back([&, i] {
      const std::string pod = absl::StrCat("pod-", i);
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(std::chrono::seconds(60));  // generous: the API client's rate limit paces binds
      // Connected before the burst and all released at once, so the binds arrive together.
      client.set_keep_alive(true);
      client.Get("/healthz");
      ++connected;
      while (!go) std::this_thread::yield();
      const nlohmann::json args = {
          {"PodName", pod}, {"PodNamespace", "ml"}, {"PodUID", absl::StrCat("uid-", pod)}, {"Node", absl::StrCat("gpu-", i / 8)}};
      httplib::Result result = client.Post("/bind", args.dump(), "application/json");
      status[i] = result ? result->status : 0;
      if (result && result->status == 200) error[i] = nlohmann::json::parse(result->body).value("Error", "");
    });
  }
  while (connected < kBinds) std::this_thread::yield();
  const size_t calls_before = api.requests().size();
  go = true;
  for (std::thread& t : binds) t.join();
  extender->api->Stop();

  // One API call a bind, the Binding: each pod is read from the watch of pending pods, never GET. (Events on
  // the pods go through a client and a QPS budget of their own.)
  int bindings = 0, other_calls = 0;
  const std::vector<kubeclient::testing::RecordedRequest> requests = api.requests();
  for (size_t r = calls_before; r < requests.size(); ++r) {
    if (requests[r].IsWatch() || requests[r].target.starts_with("/apis/events.k8s.io/")) continue;
    const bool binding = requests[r].method == "POST" && requests[r].target.ends_with("/binding");
    (binding ? bindings : other_calls) += 1;
    if (!binding) UNSCOPED_INFO("call besides a Binding: " << requests[r].method << " " << requests[r].target);
  }
  CHECK(bindings == kBinds);
  CHECK(other_calls == 0);

  std::map<std::string, std::set<std::string>> ids_by_node;
  for (int i = 0; i < kBinds; ++i) {
    INFO("pod-" << i << ": HTTP " << status[i] << " " << error[i]);
    REQUIRE(status[i] == 200);
    CHECK(error[i].empty());
    const nlohmann::json pod = api.Object(Resource::kPods, "ml", absl::StrCat("pod-", i));
    const std::string node = pod["spec"].value("nodeName", "");
    CHECK(node == absl::StrCat("gpu-", i / 8));
    const std::string ids = pod["metadata"]["annotations"].value(std::string(kube::kGpuIdsAnnotation), "");
    for (absl::string_view id : absl::StrSplit(ids, ',', absl::SkipEmpty())) {
      CHECK(ids_by_node[node].insert(std::string(id)).second);  // never given twice
    }
  }
}

}  // namespace
}  // namespace topofit
