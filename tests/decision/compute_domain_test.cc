#include "decision/compute_domain.h"

#include <map>

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;

constexpr const char* kClique3 = "8d9e3f2a-1b2c-4d5e-9f00-112233445566.3";
constexpr const char* kClique4 = "8d9e3f2a-1b2c-4d5e-9f00-112233445566.4";

kube::ComputeDomain Domain(std::string namespace_name, std::string name, std::string channel_template,
                           std::optional<int> num_nodes = std::nullopt) {
  kube::ComputeDomain domain;
  domain.metadata.namespace_name = std::move(namespace_name);
  domain.metadata.name = name;
  domain.metadata.uid = "uid-" + name;
  domain.channel_template = std::move(channel_template);
  domain.num_nodes = num_nodes;
  return domain;
}

// The ComputeDomains a watch would hold, looked up as the extender looks them up.
struct Domains {
  std::map<std::pair<std::string, std::string>, kube::ComputeDomain> by_template;
  Domains& Add(kube::ComputeDomain domain) {
    by_template[{domain.metadata.namespace_name, domain.channel_template}] = domain;
    return *this;
  }
  absl::StatusOr<std::optional<kube::ComputeDomain>> Of(const kube::Pod& pod) const {
    return ComputeDomainOf(pod, [this](absl::string_view ns, absl::string_view name) -> std::optional<kube::ComputeDomain> {
      auto it = by_template.find({std::string(ns), std::string(name)});
      if (it == by_template.end()) return std::nullopt;
      return it->second;
    });
  }
};

TEST_CASE("A pod joins the ComputeDomain whose channel template its claims name, in its own namespace", "[compute_domain]") {
  Domains domains;
  domains.Add(Domain("training", "cd-a", "cd-a-channel")).Add(Domain("training", "cd-b", "cd-b-channel"));
  const kube::Pod member = MakePod().namespaceName("training").gpus(4).claimTemplate("channel", "cd-a-channel").build();
  absl::StatusOr<std::optional<kube::ComputeDomain>> joined = domains.Of(member);
  REQUIRE(joined.ok());
  REQUIRE(joined->has_value());
  CHECK((*joined)->metadata.name == "cd-a");

  // the same template name in another namespace is another template
  CHECK(domains.Of(MakePod().namespaceName("other").claimTemplate("channel", "cd-a-channel").build())->has_value() == false);
  // a GPU claim template is no domain's channel
  CHECK(domains.Of(MakePod().namespaceName("training").claimTemplate("gpus", "four-gpus").build())->has_value() == false);
  CHECK(domains.Of(MakePod().namespaceName("training").gpus(1).build())->has_value() == false);

  const absl::StatusOr<std::optional<kube::ComputeDomain>> both = domains.Of(
      MakePod().namespaceName("training").claimTemplate("a", "cd-a-channel").claimTemplate("b", "cd-b-channel").build());
  REQUIRE(absl::IsInvalidArgument(both.status()));
  CHECK(both.status().message() ==
        "the pod's claims name the channels of two ComputeDomains, training/cd-a and training/cd-b; NVIDIA's DRA driver "
        "prepares one ComputeDomain's channel per node");
}

TEST_CASE("A ComputeDomain's pods are a gang: topofit's size, else the domain's node count", "[compute_domain][gang]") {
  const kube::ComputeDomain counted = Domain("training", "cd-a", "cd-a-channel", 4);
  const kube::Pod member = MakePod().namespaceName("training").gpus(4).claimTemplate("channel", "cd-a-channel").build();
  absl::StatusOr<std::optional<Gang>> gang = GangOf(member, &counted);
  REQUIRE(gang.ok());
  CHECK(**gang == Gang{.source = GangSource::kComputeDomain, .key = "training/cd-a", .min_count = 4});
  CHECK(GangIdOf(**gang) == "computedomain:training/cd-a");

  kube::Pod sized = member;
  sized.metadata.annotations["topofit.io/gang-size"] = "6";
  CHECK((*GangOf(sized, &counted))->min_count == 6);  // no longer an error naming no gang

  const kube::ComputeDomain uncounted = Domain("training", "cd-a", "cd-a-channel");
  CHECK((*GangOf(member, &uncounted))->min_count == std::nullopt);
  CHECK(GangOf(member)->has_value() == false);  // without the domain known, no gang

  // a source that gates the pods keeps its gang
  kube::Pod lws = member;
  lws.metadata.labels["leaderworkerset.sigs.k8s.io/group-key"] = "g0";
  lws.metadata.annotations["leaderworkerset.sigs.k8s.io/size"] = "4";
  CHECK((*GangOf(lws, &counted))->source == GangSource::kLeaderWorkerSet);
}

