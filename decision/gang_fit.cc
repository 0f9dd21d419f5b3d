#include "decision/gang_fit.h"

#include "absl/strings/str_cat.h"
#include "decision/gang_placement.h"

namespace topofit::decision {
std::optional<RequiredGang> RequiredGangOf(const kube::Pod& pod, const NvlinkDomainLabels& labels,
                                           const kube::ComputeDomain* compute_domain) {
  absl::StatusOr<std::optional<Gang>> in_gang = GangOf(pod, compute_domain);
  if (!in_gang.ok() || !*in_gang || !(*in_gang)->min_count) return std::nullopt;
  absl::StatusOr<std::optional<GangTopology>> wanted = GangTopologyOf(pod, labels);
  if (!wanted.ok()) return std::nullopt;
  if (compute_domain != nullptr) *wanted = ComputeDomainTopology(*wanted, *compute_domain);
  if (!*wanted || !(*wanted)->required || !(*wanted)->required->level) return std::nullopt;
  return RequiredGang{.gang = **std::move(in_gang), .level = *(*wanted)->required->level,
                      .most_per_node = compute_domain != nullptr ? 1 : 0};
}

std::optional<std::string> GangNeverFitsGroup(const RequiredGang& required, const GpuDemand& member,
                                              const kube::Node& template_node, const topology::Topology& topology,
                                              const NvlinkDomainLabels& labels) {
  const Gang& gang = required.gang;
  const int members = *gang.min_count;
  const int per_node = static_cast<int>(MemberSets(topology, topology.all_gpus(), EnforcedRequest(member),
                                                   required.most_per_node > 0 ? required.most_per_node : members)
                                            .size());
  const std::string what = absl::StrCat("gang ", GangIdOf(gang), " needs all ", members,
                                        " members of ", member.request.gpus, " GPUs ");
  if (members <= per_node) return std::nullopt;
  if (required.level == GangLevel::kNode) {
    return absl::StrCat(what, "on one node; a new node holds ", per_node);
  }
  absl::StatusOr<std::optional<GroupDomainShape>> shape = GroupDomainShapeOf(template_node, labels);
  if (!shape.ok()) return absl::StrCat(what, "in one NVLink domain; the group's template: ", shape.status().message());
  if (!*shape) {
    return absl::StrCat(what, "in one NVLink domain; the group's template carries no domain label, so its new nodes "
                              "form none");
  }
  if (!(*shape)->nodes_per_domain) return std::nullopt;
  const int per_domain = *(*shape)->nodes_per_domain * per_node;
  if (members <= per_domain) return std::nullopt;
  return absl::StrCat(what, "in one NVLink domain; a domain of the group holds ", *(*shape)->nodes_per_domain,
                      " nodes of ", per_node, " members, ", per_domain, " in all");
}

}  // namespace topofit::decision
