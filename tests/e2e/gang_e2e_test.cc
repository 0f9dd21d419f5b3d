// Issue 33's end-to-end gang scenario through the real extender (HTTP verbs, the Kubernetes client, live
// state from watches) against the fake API server, with a stand-in for kube-scheduler's loop: one pod a
// cycle, filter over every node, bind to the first node passed, a pod whose bind fails goes back to the
// queue. A 16-pod x 4-GPU gang that requires one NVLink clique races 1-GPU pods queued between its
// members; the gang lands in one clique, whole, and no GPU is given twice.

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/extender_command.h"
#include "cli/ledger_flags.h"
#include "tests/cli/scratch_dir.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"

namespace topofit {
namespace {

using kubeclient::testing::FakeApiServer;
using kubeclient::testing::Resource;
using nlohmann::json;

// A GB200 compute tray of NVLink clique `clique`.
json Tray(const std::string& name, const std::string& clique) {
  return {{"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"nvidia.com/gpu.product", "NVIDIA-GB200"},
              {"nvidia.com/gpu.clique", clique}}}}},
          {"status", {{"capacity", {{"nvidia.com/gpu", "4"}}}, {"allocatable", {{"nvidia.com/gpu", "4"}}}}}};
}

struct GangCluster {
  GangCluster() : certs(testing::TestCerts::Create().value()), api(*certs) {
    // clique a: 6 trays (24 GPUs), too few for the gang; clique b: 18 trays (72 GPUs)
    for (int i = 0; i < 6; ++i) AddTray(absl::StrCat("a-", i), "uuid.a");
    for (int i = 0; i < 18; ++i) AddTray(absl::StrCat("b-", i), "uuid.b");
    scratch.Write("kubeconfig", cli::testing::ScratchDir::Kubeconfig(absl::StrCat(
                                    "server: \"", api.url(), "\", certificate-authority: \"", certs->ca_cert_file(), "\"")));
    cli::ExtenderOptions options = testing::LoopbackExtenderOptions(scratch.path("kubeconfig"));
    options.scheduler_name = "topofit";
    REQUIRE(cli::UseLedger(options.ledger, options.kubeconfig, process, log).ok());
    absl::StatusOr<cli::ExtenderServers> built = cli::BuildExtender(options, process, log, {});
    REQUIRE(built.ok());
    extender = *std::move(built);
    port = extender.api->Start().value();
    REQUIRE(extender.node_watch->WaitForSync(kubeclient::testing::kPatience));
    REQUIRE(extender.pod_watch->WaitForSync(kubeclient::testing::kPatience));
  }
  ~GangCluster() { extender.api->Stop(); }

  void AddTray(const std::string& name, const std::string& clique) {
    api.Upsert(Resource::kNodes, Tray(name, clique));
    nodes.push_back(name);
  }

  json Post(const std::string& path, const json& args) {
    httplib::Client client("127.0.0.1", port);
    httplib::Result result = client.Post(path, args.dump(), "application/json");
    REQUIRE(result);
    REQUIRE(result->status == 200);
    return json::parse(result->body);
  }

  // One kube-scheduler cycle for the pod (NodeNames, the extender's deployed mode): the first node the
  // extender passes, bound; the bind's error otherwise ("unschedulable" when no node passed).
  std::string Cycle(const std::string& pod) {
    const json passed = Post("/filter", {{"Pod", api.Object(Resource::kPods, "ml", pod)}, {"NodeNames", nodes}});
    if (!passed["Error"].get<std::string>().empty()) return passed["Error"];
    if (passed["NodeNames"].empty()) return "unschedulable";
    const std::string node = passed["NodeNames"][0];
    const json bound =
        Post("/bind", {{"PodName", pod}, {"PodNamespace", "ml"}, {"PodUID", absl::StrCat("uid-", pod)}, {"Node", node}});
    return bound.value("Error", "");
  }

  std::unique_ptr<testing::TestCerts> certs;
  FakeApiServer api;
  cli::testing::ScratchDir scratch{"topofit-gang-e2e-test"};
  spdlog::logger log{"e2e", std::make_shared<spdlog::sinks::null_sink_mt>()};
  cli::ProcessState process;
  cli::ExtenderServers extender;
  int port = 0;
  std::vector<std::string> nodes;
};

TEST_CASE("A 16-pod gang lands whole in one NVLink clique while 1-GPU pods race it", "[e2e][gang]") {
  GangCluster c;
  std::deque<std::string> queue;
  std::vector<std::string> pods;
  for (int i = 0; i < 16; ++i) {
    const std::string member = absl::StrCat("train-", i);
    c.api.Upsert(Resource::kPods, testing::PendingGpuPod(member, 4, {{"topofit.io/gang", "train"}, {"topofit.io/gang-size", "16"},
                                                  {"topofit.io/gang-required-topology", "domain"}}));
    queue.push_back(member);
    pods.push_back(member);
    // a 1-GPU pod after every other member
    if (i % 2 == 0) {
      const std::string single = absl::StrCat("single-", i);
      c.api.Upsert(Resource::kPods, testing::PendingGpuPod(single, 1));
      queue.push_back(single);
      pods.push_back(single);
    }
  }

  std::map<std::string, std::string> errors;  // the last error of each pod still queued
  std::set<std::string> bound;
  // kube-scheduler's queue: a pod whose cycle failed goes to the back and is tried again
  for (int cycle = 0; cycle < 400 && !queue.empty(); ++cycle) {
    const std::string pod = queue.front();
    queue.pop_front();
    const std::string error = c.Cycle(pod);
    if (error.empty()) {
      bound.insert(pod);
      errors.erase(pod);
    } else {
      errors[pod] = error;
      queue.push_back(pod);
    }
  }
  INFO("still queued: " << errors.size() << (errors.empty() ? "" : ", e.g. " + errors.begin()->first + ": " +
                                                                        errors.begin()->second));
  REQUIRE(queue.empty());

  // every member on a tray of clique b, one per tray, each with 4 GPUs; no GPU on any tray given twice
  std::map<std::string, std::set<std::string>> ids_on_node;
  std::set<std::string> gang_nodes;
  for (const std::string& name : pods) {
    const json pod = c.api.Object(Resource::kPods, "ml", name);
    const std::string node = pod["spec"].value("nodeName", "");
    REQUIRE_FALSE(node.empty());
    const std::string ids = pod["metadata"]["annotations"].value("topofit.io/gpu-ids", "");
    INFO(name << " on " << node << " GPUs " << ids);
    for (const absl::string_view id : absl::StrSplit(ids, ',')) {
      CHECK(ids_on_node[node].insert(std::string(id)).second);
    }
    if (name.rfind("train-", 0) == 0) {
      CHECK(node.rfind("b-", 0) == 0);
      CHECK(ids == "0,1,2,3");
      CHECK(gang_nodes.insert(node).second);
    }
  }
  CHECK(gang_nodes.size() == 16);
  CHECK(bound.size() == pods.size());
}

}  // namespace
}  // namespace topofit
