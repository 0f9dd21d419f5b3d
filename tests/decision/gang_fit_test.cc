#include "decision/gang_fit.h"

#include <catch2/catch.hpp>

#include "codec/node_topology.h"
#include "decision/group_rank.h"
#include "tests/kube/builders.h"
#include "topology/catalog.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

// An NVL72 group's template: GB200 trays of clique label, `per_domain` trays to a domain (unsaid when 0).
kube::Node Nvl72Template(int per_domain) {
  kube::testing::NodeBuilder node = MakeNode();
  node.name("template-node-for-nvl72").label("nvidia.com/gpu.product", "NVIDIA-GB200").label("nvidia.com/gpu.clique", "template").gpus(4);
  if (per_domain > 0) node.annotation("topofit.io/nodes-per-domain", std::to_string(per_domain));
  return node;
}

kube::Node H100Template() {
  return MakeNode().name("template-node-for-h100").label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").gpus(8);
}

kube::Pod Member(int i, int size, int gpus, const std::string& level) {
  return MakePod()
      .name("train-" + std::to_string(i))
      .gpus(gpus)
      .annotation("topofit.io/gang", "train")
      .annotation("topofit.io/gang-size", std::to_string(size))
      .annotation("topofit.io/gang-required-topology", level);
}

std::optional<std::string> NeverFits(const kube::Pod& pod, const kube::Node& template_node, const char* shape) {
  const topology::Topology topology = topology::CatalogShape(shape).value();
  const std::optional<RequiredGang> gang = RequiredGangOf(pod, NvlinkDomainLabels::Default());
  if (!gang) return std::nullopt;
  return GangNeverFitsGroup(*gang, DemandOf(pod).value(), template_node, topology, NvlinkDomainLabels::Default());
}

TEST_CASE("GangNeverFitsGroup: a group's domains must hold the whole gang at its required level", "[gang_fit]") {
  // 16 x 4 GPUs in one domain: an NVL72 rack of 18 trays holds it, a partition of 2 does not
  CHECK_FALSE(NeverFits(Member(0, 16, 4, "domain"), Nvl72Template(18), "gb200-nvl72-node"));
  CHECK(NeverFits(Member(0, 16, 4, "domain"), Nvl72Template(2), "gb200-nvl72-node") ==
        "gang topofit:default/train needs all 16 members of 4 GPUs in one NVLink domain; a domain of the group "
        "holds 2 nodes of 1 members, 2 in all");
  // a domain's size unsaid: not judged
  CHECK_FALSE(NeverFits(Member(0, 16, 4, "domain"), Nvl72Template(0), "gb200-nvl72-node"));
  // no domain label: new nodes form no domain, unless one node holds the whole gang
  CHECK(NeverFits(Member(0, 4, 4, "domain"), H100Template(), "hgx-h100") ==
        "gang topofit:default/train needs all 4 members of 4 GPUs in one NVLink domain; the group's template "
        "carries no domain label, so its new nodes form none");
  CHECK_FALSE(NeverFits(Member(0, 2, 4, "domain"), H100Template(), "hgx-h100"));
  // one node required
  CHECK(NeverFits(Member(0, 3, 4, "node"), H100Template(), "hgx-h100") ==
        "gang topofit:default/train needs all 3 members of 4 GPUs on one node; a new node holds 2");
  // preferred only, or no gang: nothing required
  CHECK_FALSE(RequiredGangOf(MakePod().name("solo").gpus(4).annotation("topofit.io/gang-preferred-topology", "domain"),
                             NvlinkDomainLabels::Default()));
  CHECK(RequiredGangOf(Member(0, 16, 4, "domain"), NvlinkDomainLabels::Default())->level == GangLevel::kDomain);
  // the same through the pod: never judged
  CHECK_FALSE(NeverFits(MakePod().name("solo").gpus(4).annotation("topofit.io/gang-preferred-topology", "domain"),
                        H100Template(), "hgx-h100"));
  CHECK_FALSE(NeverFits(MakePod().name("p").gpus(4), H100Template(), "hgx-h100"));
}

