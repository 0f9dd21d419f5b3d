// Issue 34's end-to-end check of the extender keeping buffered sets whole: `topofit extender --live-state`
// against the fake API server serving cluster-autoscaler's CapacityBuffer API, with a buffer of one 4-GPU
// NVLink replica as `topofit headroom` writes it. A 1-GPU pod is scored away from the node whose only free
// NVLink quad the buffer keeps, toward the node where it breaks no quad; without the API, packing alone
// decides.

#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "kubeclient/capacity_buffers.h"
#include "tests/e2e/e2e_cluster.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit {
namespace {

using kubeclient::testing::Resource;
using nlohmann::json;

// An 8-GPU p3.16xlarge (DGX-1V cube mesh: its NVLink quads are GPUs 0-3 and 4-7).
json P3Node(const std::string& name) {
  json node = testing::P4dNode(name);
  node["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "p3.16xlarge";
  return node;
}

// A running pod holding `gpu_ids` of `node`, as the extender annotated it at bind.
json RunningOn(const std::string& name, const std::string& node, const std::string& gpu_ids, int gpus) {
  json pod = testing::PendingGpuPod(name, gpus, {{"topofit.io/gpu-ids", gpu_ids}});
  pod["spec"]["nodeName"] = node;
  pod["status"]["phase"] = "Running";
  return pod;
}

const decision::HeadroomShape kQuad{.gpus = 4, .min_link = "NV", .min_bandwidth = "", .topology_policy = "preferred", .family = ""};

struct BufferCluster : testing::E2eCluster {
  // Two clusters live at once in a test: each its own scratch directory.
  explicit BufferCluster(bool serves_buffers)
      : E2eCluster(serves_buffers ? "topofit-buffered-sets-e2e" : "topofit-unbuffered-sets-e2e") {
    api.Upsert(Resource::kNodes, P3Node("quad-only"));
    api.Upsert(Resource::kNodes, P3Node("quad-and-one"));
    api.Upsert(Resource::kPods, RunningOn("a", "quad-only", "4,5,6,7", 4));
    api.Upsert(Resource::kPods, RunningOn("b", "quad-and-one", "4,6,7", 3));
    api.Upsert(Resource::kPods, testing::PendingGpuPod("web", 1));
    if (serves_buffers) {
      api.ServeDiscovery("/apis/autoscaling.x-k8s.io/v1beta1",
                         {{"kind", "APIResourceList"},
                          {"groupVersion", "autoscaling.x-k8s.io/v1beta1"},
                          {"resources", json::array({{{"name", "capacitybuffers"}, {"namespaced", true}}})}});
    }
    // What `topofit headroom` writes for a burst of 4-GPU replicas preferring NVLink (the buffer is stored
    // either way: without the API served, the extender must not look for it).
    json replica = testing::PendingGpuPod("llm-0", 4, {{"topofit.io/min-link", "NV"}});
    const std::string name = kubeclient::HeadroomObjectName(kQuad);
    api.PutStoredObject(absl::StrCat("/api/v1/namespaces/topofit-system/podtemplates/", name),
                        kubeclient::HeadroomPodTemplate(kQuad, "topofit-system", replica));
    api.PutStoredObject(absl::StrCat("/apis/autoscaling.x-k8s.io/v1beta1/namespaces/topofit-system/capacitybuffers/", name),
                        kubeclient::CapacityBufferObject(kQuad, "topofit-system", "v1beta1", 1));
    cli::ExtenderOptions options = ExtenderOptions();
    options.scheduler_name = "topofit";
    StartExtender(options);
  }

  std::map<std::string, int> Scores(const std::string& pod) {
    const json scores = Post("/prioritize", {{"Pod", api.Object(Resource::kPods, "ml", pod)},
                                             {"NodeNames", {"quad-only", "quad-and-one"}}});
    INFO(scores.dump());
    std::map<std::string, int> by_node;
    for (const json& score : scores) by_node[score["Host"].get<std::string>()] = score["Score"].get<int>();
    return by_node;
  }
};

TEST_CASE("Buffered sets end to end: the extender reads the CapacityBuffers and keeps their NVLink quads whole",
          "[e2e][headroom]") {
  BufferCluster buffered(true);
  REQUIRE(buffered.extender.buffer_watch != nullptr);
  const std::map<std::string, int> kept = buffered.Scores("web");
  CHECK(kept.at("quad-and-one") > kept.at("quad-only"));

  BufferCluster unbuffered(false);
  CHECK(unbuffered.extender.buffer_watch == nullptr);
  const std::map<std::string, int> packed = unbuffered.Scores("web");
  CHECK(packed.at("quad-only") >= packed.at("quad-and-one"));
  CHECK(packed.at("quad-and-one") == kept.at("quad-and-one"));
}

}  // namespace
}  // namespace topofit
