#include "decision/compute_domain.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "topology/catalog.h"

namespace topofit::decision {
namespace {

std::string DomainName(const kube::ComputeDomain& domain) {
  return absl::StrCat(domain.metadata.namespace_name, "/", domain.metadata.name);
}

// Why a node with `labels` is outside the NVLink cliques `domain` runs in; nullopt when it runs in none yet
// or the node is in one of them.
std::optional<std::string> OutsideCliques(const kube::ComputeDomain& domain, const kube::StringMap& labels) {
  std::set<absl::string_view> cliques;
  for (const kube::ComputeDomainNode& node : domain.nodes) {
    if (!node.clique_id.empty()) cliques.insert(node.clique_id);
  }
  if (cliques.empty()) return std::nullopt;
  auto clique = labels.find(topology::kGpuCliqueLabel);
  if (clique != labels.end() && cliques.contains(clique->second)) return std::nullopt;
  return absl::StrCat("ComputeDomain ", DomainName(domain), " runs in NVLink ", cliques.size() == 1 ? "clique " : "cliques ",
                      absl::StrJoin(cliques, ", "), "; this node is in ",
                      clique == labels.end() || clique->second.empty() ? std::string("none")
                                                                       : absl::StrCat("clique ", clique->second));
}

}  // namespace

absl::StatusOr<std::optional<kube::ComputeDomain>> ComputeDomainOf(const kube::Pod& pod, ComputeDomainLookup lookup) {
  std::optional<kube::ComputeDomain> joined;
  for (const kube::PodResourceClaim& claim : pod.spec.resource_claims) {
    if (!claim.resource_claim_template_name) continue;
    std::optional<kube::ComputeDomain> domain = lookup(pod.metadata.namespace_name, *claim.resource_claim_template_name);
    if (!domain) continue;
    if (joined && joined->metadata.uid != domain->metadata.uid) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the pod's claims name the channels of two ComputeDomains, ", DomainName(*joined), " and ",
          DomainName(*domain), "; NVIDIA's DRA driver prepares one ComputeDomain's channel per node"));
    }
    joined = std::move(domain);
  }
  return joined;
}

GangTopology ComputeDomainTopology(std::optional<GangTopology> wanted, const kube::ComputeDomain& domain) {
  GangTopology topology = wanted.value_or(GangTopology{});
  if (topology.required && topology.required->level) return topology;
  topology.required = GangTopologyConstraint{.annotation = absl::StrCat("ComputeDomain ", DomainName(domain)),
                                             .value = "domain",
                                             .level = GangLevel::kDomain,
                                             .not_understood = {}};
  return topology;
}

std::optional<std::string> ComputeDomainRefusal(const kube::ComputeDomain& domain, const kube::StringMap& node_labels,
                                                absl::string_view bound_for) {
  auto held = node_labels.find(kube::kComputeDomainNodeLabel);
  if (held != node_labels.end() && !held->second.empty()) {
    if (held->second != domain.metadata.uid) {
      return absl::StrCat("the node holds the channel of another ComputeDomain (", kube::kComputeDomainNodeLabel, "=",
                          held->second, "); NVIDIA's DRA driver prepares one ComputeDomain's channel per node");
    }
  } else if (!bound_for.empty() && bound_for != domain.metadata.uid) {
    return absl::StrCat("a pod of another ComputeDomain (uid ", bound_for,
                        ") was just bound to the node; NVIDIA's DRA driver prepares one ComputeDomain's channel per node");
  }
  return OutsideCliques(domain, node_labels);
}

std::optional<std::string> ComputeDomainNeverOnGroup(const kube::ComputeDomain& domain,
                                                     const kube::StringMap& template_labels) {
  return OutsideCliques(domain, template_labels);
}

}  // namespace topofit::decision
