#include "codec/compute_domain_json.h"

#include <catch2/catch.hpp>

#include "tests/kube/dra_fixtures.h"

namespace topofit::codec {
namespace {

using topofit::testing::DraFixture;

TEST_CASE("A v1beta1 ComputeDomain: its channel template, node count and the nodes that joined it", "[compute_domain]") {
  const absl::StatusOr<kube::ComputeDomain> domain = ComputeDomainFromJson(DraFixture("computedomain-v1beta1.json"));
  REQUIRE(domain.ok());
  CHECK(domain->metadata.namespace_name == "training");
  CHECK(domain->metadata.uid == "5b1e7c9a-2f44-4d1a-9c3e-0a7b6d5e4f31");
  CHECK(domain->channel_template == "nvbandwidth-test-compute-domain-channel");
  CHECK(domain->num_nodes == 4);
  REQUIRE(domain->nodes.size() == 2);
  CHECK(domain->nodes[0] == kube::ComputeDomainNode{.name = "gb200-rack3-tray07",
                                                    .clique_id = "8d9e3f2a-1b2c-4d5e-9f00-112233445566.3",
                                                    .status = "Ready"});
  CHECK(domain->nodes[1].status == "NotReady");
}

TEST_CASE("A v1beta2 ComputeDomain keeps its node count in an annotation", "[compute_domain]") {
  const absl::StatusOr<kube::ComputeDomain> domain = ComputeDomainFromJson(DraFixture("computedomain-v1beta2.json"));
  REQUIRE(domain.ok());
  CHECK(domain->channel_template == "ep-decode-channel");
  CHECK(domain->num_nodes == 18);
  CHECK(domain->nodes.empty());
}

TEST_CASE("A ComputeDomain's node count of 0 says nothing, and a malformed one is an error naming it", "[compute_domain]") {
  nlohmann::json json = DraFixture("computedomain-v1beta1.json");
  json["spec"]["numNodes"] = 0;
  CHECK(ComputeDomainFromJson(json)->num_nodes == std::nullopt);
  json["spec"]["numNodes"] = -1;
  CHECK(absl::IsInvalidArgument(ComputeDomainFromJson(json).status()));
  json["spec"]["numNodes"] = "4";
  CHECK(absl::IsInvalidArgument(ComputeDomainFromJson(json).status()));

  nlohmann::json v1beta2 = DraFixture("computedomain-v1beta2.json");
  v1beta2["metadata"]["annotations"]["resource.nvidia.com/computedomain-num-nodes"] = "eighteen";
  const absl::StatusOr<kube::ComputeDomain> bad = ComputeDomainFromJson(v1beta2);
  REQUIRE(absl::IsInvalidArgument(bad.status()));
  CHECK(bad.status().message() ==
        "metadata.annotations[\"resource.nvidia.com/computedomain-num-nodes\"]: expected a whole number of nodes, not "
        "\"eighteen\"");
  v1beta2["status"]["nodes"] = nlohmann::json::array({{{"name", 7}}});
  CHECK(absl::IsInvalidArgument(ComputeDomainFromJson(v1beta2).status()));
}

}  // namespace
}  // namespace topofit::codec
