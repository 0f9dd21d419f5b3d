#include "decision/group_rank.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "decision/capacity_ask.h"
#include "decision/claim_pod_demand.h"
#include "decision/filter.h"
#include "decision/filter_memo.h"
#include "decision/gang_fit.h"
#include "decision/node_topology.h"
#include "decision/pod_demand.h"
#include "decision/pod_uid.h"
#include "decision/price_ratio.h"
#include "kube/pod_resources.h"
#include "decision/slowdown.h"

namespace topofit::decision {
namespace {

double PriceOf(const RankInput& input, const std::string& group, const kube::Node& template_node) {
  if (auto it = input.price_per_node_hour.find(group); it != input.price_per_node_hour.end()) return it->second;
  double price = 0;
  auto annotation = template_node.metadata.annotations.find(kPriceAnnotation);
  if (annotation != template_node.metadata.annotations.end() && absl::SimpleAtod(annotation->second, &price) &&
      price >= 0) {
    return price;
  }
  return 0;
}

// The best bandwidth a set of each size reaches on any group of the call: what a pod that lands on a
// poorer set is slowed down against (slowdown.h).
class BestBandwidths {
 public:
  void Add(const topology::Topology& topology) {
    for (int k = 2; k <= topology.gpu_count() && k < static_cast<int>(best_.size()); ++k) {
      best_[k] = std::max(best_[k], topology.quality().BestBandwidth(k));
    }
  }
  int64_t For(int gpus) const { return gpus >= 0 && gpus < static_cast<int>(best_.size()) ? best_[gpus] : 0; }

 private:
  std::array<int64_t, topology::kMaxGpusPerNode + 1> best_{};
};

// Ledger preferences by pod uid: the set each asks of new capacity. A pod placed on an option's new nodes
// satisfies its preference only with a set that meets it (a pod asking for capacity that gives its preferred
// topology is placed, by its enforced request, on a poorer set too).
using PreferredSets = std::map<std::string, topology::AllocationRequest>;

// What the ranking reads of one pending pod. CA repeats the same pending pods in every option that fits
// them: each is read once per call, before any option is judged, and found again by one lookup per pod
// entry (a lookup per fact and entry, cache misses most of them, was most of a 500-group call's ranking).
struct PodFacts {
  absl::StatusOr<GpuDemand> demand;
  std::string key;  // "namespace/name"
  // Its ComputeDomain; none when it joins none, when no domains are read, or when it names two (the
  // extender refuses such a pod anyway).
  std::optional<kube::ComputeDomain> domain;
  std::optional<RequiredGang> gang;  // RequiredGangOf
  // When it may ask for capacity (capacity_ask.h) and some offered group gives its whole ask.
  std::optional<CapacityAsk> ask;
  const topology::AllocationRequest* preferred = nullptr;  // its ledger preference, if any
  size_t index = 0;                                        // in CallPods
};

// The call's distinct pending pods (by object: the decoder shares one object per distinct pod).
class CallPods {
 public:
  CallPods(const RankInput& input, TopologySource& topologies, const RankPolicy& policy,
           const PreferredSets& preferred);
  const PodFacts& Of(const kube::Pod& pod) const { return *by_object_.at(&pod); }
  size_t size() const { return facts_.size(); }
  const PodFacts& operator[](size_t i) const { return facts_[i]; }

