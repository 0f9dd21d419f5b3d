#include "decision/node_group_identity.h"

#include <catch2/catch.hpp>

namespace topofit::decision {
namespace {

kube::Node TemplateWith(kube::StringMap labels) {
  kube::Node node;
  node.metadata.name = "template-node-for-p5";
  node.metadata.labels = std::move(labels);
  return node;
}

Intent IntentAt(int64_t unix_seconds, kube::StringMap node_labels) {
  Intent intent;
  intent.node_group = "p5";
  intent.pod_uids = {"uid-trainer"};
  intent.node_count = 1;
  intent.node_labels = std::move(node_labels);
  intent.recorded = absl::FromUnixSeconds(unix_seconds);
  return intent;
}

TEST_CASE("A group's identifying labels are its node-pool and shape labels, never per-node ones", "[ledger]") {
  SECTION("known node-group and shape labels, when the template has any") {
    const kube::Node eks = TemplateWith({{"eks.amazonaws.com/nodegroup", "p5-spot"},
                                         {"node.kubernetes.io/instance-type", "p5.48xlarge"},
                                         {"kubernetes.io/hostname", "template-node-for-p5"},
                                         {"topology.kubernetes.io/zone", "us-east-1a"},
                                         {"team", "ml"}});
    CHECK(NodeGroupLabels(eks) == kube::StringMap{{"eks.amazonaws.com/nodegroup", "p5-spot"},
                                                  {"node.kubernetes.io/instance-type", "p5.48xlarge"}});
  }
  SECTION("otherwise every label but the hostname and zone") {
    const kube::Node custom = TemplateWith(
        {{"pool", "gpu-a"}, {"kubernetes.io/hostname", "t"}, {"topology.kubernetes.io/zone", "z1"}});
    CHECK(NodeGroupLabels(custom) == kube::StringMap{{"pool", "gpu-a"}});
  }
  SECTION("a template without labels identifies nothing") {
    CHECK(NodeGroupLabels(TemplateWith({})).empty());
  }
}

TEST_CASE("A node is an intent's capacity when it carries the group's labels and came after it", "[ledger]") {
  const Intent intent = IntentAt(1'000, {{"cloud.google.com/gke-nodepool", "a3-high"}});
  const kube::StringMap labels = {{"cloud.google.com/gke-nodepool", "a3-high"}, {"kubernetes.io/hostname", "n1"}};
  CHECK(BroughtBy(intent, labels, 1'000));
  CHECK(BroughtBy(intent, labels, 1'600));
  CHECK_FALSE(BroughtBy(intent, labels, 999));  // it existed before the scale-up was chosen
  CHECK_FALSE(BroughtBy(intent, labels, 0));    // creation time unknown: not provably new
  CHECK_FALSE(BroughtBy(intent, {{"cloud.google.com/gke-nodepool", "a2-ultra"}}, 1'600));
  CHECK_FALSE(BroughtBy(intent, {{"kubernetes.io/hostname", "n1"}}, 1'600));
  CHECK_FALSE(BroughtBy(IntentAt(1'000, {}), labels, 1'600));  // no identity: holds nothing
}

}  // namespace
}  // namespace topofit::decision

namespace topofit::decision {
namespace {

TEST_CASE("A node's group name: its node-pool label, else its instance type, else none", "[ledger]") {
  CHECK(NodeGroupName({{"eks.amazonaws.com/nodegroup", "gpu-p4d"}, {"node.kubernetes.io/instance-type", "p4d.24xlarge"}}) ==
        "gpu-p4d");
  CHECK(NodeGroupName({{"agentpool", "gpu"}, {"kubernetes.io/hostname", "aks-gpu-1"}}) == "gpu");  // older AKS
  CHECK(NodeGroupName({{"node.kubernetes.io/instance-type", "g5.48xlarge"}, {"nvidia.com/gpu.product", "A10G"}}) ==
        "g5.48xlarge");
  CHECK(NodeGroupName({{"nvidia.com/gpu.product", "A10G"}}).empty());  // a GPU product names no group
}

}  // namespace
}  // namespace topofit::decision