TEST_CASE("RankOptions grows the group whose domain holds the whole gang, not a cheaper one that splits it",
          "[gang_fit][rank]") {
  RankInput input;
  kube::SharedPods members;  // one set of objects in every option, as the expander shares them
  for (int i = 0; i < 16; ++i) members.push_back(std::make_shared<const kube::Pod>(Member(i, 16, 4, "domain")));
  input.templates["nvl72"] = kube::SharedTemplate(Nvl72Template(18));
  input.templates["nvl72-partition"] = kube::SharedTemplate(Nvl72Template(4));
  input.templates["h100"] = kube::SharedTemplate(H100Template());
  input.price_per_node_hour = {{"nvl72", 40}, {"nvl72-partition", 30}, {"h100", 20}};
  input.options = {{"h100", 8, members}, {"nvl72-partition", 16, members},
                   {"nvl72", 16, members}};
  codec::TopologyResolver topologies;
  const Ranking ranking = RankOptions(input, topologies);
  CHECK(ranking.chosen == std::vector<std::string>{"nvl72"});
  REQUIRE(ranking.verdicts.size() == 3);
  CHECK(ranking.verdicts[0].strands);
  CHECK_THAT(ranking.verdicts[0].reason, Catch::Contains("its new nodes form none"));
  CHECK(ranking.verdicts[0].unplaced_pods.size() == 16);
  CHECK(ranking.verdicts[1].strands);
  CHECK_THAT(ranking.verdicts[1].reason, Catch::Contains("a domain of the group holds 4 nodes of 1 members"));
  CHECK_FALSE(ranking.verdicts[2].strands);
  CHECK(ranking.verdicts[2].placed_pods == 16);
}

// Pod `i` of ComputeDomain "train" (channel template "train-channel"), asking `gpus` device-plugin GPUs.
kube::Pod DomainMember(int i, int gpus) {
  return MakePod().name("train-" + std::to_string(i)).gpus(gpus).claimTemplate("channel", "train-channel");
}

// ComputeDomain `name` of namespace default whose channel template DomainMember's pods name.
kube::ComputeDomain TrainChannelDomain(const std::string& name) {
  kube::ComputeDomain domain;
  domain.metadata.name = name;
  domain.metadata.namespace_name = "default";
  domain.metadata.uid = "uid-" + name;
  domain.channel_template = "train-channel";
  return domain;
}

TEST_CASE("RankOptions ranks a ComputeDomain's pods as one gang in one domain, a node each", "[gang_fit][rank][compute_domain]") {
  kube::ComputeDomain domain = TrainChannelDomain("train");
  domain.num_nodes = 3;
  const ComputeDomainSource domains = [&](absl::string_view ns, absl::string_view channel_template) {
    return ns == "default" && channel_template == "train-channel" ? std::optional<kube::ComputeDomain>(domain)
                                                                   : std::nullopt;
  };
  // three pods of 2 GPUs: one H100 node would hold them all on GPUs, but the driver gives a node one channel
  RankInput input;
  kube::SharedPods members;
  for (int i = 0; i < 3; ++i) members.push_back(std::make_shared<const kube::Pod>(DomainMember(i, 2)));
  input.templates["nvl72"] = kube::SharedTemplate(Nvl72Template(18));
  input.templates["h100"] = kube::SharedTemplate(H100Template());
  input.price_per_node_hour = {{"nvl72", 40}, {"h100", 20}};
  input.options = {{"h100", 1, members}, {"nvl72", 3, members}};
  codec::TopologyResolver topologies;
  // without the domains read, they are three pods of 2 GPUs and the cheaper node takes them
  CHECK(RankOptions(input, topologies).chosen == std::vector<std::string>{"h100"});

  input.compute_domains = &domains;
  const Ranking ranking = RankOptions(input, topologies);
  CHECK(ranking.chosen == std::vector<std::string>{"nvl72"});
  REQUIRE(ranking.verdicts.size() == 2);
  CHECK(ranking.verdicts[0].strands);
  CHECK_THAT(ranking.verdicts[0].reason,
             Catch::Contains("gang computedomain:default/train needs all 3 members of 2 GPUs in one NVLink domain"));

  // the gang's member limit reaches the domain's size too: a partition of 2 trays holds 2 of them
  const RequiredGang gang = *RequiredGangOf(DomainMember(0, 2), NvlinkDomainLabels::Default(), &domain);
  CHECK(gang.most_per_node == 1);
  CHECK(GangNeverFitsGroup(gang, DemandOf(DomainMember(0, 2)).value(), Nvl72Template(2),
                           topology::CatalogShape("gb200-nvl72-node").value(), NvlinkDomainLabels::Default()) ==
        "gang computedomain:default/train needs all 3 members of 2 GPUs in one NVLink domain; a domain of the group "
        "holds 2 nodes of 1 members, 2 in all");
}