 private:
  std::deque<PodFacts> facts_;  // stable addresses
  absl::flat_hash_map<const kube::Pod*, const PodFacts*> by_object_;
};

CallPods::CallPods(const RankInput& input, TopologySource& topologies, const RankPolicy& policy,
                   const PreferredSets& preferred) {
  std::optional<ClusterShapes> shapes;  // built for the first pod that may ask: few calls have one
  for (const GroupOption& option : input.options) {
    for (const kube::Pod& pod : option.pods) {
      auto [it, inserted] = by_object_.try_emplace(&pod, nullptr);
      if (!inserted) continue;
      PodFacts& facts = facts_.emplace_back();
      it->second = &facts;
      facts.index = facts_.size() - 1;
      facts.demand = DemandOnTemplates(pod, input.claims);
      facts.key = absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name);
      if (input.compute_domains != nullptr && *input.compute_domains) {
        absl::StatusOr<std::optional<kube::ComputeDomain>> domain = ComputeDomainOf(pod, *input.compute_domains);
        if (domain.ok()) facts.domain = *std::move(domain);
      }
      facts.gang = RequiredGangOf(pod, policy.domain_labels, facts.domain ? &*facts.domain : nullptr);
      if (auto asked = preferred.find(LedgerPodUid(pod)); asked != preferred.end()) facts.preferred = &asked->second;
      // Its ask judged on the templates of every group CA sent, as the extender judges it on the groups the
      // ledger knows (which the expander records from the same templates): a group not offered this call (at
      // its maximum size, say) still gives the ask the extender refuses poorer nodes for.
      if (facts.demand.ok() && MayAskForCapacity(*facts.demand)) {
        if (!shapes) shapes = ClusterShapes{{}, input.templates, &topologies};
        std::vector<Preference> own;
        for (const Preference& p : input.preferences) {
          if (p.pod_uid == LedgerPodUid(pod)) own.push_back(p);
        }
        facts.ask = CapacityAskFor(pod, *facts.demand, *shapes, input.now, own, policy.capacity_wait);
      }
    }
  }
}

struct PlacedPod {
  const kube::Pod* pod;
  const PodFacts* facts;
  GpuDemand demand;
};

// What judging the options has worked out. A request holds few distinct template shapes, while
// each new node starts empty and fills the same way: the allocator's search behind FilterNode would
// otherwise run again for every pod entry on every node it tries (FilterMemo).
class JudgeMemo {
 public:
  explicit JudgeMemo(size_t pods) : placed_(pods, 0) {}
  const NodeVerdict& Filter(const GpuDemand& demand, const NodeGpuSnapshot& node) {
    return filter_.FilterAndScore(demand, node).verdict;
  }
  // Why the group's new nodes can never take the pod: they can never hold its gang whole (gang_fit.h), or
  // they are outside the NVLink cliques its ComputeDomain runs in (compute_domain.h). Judged once per gang
  // or domain and group.
  const std::optional<std::string>& NeverFits(const PodFacts& pod, const GpuDemand& demand, const std::string& group,
                                              const kube::Node& template_node, const topology::Topology& topology,
                                              const NvlinkDomainLabels& labels) {
    static const std::optional<std::string> kFits;
    if (pod.gang) {
      auto [verdict, judged] = gang_fits_.try_emplace({GangIdOf(pod.gang->gang), group});
      if (judged) verdict->second = GangNeverFitsGroup(*pod.gang, demand, template_node, topology, labels);
      if (verdict->second) return verdict->second;
    }
    if (!pod.domain) return kFits;
    auto [verdict, judged] = domain_fits_.try_emplace({pod.domain->metadata.uid, group});
    if (judged) verdict->second = ComputeDomainNeverOnGroup(*pod.domain, template_node.metadata.labels);
    return verdict->second;
  }
  // Pods some option's new nodes take.
  void MarkPlaced(const PodFacts& pod) { placed_[pod.index] = 1; }
  bool Placed(size_t pod) const { return placed_[pod] != 0; }

 private:
  FilterMemo filter_;
  std::map<std::pair<std::string, std::string>, std::optional<std::string>> gang_fits_;  // (gang, group)
  std::map<std::pair<std::string, std::string>, std::optional<std::string>> domain_fits_;  // (domain uid, group)
  std::vector<char> placed_;  // by PodFacts::index
};

// RankOptions' `stop`, asked between options and, within one, every kJudgementsPerAsk placements tried: an
// option of 15,000 new nodes whose pods fit none tries every node for every pod, tens of millions of
// placements for a few thousand pods.
class Stopper {
 public:
  explicit Stopper(const std::function<bool()>& stop) : stop_(stop) {}
  // Asks now.
  bool Stopped() {
    if (!stopped_ && stop_) stopped_ = stop_();
    return stopped_;
  }
  // Counts one placement tried; asks at every kJudgementsPerAsk-th.
  bool AfterJudgement() { return ++judged_ % kJudgementsPerAsk == 0 ? Stopped() : stopped_; }
  bool stopped() const { return stopped_; }

