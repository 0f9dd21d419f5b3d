#include "decision/capacity_ask.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kube/node_affinity.h"
#include "topology/allocator.h"
#include "topology/link.h"

namespace topofit::decision {

bool MayAskForCapacity(const GpuDemand& demand) {
  return demand.asks_for_topology() && !demand.constraints_required() && demand.expected_runtime.has_value();
}

std::optional<kube::Node> GpuGroupTemplate(const kube::Node& template_node) {
  if (AllocatableGpus(template_node) <= 0) return std::nullopt;
  kube::Node kept;
  kept.metadata.labels = template_node.metadata.labels;
  kept.metadata.labels.erase("kubernetes.io/hostname");
  kept.metadata.annotations = template_node.metadata.annotations;
  kept.spec.taints = template_node.spec.taints;
  kept.status.capacity = template_node.status.capacity;
  kept.status.allocatable = template_node.status.allocatable;
  return kept;
}

std::map<std::string, kube::Node> GpuGroupTemplates(const kube::NodeTemplates& templates) {
  std::map<std::string, kube::Node> gpu_groups;
  for (const auto& [group, template_node] : templates) {
    if (std::optional<kube::Node> kept = GpuGroupTemplate(*template_node)) gpu_groups.emplace(group, *std::move(kept));
  }
  return gpu_groups;
}

std::optional<CapacityAsk> CapacityAskFor(const kube::Pod& pod, const GpuDemand& demand, const ClusterShapes& shapes,
                                          absl::Time now, const std::vector<Preference>& own_preferences,
                                          const CapacityWaitPolicy& wait) {
  if (!MayAskForCapacity(demand)) return std::nullopt;
  std::vector<const topology::Topology*> seen;  // nodes of a group share their topology
  int64_t best = 0;
  std::string best_from;
  const auto consider = [&](const topology::Topology* shape, const auto& from) {
    if (shape == nullptr || shape->gpu_count() < demand.request.gpus ||
        std::find(seen.begin(), seen.end(), shape) != seen.end()) {
      return;
    }
    seen.push_back(shape);
    absl::StatusOr<topology::FitResult> empty = topology::FitEmptyNode(*shape, demand.request);
    if (empty.ok() && empty->fits() && empty->chosen->quality.bandwidth_mbps > best) {
      best = empty->chosen->quality.bandwidth_mbps;
      best_from = from();
    }
  };
  for (const NodeGpuSnapshot* node : shapes.nodes) {
    consider(node->topology.get(), [&] { return absl::StrCat("node ", node->node); });
  }
  std::vector<std::shared_ptr<const topology::Topology>> resolved;  // alive until the loop is done
  for (const auto& entry : shapes.group_templates) {
    const std::string& group = entry.first;  // named, not bound: a lambda below captures it
    const kube::Node& template_node = *entry.second;
    if (shapes.topologies == nullptr || !kube::MatchesNodeSelector(pod, template_node) ||
        !kube::ToleratesTaints(pod, template_node)) {
      continue;
    }
    absl::StatusOr<NodeTopology> topology = shapes.topologies->Resolve(template_node);
    if (!topology.ok()) continue;
    resolved.push_back(topology->topology);
    consider(resolved.back().get(), [&] { return absl::StrCat("node group ", group); });
  }
  if (best == 0) return std::nullopt;
  absl::Time first_refused = now;
  for (const Preference& p : own_preferences) first_refused = std::min(first_refused, p.first_seen);
  return CapacityAsk{now, first_refused, best, std::move(best_from), wait};
}

bool AsksForCapacity(const GpuDemand& demand, const NodeVerdict& fitted, const CapacityAsk& ask) {
  if (!fitted.fits || !fitted.chosen) return false;
  const topology::SetQuality& here = fitted.chosen->quality;
  return AskForCapacity(demand, here.bandwidth_mbps, topology::MeetsLinkAndBandwidth(here, demand.request),
                        ask.obtainable_mbps, ask.now - ask.first_refused, ask.wait);
}

std::string AskingReasonText(const NodeVerdict& verdict, const CapacityAsk& ask) {
  const topology::SetQuality here = verdict.chosen ? verdict.chosen->quality : topology::SetQuality{};
  // The verdict may be the fitting one the ask overrides (group_rank.h): the refusal is the ask's.
  RefusalFacts facts = FactsOf(verdict);
  facts.refusal = Refusal::kAskingForCapacity;
  return absl::StrCat("topofit: ", RefusalText(facts), " (here at best ", topology::LinkClassName(here.weakest),
                      ", ", topology::FormatBandwidth(here.bandwidth_mbps), "; a new node ",
                      topology::FormatBandwidth(ask.obtainable_mbps), ", as ", ask.obtainable_from,
                      " gives); it takes this node if none is up ", absl::FormatDuration(ask.wait.max_wait),
                      " after it was first refused");
}

}  // namespace topofit::decision
