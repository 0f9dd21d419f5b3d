// The live path down to the node (issue 11), in one process through the real wires: the extender built as
// `topofit extender --live-state` builds it, the node agent on node g5-1 (nvidia-smi a script, the kubelet a
// fake on unix sockets), both against the fake API server. The agent publishes the node's real topology and
// the extender uses it; the extender binds two pods; the kubelet admits them in bind order and the agent
// gives each exactly the GPUs the extender chose.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "cli/extender_command.h"
#include "cli/ledger_flags.h"
#include "tests/agent/fake_kubelet.h"
#include "tests/agent/node_dir.h"
#include "tests/cli/scratch_dir.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"
#include "tests/e2e/e2e_objects.h"
#include "topology/gpu_set.h"

namespace topofit {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::FakeApiServer;
using kubeclient::testing::Resource;
using nlohmann::json;

constexpr char kNode[] = "g5-1";

// The device IDs (UUIDs) of the GPUs `gpu_ids` ("0,1") names on the test node.
std::vector<std::string> DevicesOf(const std::string& gpu_ids) {
  std::vector<int> indices;
  for (topology::GpuId id : topology::GpuSet::Parse(gpu_ids, 8).value().ids()) indices.push_back(id.value);
  return agent::testing::Uuids(indices);
}

TEST_CASE("After bind, the kubelet admits the pods and the agent gives them the GPUs the extender chose", "[e2e]") {
  std::unique_ptr<testing::TestCerts> certs = testing::TestCerts::Create().value();
  FakeApiServer api(*certs);
  api.Upsert(Resource::kNodes,
             {{"metadata",
               {{"name", kNode},
                {"labels", {{"kubernetes.io/hostname", kNode}, {"node.kubernetes.io/instance-type", "g5.48xlarge"}}}}},
              {"status", {{"capacity", {{"nvidia.com/gpu", "8"}}}, {"allocatable", {{"nvidia.com/gpu", "8"}}}}}});
  api.Upsert(Resource::kPods, testing::PendingGpuPod("infer", 2));
  api.Upsert(Resource::kPods, testing::PendingGpuPod("train", 4));

  // The extender.
  cli::testing::ScratchDir scratch("topofit-agent-e2e");
  spdlog::logger log{"e2e", std::make_shared<spdlog::sinks::null_sink_mt>()};
  cli::ProcessState process;
  const cli::ExtenderOptions options = testing::LoopbackExtenderOptions(scratch, api.url(), certs->ca_cert_file());
  absl::StatusOr<cli::ExtenderServers> extender = cli::BuildExtender(options, process, log, {});
  REQUIRE(extender.ok());
  const int port = extender->api->Start().value();
  REQUIRE(extender->node_watch->WaitForSync(kubeclient::testing::kPatience));

  // The node: the agent, a fake kubelet, nvidia-smi.
  agent::testing::NodeDir node;
  agent::testing::FakeKubelet kubelet(node.plugins());
  std::unique_ptr<kubeclient::RestClient> agent_rest = kubeclient::testing::DirectClientFor(api, *certs);
  server::MetricsRegistry registry;
  agent::ProcessRunner runner(absl::Seconds(5));
  std::unique_ptr<agent::Agent> node_agent =
      agent::Agent::Create(node.Options(kNode), runner, *agent_rest, registry, log).value();
  node_agent->Start();
  REQUIRE(Eventually([&] { return node_agent->NotReadyReason().empty(); }));

  // The extender now works on the node's real topology (its UUIDs), not the catalog's g5.48xlarge.
  REQUIRE(Eventually([&] {
    auto snapshot = extender->state->Snapshot(kNode);
    return snapshot != nullptr && snapshot->topology->gpu(topology::GpuId{7}).uuid == agent::testing::Uuid(7);
  }));

  const auto bind = [&](const std::string& pod) {
    httplib::Client client("127.0.0.1", port);
    const json filter = {{"Pod", api.Object(Resource::kPods, "ml", pod)},
                         {"Nodes", {{"items", {api.Object(Resource::kNodes, "", kNode)}}}}};
    httplib::Result filtered = client.Post("/filter", filter.dump(), "application/json");
    REQUIRE(filtered);
    REQUIRE(json::parse(filtered->body)["Nodes"]["items"].size() == 1);
    const json args = {{"PodName", pod}, {"PodNamespace", "ml"}, {"PodUID", absl::StrCat("uid-", pod)}, {"Node", kNode}};
    httplib::Result bound = client.Post("/bind", args.dump(), "application/json");
    REQUIRE(bound);
    REQUIRE(json::parse(bound->body).value("Error", "x").empty());
    return api.Object(Resource::kPods, "ml", pod)["metadata"]["annotations"]["topofit.io/gpu-ids"].get<std::string>();
  };
  const std::string infer_ids = bind("infer");
  const std::string train_ids = bind("train");
  INFO("extender chose infer " << infer_ids << ", train " << train_ids);

  // The kubelet admits them in bind order, each against what is still available.
  auto plugin = kubelet.Plugin("topofit-gpu.sock");
  const std::vector<std::string> all = agent::testing::Uuids({0, 1, 2, 3, 4, 5, 6, 7});
  REQUIRE(Eventually([&] {  // the agent's watch has seen both bindings
    std::vector<std::string> preferred;
    return agent::testing::Preferred(*plugin, all, 4, &preferred).ok() && preferred == DevicesOf(train_ids);
  }));
  const std::vector<std::string> infer_devices = DevicesOf(infer_ids);
  CHECK(agent::testing::Admit(*plugin, all, 2) == infer_devices);
  std::vector<std::string> rest;
  for (const std::string& id : all) {
    if (std::find(infer_devices.begin(), infer_devices.end(), id) == infer_devices.end()) rest.push_back(id);
  }
  CHECK(agent::testing::Admit(*plugin, rest, 4) == DevicesOf(train_ids));

  REQUIRE(node_agent->WaitForAnnotations(absl::Seconds(2)));
  for (const auto& [pod, ids] : {std::pair{"infer", infer_ids}, std::pair{"train", train_ids}}) {
    CHECK(api.Object(Resource::kPods, "ml", pod)["metadata"]["annotations"]["topofit.io/gpu-allocated"] == ids);
  }
  node_agent->Stop();
  extender->api->Stop();
}

}  // namespace
}  // namespace topofit