 private:
  static constexpr int64_t kJudgementsPerAsk = 4096;
  const std::function<bool()>& stop_;
  int64_t judged_ = 0;
  bool stopped_ = false;
};

// Places the option's GPU pods on `node_count` fresh template nodes, first-fit decreasing by GPU count
// as CA's binpacking estimator orders them, each placement checked with the extender's filter. Returns
// early, the verdict incomplete, once `stopper` says so.
void Simulate(const GroupOption& option, const std::shared_ptr<const topology::Topology>& topology,
              const std::string& origin, std::vector<PlacedPod>& gpu_pods, const BestBandwidths& best,
              JudgeMemo& memo, Stopper& stopper, OptionVerdict& verdict) {
  std::stable_sort(gpu_pods.begin(), gpu_pods.end(), [](const PlacedPod& a, const PlacedPod& b) {
    return a.demand.request.gpus > b.demand.request.gpus;
  });
  // Nameless: FilterNode reads a node's topology and occupied GPUs, not its name or origin.
  std::vector<NodeGpuSnapshot> nodes(std::max(option.node_count, 0));
  for (NodeGpuSnapshot& node : nodes) node.topology = topology;
  int asked = 0, met = 0;
  int64_t placed_gpus = 0;
  double useful_gpus = 0;
  size_t first_open = 0;  // the nodes before it have no GPU left, so no GPU pod fits them
  size_t first_fresh = 0;  // no pod placed on it or after it yet
  // The new nodes share one topology, so a pod's verdict on one is a function of its free GPUs (FilterMemo's
  // key): a pod is judged once per distinct free set, and once on all the fresh nodes together. Before, a
  // pod no node would take was judged on every node of the option: 97% of 320,000 judgements per call of
  // 10 options x 800 pods, most of ranking's time.
  std::vector<topology::GpuSet> refused_free;  // the free sets the pod was refused on
  for (const PlacedPod& pod : gpu_pods) {
    while (first_open < nodes.size() && nodes[first_open].free().empty()) ++first_open;
    bool placed = false;
    const NodeVerdict* asking = nullptr;  // the first set it fitted but refused, asking for better capacity
    refused_free.clear();
    for (size_t i = first_open; i < nodes.size() && !placed; ++i) {
      if (stopper.AfterJudgement()) return;
      const topology::GpuSet free = nodes[i].free();
      if (std::find(refused_free.begin(), refused_free.end(), free) != refused_free.end()) continue;
      const NodeVerdict& v = memo.Filter(pod.demand, nodes[i]);
      const bool refused = !v.fits || (pod.facts->ask && AsksForCapacity(pod.demand, v, *pod.facts->ask));
      if (refused) {
        // The extender would refuse this set, or take it only to ask for the capacity that gives the pod's
        // ask.
        if (v.fits && asking == nullptr) asking = &v;
        if (i >= first_fresh) break;  // every node from here on is as fresh as this one
        refused_free.push_back(free);
        continue;
      }
      first_fresh = std::max(first_fresh, i + 1);
      nodes[i].ours = nodes[i].ours | v.chosen->gpus;
      placed = true;
      placed_gpus += pod.demand.request.gpus;
      if (pod.demand.asks_for_topology()) {
        ++asked;
        if (topology::MeetsLinkAndBandwidth(v.chosen->quality, pod.demand.request)) {
          ++met;
          verdict.topology_met.push_back(LedgerPodUid(*pod.pod));
        }
      }
      useful_gpus += pod.demand.request.gpus * UsefulShare(Stretch(best.For(pod.demand.request.gpus),
                                                                   v.chosen->quality.bandwidth_mbps,
                                                                   AssumedCommFraction(pod.demand)));
      const topology::AllocationRequest* preferred = pod.facts->preferred;
      if (preferred != nullptr && topology::MeetsLinkAndBandwidth(v.chosen->quality, *preferred)) {
        ++verdict.preferences_satisfied;
      }
    }
    const std::string& key = pod.facts->key;
    if (placed) {
      ++verdict.placed_pods;
      memo.MarkPlaced(*pod.facts);
    } else if (!verdict.strands) {
      // Every node refused it: say why the first one did. The others are still placed, so that an option
      // stranding only pods no option can serve can be judged on the rest.
      verdict.strands = true;
      verdict.reason = absl::StrCat("pod ", key, " would not be placed on the new nodes: ",
                                    nodes.empty()        ? "no nodes"
                                    : asking != nullptr ? AskingReasonText(*asking, *pod.facts->ask)
                                                        : ReasonText(memo.Filter(pod.demand, nodes[0]), origin));
    }
    if (!placed) verdict.unplaced_pods.push_back(key);
  }
  if (verdict.strands) return;
  verdict.quality_per_mille = asked > 0 ? met * 1000 / asked : 1000;
  verdict.provisioned_gpus = option.node_count * topology->gpu_count();
  verdict.idle_gpus = static_cast<int>(std::max<int64_t>(0, verdict.provisioned_gpus - placed_gpus));
  verdict.useful_gpus = useful_gpus;
  verdict.reason = absl::StrCat("placed ", verdict.placed_pods, " GPU pods on ", option.node_count, " x ", origin);
}

// An option's group template and its topology; null when CA sent no template for the group.
struct OptionTemplate {
  const kube::Node* node = nullptr;
  const absl::StatusOr<NodeTopology>* topology = nullptr;
};

OptionVerdict JudgeOption(const RankInput& input, const GroupOption& option, const OptionTemplate& group,
                          const BestBandwidths& best, const CallPods& pods, JudgeMemo& memo, Stopper& stopper,
                          const NvlinkDomainLabels& domain_labels) {
  OptionVerdict verdict;
  verdict.node_group_id = option.node_group_id;
  std::vector<PlacedPod> gpu_pods;
  for (const kube::Pod& pod : option.pods) {
    const PodFacts& facts = pods.Of(pod);
    const absl::StatusOr<GpuDemand>& demand = facts.demand;
    if (!demand.ok()) {
      // The scheduler refuses such a pod on every node, so new nodes would not serve it either.
      verdict.needs_gpus = verdict.strands = true;
      verdict.reason = absl::StrCat("pod ", pod.metadata.namespace_name, "/", pod.metadata.name, ": ",
                                    demand.status().message());
      return verdict;
    }
    if (demand->wants_gpus()) gpu_pods.push_back({&pod, &facts, *demand});
  }
  verdict.needs_gpus = !gpu_pods.empty();
  if (!verdict.needs_gpus) {
    // What it buys and what its pods are worth are all that tell such options apart here (WithoutGpuPods).
    for (const kube::Pod& pod : option.pods) {
      constexpr double kMilliBytesPerGib = 1000.0 * 1024 * 1024 * 1024;
      verdict.pods_worth += PodWorthPerHour(static_cast<double>(kube::EffectiveRequestMilli(pod, "cpu")) / 1000,
                                            static_cast<double>(kube::EffectiveRequestMilli(pod, "memory")) /
                                                kMilliBytesPerGib,
                                            0, 0);
    }
    if (group.node != nullptr) {
      verdict.provisioned_gpus = verdict.idle_gpus = option.node_count * AllocatableGpus(*group.node);
      verdict.price = option.node_count * PriceOf(input, option.node_group_id, *group.node);
    }
    verdict.reason = "no GPU pods: passed through";
    return verdict;
  }
  if (group.node == nullptr) {
    verdict.strands = true;
    verdict.reason = "no template node for this group";
    return verdict;
  }
  const absl::StatusOr<NodeTopology>& topology = *group.topology;
  if (!topology.ok()) {
    verdict.strands = true;
    verdict.reason = std::string(topology.status().message());
    return verdict;
  }
  const kube::Node& template_node = *group.node;
  // Members of a gang the group's domains can never hold whole, and pods of a ComputeDomain running in
  // other cliques, are stranded by any number of its nodes: they are not placed, the rest of the option is
  // (CA counts pods, not domains).
  std::erase_if(gpu_pods, [&](const PlacedPod& pod) {
    const std::optional<std::string>& never = memo.NeverFits(*pod.facts, pod.demand, option.node_group_id,
                                                             template_node, *topology->topology, domain_labels);
    if (!never) return false;
    const std::string& key = pod.facts->key;
    if (!verdict.strands) verdict.reason = absl::StrCat("pod ", key, " would not be placed on the new nodes: ", *never);
    verdict.strands = true;
    verdict.unplaced_pods.push_back(key);
    return true;
  });
  verdict.price = option.node_count * PriceOf(input, option.node_group_id, template_node);
  Simulate(option, topology->topology, topology->origin, gpu_pods, best, memo, stopper, verdict);
  return verdict;
}

// What an option costs per GPU-hour of useful work: its price (or, when some option's price is unknown,
// its GPUs) over the GPUs its pods use, each discounted for the slowdown its set is expected to cause
// (UsefulShare: its bill and its delay). Idle GPUs and slow sets both raise it; per mille, so that options
// equal to a thousandth tie and CA's own expanders break the tie.
int64_t CostPerUsefulGpu(const OptionVerdict& v, bool by_price) {
  const double cost = by_price ? v.price : static_cast<double>(v.provisioned_gpus);
  return v.useful_gpus > 0 ? std::llround(cost / v.useful_gpus * 1000) : std::numeric_limits<int64_t>::max();
}

// Smaller is better: the ledger's preferences first (pods refused for a required topology: the scale-up
// exists for them), then the least cost per useful GPU-hour, then the most pods placed.
auto RankKey(const OptionVerdict& v, bool by_price) {
  return std::make_tuple(-v.preferences_satisfied, CostPerUsefulGpu(v, by_price), -v.placed_pods);
}

// The options without GPU pods to pass on to CA's chain. Every GPU such an option buys idles until some GPU
// pod comes for it, so when each of them buys GPUs (a cluster of GPU nodes only) only the best goes on: by
// CA's price ratio when every one's price is known — the nodes' price against what the pods they serve are
// worth, so a big node packing many pods beats a small one whose lower price serves few (issue 31: by
// total price the small 2-GPU groups with many cores won, and the GPU pods that followed stayed on them at
// three times the price per GPU) — else by GPUs bought. Options that buy no GPU are all passed on (and
// only they), for CA's chain to choose among as it would without topofit.
std::vector<std::string> WithoutGpuPods(std::vector<OptionVerdict>& verdicts) {
  std::vector<OptionVerdict*> options;
  for (OptionVerdict& v : verdicts) {
    if (!v.needs_gpus) options.push_back(&v);
  }
  if (options.empty()) return {};
  const bool gpu_free_exists =
      std::any_of(options.begin(), options.end(), [](const OptionVerdict* v) { return v->provisioned_gpus == 0; });
  const bool by_price = std::all_of(options.begin(), options.end(), [](const OptionVerdict* v) { return v->price > 0; });
  const auto key = [&](const OptionVerdict* v) {
    if (gpu_free_exists) return v->provisioned_gpus == 0 ? 0.0 : 1.0;
    return by_price ? PriceRatio(v->price, v->pods_worth) : static_cast<double>(v->provisioned_gpus);
  };
  const double best = key(*std::min_element(options.begin(), options.end(),
                                            [&](const OptionVerdict* a, const OptionVerdict* b) { return key(a) < key(b); }));
  std::vector<std::string> kept;
  for (OptionVerdict* v : options) {
    if (key(v) == best) {
      kept.push_back(v->node_group_id);
    } else {
      v->reason = absl::StrCat("no GPU pods, and ", v->provisioned_gpus, " GPUs bought for them: ",
                               gpu_free_exists ? "an option buying none exists" : "another option costs less for what it serves");
    }
  }
  return kept;
}

}  // namespace

