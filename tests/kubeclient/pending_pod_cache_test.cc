#include "kubeclient/pending_pod_cache.h"

#include <catch2/catch.hpp>

#include <string>

#include "codec/kube_json.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit::kubeclient {
namespace {

using testing::Eventually;
using testing::FakeApiServer;
using testing::PodJson;
using testing::Resource;

kube::Pod Pod(const std::string& name, const std::string& node, const std::string& uid = "") {
  nlohmann::json json = PodJson("ml", name, node, "topofit");
  json["metadata"]["uid"] = uid.empty() ? "uid-" + name : uid;
  return codec::PodFromJson(json).value();
}

TEST_CASE("PendingPodCache: holds pending pods by namespace and name until they are bound or deleted",
          "[live-state][bind]") {
  PendingPodCache cache;
  cache.Sync({Pod("a", ""), Pod("b", ""), Pod("bound", "gpu-1")});
  CHECK(cache.size() == 2);  // a bound pod is never offered as pending, selector or not
  REQUIRE(cache.Find("ml", "a") != nullptr);
  CHECK(cache.Find("ml", "a")->metadata.uid == "uid-a");
  CHECK(cache.Find("other", "a") == nullptr);
  CHECK(cache.Find("ml", "bound") == nullptr);

  cache.Changed(WatchEventType::kModified, Pod("a", "gpu-1"));  // bound: leaves
  CHECK(cache.Find("ml", "a") == nullptr);
  cache.Changed(WatchEventType::kDeleted, Pod("b", ""));
  CHECK(cache.Find("ml", "b") == nullptr);
  cache.Changed(WatchEventType::kAdded, Pod("b", "", "uid-b2"));  // recreated under the name
  CHECK(cache.Find("ml", "b")->metadata.uid == "uid-b2");

  cache.Sync({Pod("c", "")});  // a relist replaces everything
  CHECK(cache.size() == 1);
  CHECK(cache.Find("ml", "b") == nullptr);
}

TEST_CASE("PendingPodCache: fed by a watch of the scheduler's pending pods, not another scheduler's, not bound ones",
          "[live-state][bind]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  FakeApiServer api(*certs);
  api.Upsert(Resource::kPods, PodJson("ml", "mine", "", "topofit"));
  api.Upsert(Resource::kPods, PodJson("ml", "theirs", "", "default-scheduler"));
  api.Upsert(Resource::kPods, PodJson("ml", "running", "gpu-1", "topofit"));
  std::unique_ptr<RestClient> rest = testing::DirectClientFor(api, *certs);
  PendingPodCache cache;
  ListWatchOptions options;
  options.field_selector = PendingPodsSelector("topofit");
  CHECK(options.field_selector == "spec.schedulerName=topofit,spec.nodeName=");
  std::unique_ptr<ListWatcher> watch = ListWatcher::ForPods(*rest, options, cache.Handler());
  watch->Start();
  REQUIRE(watch->WaitForSync(testing::kPatience));
  CHECK(cache.size() == 1);
  CHECK(cache.Find("ml", "mine") != nullptr);

  api.Upsert(Resource::kPods, PodJson("ml", "later", "", "topofit"));
  CHECK(Eventually([&] { return cache.Find("ml", "later") != nullptr; }));
  api.Upsert(Resource::kPods, PodJson("ml", "mine", "gpu-2", "topofit"));  // bound: stops matching
  CHECK(Eventually([&] { return cache.Find("ml", "mine") == nullptr; }));
  CHECK(cache.size() == 1);
  watch->Stop();
}

}  // namespace
}  // namespace topofit::kubeclient