TEST_CASE("A ComputeDomain's members require one NVLink domain unless they require a level already", "[compute_domain][gang]") {
  const kube::ComputeDomain domain = Domain("training", "cd-a", "cd-a-channel");
  const GangTopology plain = ComputeDomainTopology(std::nullopt, domain);
  REQUIRE(plain.required);
  CHECK(plain.required->level == GangLevel::kDomain);
  CHECK(plain.required->annotation == "ComputeDomain training/cd-a");

  GangTopology node;
  node.required = GangTopologyConstraint{.annotation = "topofit.io/gang-required-topology", .value = "node",
                                         .level = GangLevel::kNode, .not_understood = {}};
  CHECK(ComputeDomainTopology(node, domain) == node);

  GangTopology preferred;
  preferred.preferred = node.required;
  const GangTopology kept = ComputeDomainTopology(preferred, domain);
  CHECK(kept.required->level == GangLevel::kDomain);
  CHECK(kept.preferred == node.required);
}

TEST_CASE("A node is refused to a ComputeDomain when another holds it, or when it is outside the domain's cliques", "[compute_domain]") {
  kube::ComputeDomain domain = Domain("training", "cd-a", "cd-a-channel");
  const kube::StringMap in3 = {{"nvidia.com/gpu.clique", kClique3}};
  const kube::StringMap in4 = {{"nvidia.com/gpu.clique", kClique4}};
  // nothing runs yet: any clique
  CHECK(ComputeDomainRefusal(domain, in3) == std::nullopt);
  CHECK(ComputeDomainRefusal(domain, in4) == std::nullopt);
  CHECK(ComputeDomainRefusal(domain, {}) == std::nullopt);

  kube::StringMap held = in3;
  held["resource.nvidia.com/computeDomain"] = "uid-cd-z";
  CHECK(ComputeDomainRefusal(domain, held) ==
        "the node holds the channel of another ComputeDomain (resource.nvidia.com/computeDomain=uid-cd-z); NVIDIA's DRA "
        "driver prepares one ComputeDomain's channel per node");
  held["resource.nvidia.com/computeDomain"] = "uid-cd-a";  // its own
  CHECK(ComputeDomainRefusal(domain, held) == std::nullopt);

  domain.nodes = {{.name = "tray-1", .clique_id = kClique3, .status = "Ready"},
                  {.name = "cpu-only", .clique_id = "", .status = "Ready"}};
  CHECK(ComputeDomainRefusal(domain, in3) == std::nullopt);
  CHECK(ComputeDomainRefusal(domain, in4) ==
        absl::StrCat("ComputeDomain training/cd-a runs in NVLink clique ", kClique3, "; this node is in clique ", kClique4));
  CHECK(ComputeDomainRefusal(domain, {}) ==
        absl::StrCat("ComputeDomain training/cd-a runs in NVLink clique ", kClique3, "; this node is in none"));
}

TEST_CASE("A node group's new nodes can take a ComputeDomain's pods only in its cliques, whatever domain the "
          "template copied",
          "[compute_domain][rank]") {
  kube::ComputeDomain domain = Domain("training", "cd-a", "cd-a-channel");
  kube::StringMap template_labels = {{"nvidia.com/gpu.clique", kClique4},
                                     {"resource.nvidia.com/computeDomain", "uid-cd-z"}};  // from a running tray
  CHECK(ComputeDomainNeverOnGroup(domain, template_labels) == std::nullopt);  // runs nowhere yet
  domain.nodes = {{.name = "tray-1", .clique_id = kClique3, .status = "Ready"}};
  CHECK(ComputeDomainNeverOnGroup(domain, template_labels) ==
        absl::StrCat("ComputeDomain training/cd-a runs in NVLink clique ", kClique3, "; this node is in clique ", kClique4));
  template_labels["nvidia.com/gpu.clique"] = kClique3;
  CHECK(ComputeDomainNeverOnGroup(domain, template_labels) == std::nullopt);  // another domain's label: not read
  template_labels.erase(template_labels.find("nvidia.com/gpu.clique"));
  CHECK_THAT(*ComputeDomainNeverOnGroup(domain, template_labels), Catch::EndsWith("this node is in none"));
}

}  // namespace
}  // namespace topofit::decision
