#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

// A GB200 compute tray (4 GPUs) of the NVLink clique `clique`.
kube::testing::NodeBuilder Tray(const std::string& name, const std::string& clique) {
  return MakeNode().name(name).label("nvidia.com/gpu.product", "NVIDIA-GB200").label("nvidia.com/gpu.clique", clique).gpus(4);
}

kube::ComputeDomain Domain(const std::string& name, std::optional<int> num_nodes) {
  kube::ComputeDomain domain;
  domain.metadata.namespace_name = "default";
  domain.metadata.name = name;
  domain.metadata.uid = "uid-" + name;
  domain.channel_template = name + "-channel";
  domain.num_nodes = num_nodes;
  return domain;
}

// Pod `i` of the workload of ComputeDomain `domain`: 2 GPUs from the device plugin, and the domain's channel.
kube::Pod Member(const std::string& domain, int i) {
  return MakePod()
      .name(absl::StrCat(domain, "-", i))
      .uid(absl::StrCat("uid-", domain, "-", i))
      .gpus(2)
      .claimTemplate("channel", domain + "-channel");
}

// Two cliques, "small" of two trays and "big" of four; big-1 holds the channel of another ComputeDomain.
struct DomainCluster {
  DomainCluster() {
    for (const char* name : {"small-0", "small-1"}) REQUIRE(f.state->UpsertNode(Tray(name, "uuid.small")).ok());
    for (const char* name : {"big-0", "big-2", "big-3"}) REQUIRE(f.state->UpsertNode(Tray(name, "uuid.big")).ok());
    REQUIRE(f.state->UpsertNode(Tray("big-1", "uuid.big").label("resource.nvidia.com/computeDomain", "uid-elsewhere")).ok());
    f.extender.JoinComputeDomainsFrom([this](absl::string_view ns, absl::string_view channel_template) {
      auto it = domains.find(absl::StrCat(ns, "/", channel_template));
      return it == domains.end() ? std::nullopt : std::optional<kube::ComputeDomain>(it->second);
    });
  }
  void Add(const kube::ComputeDomain& domain) {
    domains[absl::StrCat(domain.metadata.namespace_name, "/", domain.channel_template)] = domain;
  }
  codec::ExtenderFilterResult Filter(const kube::Pod& pod) { return f.FilterOn(pod, nodes); }
  std::string Bind(const kube::Pod& pod, const std::string& node) { return f.BindTo(pod, node); }
  testing::ExtenderFixture f;
  std::map<std::string, kube::ComputeDomain> domains;
  std::vector<std::string> nodes{"small-0", "small-1", "big-0", "big-1", "big-2", "big-3"};
};

TEST_CASE("A ComputeDomain's pods are one gang in one clique, a tray each, never on a tray another domain holds",
          "[extender][gang][compute_domain]") {
  DomainCluster c;
  c.Add(Domain("train", 3));
  // three 2-GPU pods: one tray would hold two of them, but the driver prepares one channel per tray; the small
  // clique has two trays and big-1 is another domain's, so the gang takes big-0, big-2 and big-3
  std::vector<std::string> places;
  for (int i = 0; i < 3; ++i) {
    const codec::ExtenderFilterResult placed = c.Filter(Member("train", i));
    REQUIRE(placed.node_names->size() == 1);
    places.push_back(placed.node_names->front());
  }
  CHECK(places == std::vector<std::string>{"big-0", "big-2", "big-3"});
  CHECK_THAT(c.Filter(Member("train", 0)).failed_and_unresolvable_nodes.at("big-1"),
             Catch::StartsWith("topofit: the node holds the channel of another ComputeDomain"));
  for (int i = 0; i < 3; ++i) CHECK(c.Bind(Member("train", i), places[i]) == "");
  for (int i = 0; i < 3; ++i) CHECK(c.f.state->AssignmentOf(absl::StrCat("uid-train-", i))->second.size() == 2);
  CHECK(c.f.registry.Render().find("topofit_extender_gang_reservations_total{event=\"landed\"} 1") != std::string::npos);

  // a domain of four finds no clique with four trays it may use: big-1 is another domain's, and the big
  // trays train's pods were just bound to are train's (before the driver labels them)
  c.Add(Domain("wide", 4));
  const codec::ExtenderFilterResult wide = c.Filter(Member("wide", 0));
  CHECK(wide.node_names->empty());
  CHECK(wide.failed_and_unresolvable_nodes.at("small-0") ==
        "topofit: gang computedomain:default/wide: no NVLink domain offered holds all 4 members of 2 GPUs (the most one "
        "holds is 2, in domain nvidia.com/gpu.clique=uuid.small)");
}

