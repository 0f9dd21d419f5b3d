#include "decision/claim_fit.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decision/prioritize.h"

namespace topofit::decision {
namespace {

// The value of a qualified attribute ("resource.kubernetes.io/pcieRoot"; unqualified: the driver's domain) as
// text that tells its types apart; nullopt when the device has none.
std::optional<std::string> AttributeValue(const kube::SliceDevice& device, absl::string_view driver,
                                          absl::string_view qualified) {
  const size_t slash = qualified.rfind('/');
  const absl::string_view domain = slash == absl::string_view::npos ? driver : qualified.substr(0, slash);
  const absl::string_view name = slash == absl::string_view::npos ? qualified : qualified.substr(slash + 1);
  const kube::DeviceAttribute* attribute = QualifiedAttribute(device, driver, domain, name);
  if (attribute == nullptr) return std::nullopt;
  if (attribute->string_value) return absl::StrCat("string:", *attribute->string_value);
  if (attribute->version_value) return absl::StrCat("version:", *attribute->version_value);
  if (attribute->int_value) return absl::StrCat("int:", *attribute->int_value);
  if (attribute->bool_value) return absl::StrCat("bool:", *attribute->bool_value ? "true" : "false");
  return std::nullopt;
}

// The allocator's order of sets (topology/allocator.h): higher bandwidth, then a better weakest link.
bool BetterSet(const topology::SetQuality& a, const topology::SetQuality& b) {
  if (a.bandwidth_mbps != b.bandwidth_mbps) return a.bandwidth_mbps > b.bandwidth_mbps;
  return a.weakest != b.weakest && topology::IsAtLeast(a.weakest, b.weakest);
}

// The node's snapshot with every GPU outside `allowed` counted as taken.
NodeGpuSnapshot Restricted(const NodeGpuSnapshot& node, topology::GpuSet allowed) {
  NodeGpuSnapshot restricted = node;
  restricted.elsewhere = restricted.elsewhere | node.topology->all_gpus().without(allowed);
  return restricted;
}

ClaimNodeVerdict Refused(GpuDemand demand, bool unresolvable, int requested, int available, std::string reason,
                         const NodeGpuSnapshot& node) {
  ClaimNodeVerdict out;
  out.demand = std::move(demand);
  out.verdict.unresolvable = unresolvable;
  out.verdict.refusal = Refusal::kGpuCount;
  out.verdict.requested_gpus = requested;
  out.verdict.insufficient = {{topology::Insufficiency::Kind::kGpuCount, requested, available}};
  out.reason = absl::StrCat("topofit: ", reason, " (", node.topology_origin, ")");
  return out;
}

}  // namespace

ClaimNodeVerdict JudgeClaimsOnNode(const ClaimGpuDemand& claims, const GpuDemand& annotations,
                                   const std::vector<SliceGpu>& gpus, const NodeGpuSnapshot& node,
                                   absl::string_view driver) {
  const topology::Topology& topology = *node.topology;
  GpuDemand demand = annotations;
  topology::GpuSet eligible;
  std::map<std::string, topology::GpuSet> groups;  // by the matched attributes' values
  for (const SliceGpu& gpu : gpus) {
    if (gpu.index < 0 || gpu.index >= topology.gpu_count()) continue;
    bool matches = true;
    for (const DeviceSelector& selector : claims.selectors) matches = matches && SelectorMatches(selector, driver, gpu.device);
    if (!matches) continue;
    const topology::GpuId id{gpu.index};
    eligible = eligible.with(id);
    std::vector<std::string> values;
    for (const std::string& attribute : claims.match_attributes) {
      std::optional<std::string> value = AttributeValue(gpu.device, driver, attribute);
      if (!value) break;
      values.push_back(*std::move(value));
    }
    if (values.size() == claims.match_attributes.size()) {
      topology::GpuSet& group = groups[absl::StrJoin(values, ",")];
      group = group.with(id);
    }
  }
  const int needed = claims.all ? eligible.size() : claims.gpus;
  demand.request.gpus = needed;
  if (gpus.empty()) {
    return Refused(demand, true, needed, 0, absl::StrCat("no ResourceSlice of ", driver, " lists this node's GPUs"), node);
  }
  if (needed == 0 || eligible.size() < needed) {
    return Refused(demand, true, std::max(needed, 1), eligible.size(),
                   absl::StrCat("the claims need ", std::max(needed, 1), " GPUs that meet their selectors, the node has ",
                                eligible.size()),
                   node);
  }

  ClaimNodeVerdict best;
  std::optional<int64_t> best_score;
  for (const auto& [value, group] : groups) {
    NodeVerdict verdict = FilterNode(demand, Restricted(node, group));
    if (!verdict.fits || !verdict.chosen) continue;
    // Scored by what it leaves free on the whole node, not in its group alone.
    verdict.chosen->leftover = node.free().without(verdict.chosen->gpus);
    verdict.chosen->leftover_cohesion = topology.quality().Cohesion(verdict.chosen->leftover);
    const int64_t score = PrioritizeScore(demand, verdict, topology);
    if (best_score) {
      const topology::SetQuality& have = best.verdict.chosen->quality;
      if (!BetterSet(verdict.chosen->quality, have) && !(verdict.chosen->quality == have && score > *best_score)) continue;
    }
    best_score = score;
    best.verdict = std::move(verdict);
  }
  best.demand = demand;
  if (best_score) return best;

  // Refused: by the GPUs the selectors leave (too few free, or too poorly linked), or else by the constraint.
  NodeVerdict unconstrained = FilterNode(demand, Restricted(node, eligible));
  if (!unconstrained.fits) {
    best.verdict = std::move(unconstrained);
    best.reason = ReasonText(best.verdict, node.topology_origin);
    return best;
  }
  int most_free = 0;
  int largest = 0;
  for (const auto& [value, group] : groups) {
    most_free = std::max(most_free, (group & node.free()).size());
    largest = std::max(largest, group.size());
  }
  return Refused(demand, largest < needed, needed, most_free,
                 absl::StrCat("the claim's matchAttribute ", absl::StrJoin(claims.match_attributes, ", "), " needs ",
                              needed, " GPUs sharing one value; at most ", most_free,
                              " free GPUs share one here", largest < needed ? " (and never more than " : "",
                              largest < needed ? absl::StrCat(largest, ")") : ""),
                 node);
}

}  // namespace topofit::decision
