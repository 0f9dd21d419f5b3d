#include "expander/node_group_recording.h"

#include <catch2/catch.hpp>

#include "decision/capacity_ask.h"
#include "tests/kube/builders.h"

namespace topofit::expander {
namespace {

using kube::testing::MakeNode;

const absl::Time kStart = absl::FromUnixSeconds(1764000000);

kube::NodeTemplates Offered(std::shared_ptr<const kube::Node> p4d, std::shared_ptr<const kube::Node> cpu) {
  return {{"p4d", std::move(p4d)}, {"cpu", std::move(cpu)}};
}

TEST_CASE("A node group's template goes to the ledger when new, when changed, and once per refresh", "[expander]") {
  NodeGroupRecording recording(absl::Minutes(1));
  const auto p4d = kube::SharedTemplate(MakeNode().label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8));
  const auto cpu = kube::SharedTemplate(MakeNode().label("node.kubernetes.io/instance-type", "m5.8xlarge"));

  std::map<std::string, kube::Node> due = recording.Due(Offered(p4d, cpu), kStart);
  REQUIRE(due.size() == 1);  // the GPU group, as GpuGroupTemplates keeps it; never the CPU group
  CHECK(due.at("p4d") == *decision::GpuGroupTemplate(*p4d));

  // CA's next loops, 10 s apart, send the same templates: nothing to record until the refresh is due.
  for (int loop = 1; loop < 6; ++loop) CHECK(recording.Due(Offered(p4d, cpu), kStart + absl::Seconds(10 * loop)).empty());
  CHECK(recording.Due(Offered(p4d, cpu), kStart + absl::Seconds(60)).size() == 1);

  // A changed template is recorded at once.
  const auto p4de = kube::SharedTemplate(MakeNode().label("node.kubernetes.io/instance-type", "p4de.24xlarge").gpus(8));
  due = recording.Due(Offered(p4de, cpu), kStart + absl::Seconds(70));
  REQUIRE(due.size() == 1);
  CHECK(due.at("p4d").metadata.labels.at("node.kubernetes.io/instance-type") == "p4de.24xlarge");

  // A group no longer sent is forgotten: sent again, it is new.
  CHECK(recording.Due({{"cpu", cpu}}, kStart + absl::Seconds(80)).empty());
  CHECK(recording.Due(Offered(p4de, cpu), kStart + absl::Seconds(90)).size() == 1);
}

TEST_CASE("Groups no longer sent are forgotten wherever they sort: first, between, last", "[expander]") {
  NodeGroupRecording recording(absl::Minutes(1));
  const auto gpu = kube::SharedTemplate(MakeNode().label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8));
  const auto groups = [&](std::initializer_list<const char*> names) {
    kube::NodeTemplates offered;
    for (const char* name : names) offered.emplace(name, gpu);
    return offered;
  };
  const auto names = [](const std::map<std::string, kube::Node>& due) {
    std::vector<std::string> out;
    for (const auto& [group, node] : due) out.push_back(group);
    return out;
  };
  CHECK(names(recording.Due(groups({"a", "b", "c", "d"}), kStart)) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(recording.Due(groups({"b", "d"}), kStart + absl::Seconds(10)).empty());
  CHECK(names(recording.Due(groups({"a", "b", "c", "d", "e"}), kStart + absl::Seconds(20))) ==
        std::vector<std::string>{"a", "c", "e"});
  CHECK(recording.Due(groups({}), kStart + absl::Seconds(30)).empty());
  CHECK(names(recording.Due(groups({"d"}), kStart + absl::Seconds(40))) == std::vector<std::string>{"d"});
  CHECK(recording.Due(groups({"d"}), kStart + absl::Seconds(50)).empty());
}

}  // namespace
}  // namespace topofit::expander
