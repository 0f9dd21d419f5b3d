#include "replay/kube_scheduler_model.h"

#include <algorithm>

#include "replay/dra_allocation.h"
#include "replay/peer/go_gpuallocator.h"

namespace topofit::sim {
namespace {

// nvidia.com/gpu's weight in the tuned profile's MostAllocated, as the documentation's bin-packing
// example weighs extended resources against cpu and memory at 1.
constexpr int64_t kGpuScoringWeight = 3;
// The default profile's weight of the NodeAffinity score plugin.
constexpr int64_t kNodeAffinityWeight = 2;

// MaxNodeScore / MaxExtenderPriority: how kube-scheduler scales an extender's 0..10 to a plugin's 0..100.
constexpr int64_t kExtenderScale = 10;

}  // namespace

int KubeSchedulerModel::FeasibleNodesToFind(int nodes) {
  constexpr int kMinFeasibleNodesToFind = 100;
  constexpr int kMinFeasibleNodesPercentage = 5;
  if (nodes < kMinFeasibleNodesToFind) return nodes;
  const int percentage = std::max(kMinFeasibleNodesPercentage, 50 - nodes / 125);
  return std::max(kMinFeasibleNodesToFind, nodes * percentage / 100);
}

bool KubeSchedulerModel::UsesExtender(int pod) const {
  // managedResources: nvidia.com/gpu — kube-scheduler calls the extender only for pods that ask for GPUs.
  return world_.policy().topofit_extender && world_.klass(pod).gpus > 0;
}

const decision::FilterMemo::Entry& KubeSchedulerModel::Extend(int pod, const SimNode& node) {
  return memo_.FilterAndScore(world_.klass(pod).demand, node.gpus);
}

int64_t KubeSchedulerModel::ExtenderScore(int pod, const SimNode& node) {
  return decision::WarmKeptScore(warm_, world_.klass(pod).demand, Extend(pod, node), node.gpus, &warm_memo_);
}

decision::PodFilterOutcome KubeSchedulerModel::ExtenderFilter(int pod, const std::vector<int>& nodes) {
  std::vector<const decision::NodeGpuSnapshot*> offered;
  offered.reserve(nodes.size());
  for (int node : nodes) offered.push_back(&world_.nodes()[node].gpus);
  const std::string uid = world_.PodUid(pod);
  // The pod was created when it arrived.
  return decision::FilterPod(world_.klass(pod).demand, {uid, World::TimeAt(world_.spec(pod).arrival)}, offered,
                             *holds_, memo_, ask_);
}

int64_t KubeSchedulerModel::DefaultScore(int klass, const SimNode& node) const {
  const PodClass& c = world_.classes()[klass];
  const NodeGroupSpec& spec = world_.groups()[node.group].spec;
  const double cpu = static_cast<double>(node.cpu_used + c.cpu_milli) / static_cast<double>(std::max<int64_t>(spec.cpu_milli, 1));
  const double memory =
      static_cast<double>(node.memory_used + c.memory_mib) / static_cast<double>(std::max<int64_t>(spec.memory_mib, 1));
  // NodeResourcesFit and BalancedAllocation, weight 1 each, and NodeAffinity, weight 2; the other default
  // plugins score every node of this replay alike.
  const double balanced = (1 - std::abs(cpu - memory) / 2) * 100;
  const int64_t affinity = kNodeAffinityWeight * NodeAffinityScore(klass, node);
  if (world_.policy().scoring == ResourceScoring::kMostAllocatedWithGpus) {
    return MostAllocatedScore(klass, node) + static_cast<int64_t>(balanced) + affinity;
  }
  // LeastAllocated, cpu and memory weighted equally.
  const double least_allocated = ((1 - cpu) + (1 - memory)) / 2 * 100;
  return static_cast<int64_t>(least_allocated) + static_cast<int64_t>(balanced) + affinity;
}

int64_t KubeSchedulerModel::NodeAffinityScore(int klass, const SimNode& node) const {
  // The sum of the matched preferred terms' weights, normalised by upstream's DefaultNormalizeScore to
  // 0..100 against the highest among the nodes scored. Every term the operator writes weighs 100 and a
  // node matches at most its group's, so the highest is 100 whenever any node matches, and the
  // normalisation leaves the weight as it is, capped at 100.
  return std::min<int64_t>(world_.classes()[klass].group_preference[node.group], 100);
}

int64_t KubeSchedulerModel::MostAllocatedScore(int klass, const SimNode& node) const {
  // Upstream's resourceAllocationScorer with mostRequestedScore: per resource, requested (with this pod)
  // x 100 / allocatable, capped at 100; the weighted mean, in integers. An extended resource the pod does
  // not request, or the node does not have, is left out.
  const PodClass& c = world_.classes()[klass];
  const GroupState& group = world_.groups()[node.group];
  struct Resource {
    int64_t requested, allocatable, weight;
  };
  std::vector<Resource> resources = {{node.cpu_used + c.cpu_milli, group.spec.cpu_milli, 1},
                                     {node.memory_used + c.memory_mib, group.spec.memory_mib, 1}};
  if (c.gpus > 0 && group.gpus > 0) resources.push_back({node.used_gpus() + c.gpus, group.gpus, kGpuScoringWeight});
  int64_t score = 0, weights = 0;
  for (const Resource& r : resources) {
    if (r.allocatable <= 0) continue;
    score += std::min(r.requested, r.allocatable) * 100 / r.allocatable * r.weight;
    weights += r.weight;
  }
  return weights > 0 ? score / weights : 0;
}

topology::GpuSet KubeSchedulerModel::DevicePluginChoice(int pod, const SimNode& node, int gpus) {
  const topology::GpuSet free = node.gpus.free();
  if (gpus == 1) {
    // kubelet offers the free devices in Go map order, and the plugin takes the first: a random one.
    const std::vector<topology::GpuId> ids = free.ids();
    const auto draw = [&](topology::GpuId id) {
      return world_.draws().Bits(DrawPurpose::kDeviceGpu,
                                 {static_cast<uint64_t>(pod), static_cast<uint64_t>(node.id), static_cast<uint64_t>(id.value)});
    };
    return topology::GpuSet().with(
        *std::min_element(ids.begin(), ids.end(), [&](topology::GpuId a, topology::GpuId b) { return draw(a) < draw(b); }));
  }
  const topology::GpuSet chosen = bench::PeerBestEffort(*node.gpus.topology, free, gpus);
  // The policy can return its padded block, short of GPUs (NVIDIA/go-gpuallocator#80); kubelet then tops
  // the allocation up from the devices it offered, modelled as the lowest free ids.
  return chosen | DraFirstFit(free.without(chosen), gpus - chosen.size());
}

topology::GpuSet KubeSchedulerModel::NodeAllocatorChoice(int pod, const SimNode& node, int gpus) {
  if (gpus <= 0) return {};
  if (world_.policy().gpu_api == GpuApi::kDra) return DraFirstFit(node.gpus.free(), gpus);
  return DevicePluginChoice(pod, node, gpus);
}

topology::GpuSet KubeSchedulerModel::GpusFor(int pod, const SimNode& node) {
  if (!UsesExtender(pod)) return NodeAllocatorChoice(pod, node, world_.klass(pod).gpus);
  const topology::GpuSet chosen = Extend(pod, node).verdict.chosen->gpus;
  if (world_.policy().gpu_api == GpuApi::kDevicePlugin && world_.policy().gpu_ids == GpuIds::kAgent) return chosen;
  const topology::GpuSet given = NodeAllocatorChoice(pod, node, world_.klass(pod).gpus);
  if (given != chosen) ++gpu_sets_not_as_chosen_;
  return given;
}

PlacementDecision KubeSchedulerModel::Schedule(int pod) {
  PlacementDecision decision;
  const std::vector<int>& ready = world_.ready_nodes();
  const int n = static_cast<int>(ready.size());
  if (n == 0) return decision;
  const int klass = world_.pods()[pod].klass;
  const int to_find = FeasibleNodesToFind(n);
  std::vector<int> feasible;
  int processed = 0;
  for (int i = 0; i < n && static_cast<int>(feasible.size()) < to_find; ++i) {
    const int node = ready[(next_start_ + i) % n];
    ++processed;
    if (world_.FitsByCount(klass, world_.nodes()[node])) feasible.push_back(node);
  }
  next_start_ = (next_start_ + processed) % n;

  const bool extender = UsesExtender(pod);
  if (extender) decision.filter = ExtenderFilter(pod, feasible);
  int64_t best = -1;
  uint64_t best_draw = 0;  // among the nodes of the best score, the least draw wins: each equally likely
  for (size_t i = 0; i < feasible.size(); ++i) {
    const int node = feasible[i];
    const SimNode& candidate = world_.nodes()[node];
    int64_t score = DefaultScore(klass, candidate);
    if (extender) {
      if (!decision.filter.verdicts[i].fits) {
        decision.refused_nodes.push_back(node);
        continue;
      }
      if (world_.policy().topology_score) score += ExtenderScore(pod, candidate) * kExtenderWeight * kExtenderScale;
    }
    if (score < best) continue;
    const uint64_t draw =
        world_.draws().Bits(DrawPurpose::kSchedulerTie, {static_cast<uint64_t>(pod), static_cast<uint64_t>(node)});
    if (score > best || draw < best_draw) {
      best = score;
      best_draw = draw;
      decision.node = node;
    }
  }
  if (decision.node < 0) {
    decision.refused_for_topology = extender && !feasible.empty();
    return decision;
  }
  decision.refused_nodes.clear();
  decision.gpus = GpusFor(pod, world_.nodes()[decision.node]);
  return decision;
}

PlacementDecision KubeSchedulerModel::ScheduleOn(int pod, int node) {
  PlacementDecision decision;
  const SimNode& candidate = world_.nodes()[node];
  if (candidate.state != NodeState::kReady || !world_.FitsByCount(world_.pods()[pod].klass, candidate)) return decision;
  if (UsesExtender(pod)) {
    decision.filter = ExtenderFilter(pod, {node});
    if (!decision.filter.any_fits()) return decision;
  }
  decision.node = node;
  decision.gpus = GpusFor(pod, candidate);
  return decision;
}

}  // namespace topofit::sim