// A domain that runs in clique "rack-a" and says no count (its pods are not a gang of known size): its next
// pod can only join that clique, so a rack's group whose template is in another clique (or none) strands it;
// the group of its own rack takes it though another costs less.
TEST_CASE("RankOptions strands a running ComputeDomain's pod on groups outside its NVLink clique",
          "[gang_fit][rank][compute_domain]") {
  kube::ComputeDomain domain = TrainChannelDomain("serve");
  domain.nodes = {{.name = "tray-a-1", .clique_id = "rack-a", .status = "Ready"}};
  const ComputeDomainSource domains = [&](absl::string_view, absl::string_view) {
    return std::optional<kube::ComputeDomain>(domain);
  };
  const auto rack = [](const std::string& clique) {
    kube::Node node = Nvl72Template(18);
    node.metadata.labels["nvidia.com/gpu.clique"] = clique;
    // copied from the running tray the template was made from: a new tray holds no channel
    node.metadata.labels["resource.nvidia.com/computeDomain"] = "uid-other";
    return node;
  };
  RankInput input;
  kube::SharedPods pods;
  pods.push_back(std::make_shared<const kube::Pod>(DomainMember(1, 4)));
  input.templates["rack-a"] = kube::SharedTemplate(rack("rack-a"));
  input.templates["rack-b"] = kube::SharedTemplate(rack("rack-b"));
  kube::Node unbuilt = Nvl72Template(18);
  unbuilt.metadata.labels.erase(unbuilt.metadata.labels.find("nvidia.com/gpu.clique"));
  input.templates["rack-new"] = kube::SharedTemplate(unbuilt);
  input.price_per_node_hour = {{"rack-a", 40}, {"rack-b", 30}, {"rack-new", 30}};
  input.options = {{"rack-b", 1, pods}, {"rack-new", 1, pods}, {"rack-a", 1, pods}};
  input.compute_domains = &domains;
  codec::TopologyResolver topologies;
  const Ranking ranking = RankOptions(input, topologies);
  CHECK(ranking.chosen == std::vector<std::string>{"rack-a"});
  REQUIRE(ranking.verdicts.size() == 3);
  CHECK(ranking.verdicts[0].strands);
  CHECK_THAT(ranking.verdicts[0].reason,
             Catch::Contains("ComputeDomain default/serve runs in NVLink clique rack-a; this node is in clique rack-b"));
  CHECK(ranking.verdicts[1].strands);
  CHECK_THAT(ranking.verdicts[1].reason, Catch::Contains("this node is in none"));
  CHECK_FALSE(ranking.verdicts[2].strands);

  // before the domain runs anywhere, every rack may take it: the cheaper one does
  domain.nodes.clear();
  CHECK(RankOptions(input, topologies).chosen != std::vector<std::string>{"rack-a"});
}

}  // namespace
}  // namespace topofit::decision