Ranking RankOptions(const RankInput& input, TopologySource& topologies, const RankPolicy& policy,
                    const std::function<bool()>& stop) {
  Ranking ranking;
  PreferredSets preferred;
  for (const Preference& p : input.preferences) {
    preferred.emplace(p.pod_uid, topology::AllocationRequest{.gpus = p.gpus, .min_link = p.min_link,
                                                             .min_bandwidth_mbps = p.min_bandwidth_mbps});
  }

  std::vector<const OptionVerdict*> viable;
  // Each group's template topology, resolved once; the best set of each size across them.
  std::map<std::string, absl::StatusOr<NodeTopology>> resolved;
  BestBandwidths best;
  std::vector<OptionTemplate> templates(input.options.size());
  for (size_t i = 0; i < input.options.size(); ++i) {
    const std::string& group = input.options[i].node_group_id;
    auto template_node = input.templates.find(group);
    if (template_node == input.templates.end()) continue;
    auto topology = resolved.find(group);
    if (topology == resolved.end()) {
      topology = resolved.emplace(group, topologies.ResolveShared(template_node->second)).first;
      if (topology->second.ok()) best.Add(*topology->second->topology);
    }
    templates[i] = {template_node->second.get(), &topology->second};
  }
  const CallPods pods(input, topologies, policy, preferred);
  JudgeMemo memo(pods.size());
  ranking.verdicts.reserve(input.options.size());
  Stopper stopper(stop);
  for (size_t i = 0; i < input.options.size(); ++i) {
    if (stopper.Stopped()) return ranking;
    ranking.verdicts.push_back(
        JudgeOption(input, input.options[i], templates[i], best, pods, memo, stopper, policy.domain_labels));
    if (stopper.stopped()) return ranking;  // inside that option
  }
  absl::flat_hash_set<absl::string_view> placed;  // keys ("namespace/name") of pods some option takes
  for (size_t p = 0; p < pods.size(); ++p) {
    if (memo.Placed(p)) placed.insert(pods[p].key);
  }
  // A pod no option's new nodes take is stranded whichever group grows: it does not disqualify options
  // that serve the rest (it would otherwise veto every scale-up, for every other pod, on every loop).
  auto serves_all_it_can = [&placed](const OptionVerdict& v) {
    if (!v.strands) return true;
    if (v.placed_pods == 0 || v.unplaced_pods.empty()) return false;
    return std::none_of(v.unplaced_pods.begin(), v.unplaced_pods.end(),
                        [&placed](const std::string& pod) { return placed.contains(pod); });
  };
  bool any_gpu = false;
  const std::vector<std::string> passed_through = WithoutGpuPods(ranking.verdicts);
  for (const OptionVerdict& v : ranking.verdicts) {
    if (v.needs_gpus) {
      any_gpu = true;
      if (serves_all_it_can(v)) viable.push_back(&v);
    }
  }
  if (!viable.empty()) {
    const bool by_price = std::all_of(viable.begin(), viable.end(), [](const OptionVerdict* v) { return v->price > 0; });
    ranking.by_price = by_price;
    const auto best_key = RankKey(**std::min_element(viable.begin(), viable.end(), [by_price](const auto* a, const auto* b) {
      return RankKey(*a, by_price) < RankKey(*b, by_price);
    }), by_price);
    for (const OptionVerdict* v : viable) {
      if (RankKey(*v, by_price) == best_key) ranking.chosen.push_back(v->node_group_id);
    }
  } else if (any_gpu && !policy.veto_when_all_strand) {
    // Fail open: let CA's next expander decide among everything.
    for (const OptionVerdict& v : ranking.verdicts) {
      if (v.needs_gpus) ranking.chosen.push_back(v.node_group_id);
    }
  }
  ranking.chosen.insert(ranking.chosen.end(), passed_through.begin(), passed_through.end());
  ranking.veto = ranking.chosen.empty() && any_gpu;
  return ranking;
}

}  // namespace topofit::decision

namespace topofit::decision {

RankCriterion LostOn(const OptionVerdict& loser, const OptionVerdict& winner, bool by_price) {
  using enum RankCriterion;
  const auto l = RankKey(loser, by_price), w = RankKey(winner, by_price);
  // Smaller is better in every element of the key; the first that differs decides.
  if (std::get<0>(l) != std::get<0>(w)) return std::get<0>(l) > std::get<0>(w) ? kPreferences : kNone;
  if (std::get<1>(l) != std::get<1>(w)) return std::get<1>(l) > std::get<1>(w) ? kCostPerUsefulGpu : kNone;
  return std::get<2>(l) > std::get<2>(w) ? kPodsPlaced : kNone;
}

}  // namespace topofit::decision
