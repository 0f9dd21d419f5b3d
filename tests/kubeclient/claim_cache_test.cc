#include "kubeclient/claim_cache.h"

#include <catch2/catch.hpp>

namespace topofit::kubeclient {
namespace {

kube::ResourceClaim Claim(const std::string& name, const std::string& uid, int64_t gpus) {
  kube::ResourceClaim claim;
  claim.metadata.namespace_name = "ml";
  claim.metadata.name = name;
  claim.metadata.uid = uid;
  kube::DeviceRequest request;
  request.name = "gpus";
  request.device_class_name = "gpu.nvidia.com";
  request.count = gpus;
  claim.requests.push_back(request);
  return claim;
}

TEST_CASE("The claim cache keeps every claim by namespace and name, as the watch says", "[claim_cache][dra]") {
  ClaimCache cache;
  cache.Sync({Claim("a", "uid-a", 2), Claim("b", "uid-b", 4)});
  REQUIRE(cache.size() == 2);
  CHECK(cache.Find("ml", "a")->requests[0].count == 2);
  CHECK_FALSE(cache.Find("other", "a").has_value());

  cache.Changed(WatchEventType::kModified, Claim("a", "uid-a", 8));
  CHECK(cache.Find("ml", "a")->requests[0].count == 8);
  // b deleted and made again under its name: the old one's late DELETED leaves the new one.
  cache.Changed(WatchEventType::kAdded, Claim("b", "uid-b2", 1));
  cache.Changed(WatchEventType::kDeleted, Claim("b", "uid-b", 4));
  CHECK(cache.Find("ml", "b")->metadata.uid == "uid-b2");
  cache.Changed(WatchEventType::kDeleted, Claim("b", "uid-b2", 1));
  CHECK_FALSE(cache.Find("ml", "b").has_value());

  // A relist holds what there is, nothing more.
  cache.Sync({Claim("c", "uid-c", 1)});
  CHECK_FALSE(cache.Find("ml", "a").has_value());
  CHECK(cache.size() == 1);

  // As decisions read it.
  decision::DraGpuClasses classes;
  const decision::ClaimSource source = cache.Source(classes);
  CHECK(source.claim("ml", "c")->metadata.uid == "uid-c");
  CHECK(source.classes.driver == "gpu.nvidia.com");
}

}  // namespace
}  // namespace topofit::kubeclient