TEST_CASE("A ComputeDomain that runs in a clique takes its next pods there, whatever their count", "[extender][compute_domain]") {
  DomainCluster c;
  kube::ComputeDomain running = Domain("serve", std::nullopt);  // no count: its pods place one at a time
  running.nodes = {{.name = "small-0", .clique_id = "uuid.small", .status = "Ready"}};
  c.Add(running);
  const codec::ExtenderFilterResult next = c.Filter(Member("serve", 1));
  CHECK(*next.node_names == std::vector<std::string>{"small-0", "small-1"});
  CHECK(next.failed_and_unresolvable_nodes.at("big-0") ==
        "topofit: ComputeDomain default/serve runs in NVLink clique uuid.small; this node is in clique uuid.big");
  CHECK(next.failed_and_unresolvable_nodes.at("big-1") ==
        "topofit: the node holds the channel of another ComputeDomain (resource.nvidia.com/computeDomain=uid-elsewhere); "
        "NVIDIA's DRA driver prepares one ComputeDomain's channel per node");
  CHECK(next.failed_nodes.empty());
  CHECK(c.f.registry.Render().find("topofit_extender_nodes_refused_total{reason=\"compute-domain\"} 4") != std::string::npos);

  // without the domains read, the same pod is an ordinary 2-GPU pod
  c.f.extender.JoinComputeDomainsFrom({});
  CHECK(c.Filter(Member("serve", 1)).node_names->size() == 6);
}

TEST_CASE("A node just bound for a ComputeDomain is not another's, and pins its clique, before the driver says so",
          "[extender][compute_domain]") {
  DomainCluster c;
  c.Add(Domain("serve", std::nullopt));
  c.Add(Domain("other", std::nullopt));
  CHECK(c.Filter(Member("serve", 0)).node_names->size() == 5);  // all but big-1
  REQUIRE(c.Bind(Member("serve", 0), "small-0") == "");

  // the driver has neither labelled small-0 nor listed it in the domain's status yet
  CHECK(*c.Filter(Member("serve", 1)).node_names == std::vector<std::string>{"small-0", "small-1"});
  const codec::ExtenderFilterResult other = c.Filter(Member("other", 0));
  CHECK(*other.node_names == std::vector<std::string>{"small-1", "big-0", "big-2", "big-3"});
  CHECK(other.failed_and_unresolvable_nodes.at("small-0") ==
        "topofit: a pod of another ComputeDomain (uid uid-serve) was just bound to the node; NVIDIA's DRA driver "
        "prepares one ComputeDomain's channel per node");
  // a bind that raced the first one is refused
  CHECK_THAT(c.Bind(Member("other", 0), "small-0"), Catch::Contains("a pod of another ComputeDomain (uid uid-serve)"));
  CHECK(c.Bind(Member("serve", 1), "small-0") == "");

  // remembered for ten minutes: by then the driver's label and the domain's status say it
  c.f.clock.Advance(absl::Minutes(10));
  const codec::ExtenderFilterResult later = c.Filter(Member("other", 1));
  CHECK(later.failed_nodes.contains("small-0"));  // its GPUs are serve's two pods'
  CHECK_FALSE(later.failed_and_unresolvable_nodes.contains("small-0"));
}

TEST_CASE("A ComputeDomain's gang reserved on a node another domain then takes is placed again", "[extender][gang][compute_domain]") {
  DomainCluster c;
  c.Add(Domain("pair", 2));
  // two members: the small clique fits them most tightly
  CHECK(*c.Filter(Member("pair", 0)).node_names == std::vector<std::string>{"small-0"});
  // the driver labels small-1 for another domain before the second member comes (a reservation made before
  // its label was seen)
  REQUIRE(c.f.state->UpsertNode(Tray("small-1", "uuid.small").label("resource.nvidia.com/computeDomain", "uid-late")).ok());
  const codec::ExtenderFilterResult second = c.Filter(Member("pair", 1));
  REQUIRE(second.node_names->size() == 1);
  CHECK(second.node_names->front().rfind("big-", 0) == 0);
  CHECK(c.f.registry.Render().find("topofit_extender_gang_reservations_total{event=\"cancelled\"} 1") != std::string::npos);
  // the first member is steered to the new places too
  CHECK(c.Filter(Member("pair", 0)).node_names->front().rfind("big-", 0) == 0);
}

TEST_CASE("A pod naming the channels of two ComputeDomains gets the filter's error", "[extender][compute_domain]") {
  DomainCluster c;
  c.Add(Domain("a", 2));
  c.Add(Domain("b", 2));
  kube::Pod both = Member("a", 0);
  both.spec.resource_claims.push_back({.name = "other", .resource_claim_name = std::nullopt,
                                       .resource_claim_template_name = "b-channel"});
  c.f.kube.PutPod(both);
  absl::StatusOr<codec::ExtenderFilterResult> result = c.f.extender.Filter({both, std::nullopt, c.nodes});
  REQUIRE(result.ok());
  CHECK_THAT(result->error, Catch::Contains("the pod's claims name the channels of two ComputeDomains, default/a and default/b"));
  CHECK_FALSE(result->node_names.has_value());
}

}  // namespace
}  // namespace topofit::scheduler
