#include "codec/node_topology.h"

#include <memory>

#include <catch2/catch.hpp>

#include "kube/topofit_annotations.h"
#include "tests/kube/builders.h"

namespace topofit::codec {
namespace {

using kube::testing::MakeNode;

std::shared_ptr<const kube::Node> SharedTemplate(const std::string& instance_type, int gpus) {
  return std::make_shared<const kube::Node>(
      MakeNode().label("node.kubernetes.io/instance-type", instance_type).gpus(gpus).build());
}

TEST_CASE("a shared template resolves as the same node read field by field", "[topology][resolver]") {
  TopologyResolver resolver;
  const std::shared_ptr<const kube::Node> p4d = SharedTemplate("p4d.24xlarge", 8);
  const absl::StatusOr<decision::NodeTopology> by_fields = resolver.Resolve(*p4d);
  REQUIRE(by_fields.ok());
  for (int call = 0; call < 2; ++call) {  // first resolved, then remembered
    const absl::StatusOr<decision::NodeTopology> shared = resolver.ResolveShared(p4d);
    REQUIRE(shared.ok());
    CHECK(shared->topology == by_fields->topology);  // the one topology a fleet of such nodes shares
    CHECK(shared->origin == by_fields->origin);
    CHECK(shared->reason == by_fields->reason);
  }

  const auto bad = std::make_shared<const kube::Node>(
      MakeNode().annotation(std::string(kube::kGpuTopologyAnnotation), "{not json").gpus(8).build());
  for (int call = 0; call < 2; ++call) {
    const absl::StatusOr<decision::NodeTopology> shared = resolver.ResolveShared(bad);
    REQUIRE_FALSE(shared.ok());
    CHECK(shared.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(shared.status().message() == resolver.Resolve(*bad).status().message());
  }
}

// The answer is remembered by the node's address; a node its caller has dropped must not lend that
// address, and with it its answer, to a different node allocated after it.
TEST_CASE("a template dropped by its caller never answers for the node allocated after it",
          "[topology][resolver]") {
  TopologyResolver resolver;
  for (int round = 0; round < 200; ++round) {
    const bool eight = round % 2 == 0;
    std::shared_ptr<const kube::Node> node =
        eight ? SharedTemplate("p4d.24xlarge", 8) : SharedTemplate("g4dn.12xlarge", 4);
    const absl::StatusOr<decision::NodeTopology> shared = resolver.ResolveShared(node);
    REQUIRE(shared.ok());
    REQUIRE(shared->topology->gpu_count() == (eight ? 8 : 4));
    CHECK(shared->origin == resolver.Resolve(*node)->origin);
  }
}

}  // namespace
}  // namespace topofit::codec
