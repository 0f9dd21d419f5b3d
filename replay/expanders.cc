#include "replay/expanders.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <utility>

#include "codec/node_topology.h"
#include "decision/claim_pod_demand.h"
#include "decision/group_rank.h"
#include "decision/price_ratio.h"
#include "decision/scale_up_choice.h"
#include "history/from_decisions.h"

namespace topofit::sim {
namespace {

// The options with the lowest `cost`, exact ties kept.
std::vector<ScaleUpOption> KeepLowest(std::vector<ScaleUpOption> options,
                                      const std::function<double(const ScaleUpOption&)>& cost) {
  if (options.empty()) return options;
  double best = cost(options.front());
  for (const ScaleUpOption& option : options) best = std::min(best, cost(option));
  std::vector<ScaleUpOption> kept;
  for (ScaleUpOption& option : options) {
    if (cost(option) == best) kept.push_back(std::move(option));
  }
  return kept;
}

// least-waste: per option, with the template's capacity x node count,
// (availCPU - reqCPU)/availCPU + (availMem - reqMem)/availMem. GPUs are not looked at.
double Waste(const ScaleUpOption& option, const World& world) {
  const NodeGroupSpec& spec = world.groups()[option.group].spec;
  const double cpu = static_cast<double>(spec.cpu_milli) * option.node_count;
  const double memory = static_cast<double>(spec.memory_mib) * option.node_count;
  double cpu_requested = 0, memory_requested = 0;
  for (int pod : option.pods) {
    cpu_requested += static_cast<double>(world.klass(pod).cpu_milli);
    memory_requested += static_cast<double>(world.klass(pod).memory_mib);
  }
  return (cpu - cpu_requested) / std::max(cpu, 1.0) + (memory - memory_requested) / std::max(memory, 1.0);
}

// price: CA's priceSubScore, decision::PriceRatio of the nodes' price and the pods' worth. Its unfitness
// factor is 1000 for every GPU template, so among GPU groups only this ratio decides. GPUs are worth the
// cheapest GPU price the options offer.
double PriceSubScore(const ScaleUpOption& option, const World& world, double gpu_hour) {
  double pods_worth = 0;
  for (int pod : option.pods) {
    const PodClass& c = world.klass(pod);
    pods_worth += decision::PodWorthPerHour(static_cast<double>(c.cpu_milli) / 1000,
                                            static_cast<double>(c.memory_mib) / 1024, c.gpus, gpu_hour);
  }
  return decision::PriceRatio(world.groups()[option.group].spec.price_per_hour * option.node_count, pods_worth);
}

// priority, as upstream's BestOptions (cluster-autoscaler/expander/priority/priority.go): each option's
// group name is matched against every priority's regexes (re.FindStringIndex: found anywhere in the
// name, not anchored); the options matched at the highest priority are kept, ties included, and an
// option whose group matches nothing is dropped ("The group won't be used"). Upstream starts its maximum
// at -1, so a priority below -1 never wins. When no option matches at all, nothing is filtered ("No
// options filtered") and the chain goes on with every option.
std::vector<ScaleUpOption> KeepHighestPriority(std::vector<ScaleUpOption> options, const World& world) {
  const ExpanderPriorities& priorities = world.policy().priorities;
  std::vector<std::optional<int>> levels;
  std::optional<int> top;
  for (const ScaleUpOption& option : options) {
    std::optional<int> level = priorities.Highest(world.groups()[option.group].spec.name);
    if (level && *level < -1) level.reset();
    if (level && (!top || *level > *top)) top = level;
    levels.push_back(level);
  }
  if (!top) return options;
  std::vector<ScaleUpOption> kept;
  for (size_t i = 0; i < options.size(); ++i) {
    if (levels[i] == top) kept.push_back(std::move(options[i]));
  }
  return kept;
}

}  // namespace

std::vector<ScaleUpOption> ApplyStockExpander(StockExpander expander, std::vector<ScaleUpOption> options,
                                              const World& world) {
  if (options.size() <= 1) return options;
  switch (expander) {
    case StockExpander::kRandom: {
      // Keyed by the loop's time and the group, so two policies left with the same tie in the same loop
      // pick alike; an option whose group is drawn twice (none in CA) keeps the first.
      const auto draw = [&](const ScaleUpOption& option) {
        return world.draws().Bits(DrawPurpose::kExpanderTie,
                                  {static_cast<uint64_t>(world.now()), static_cast<uint64_t>(option.group)});
      };
      const auto pick = std::min_element(options.begin(), options.end(),
                                         [&](const ScaleUpOption& a, const ScaleUpOption& b) { return draw(a) < draw(b); });
      return {std::move(*pick)};
    }
    case StockExpander::kLeastWaste:
      return KeepLowest(std::move(options), [&](const ScaleUpOption& o) { return Waste(o, world); });
    case StockExpander::kMostPods:
      return KeepLowest(std::move(options), [](const ScaleUpOption& o) { return -static_cast<double>(o.pods.size()); });
    case StockExpander::kLeastNodes:
      return KeepLowest(std::move(options), [](const ScaleUpOption& o) { return static_cast<double>(o.node_count); });
    case StockExpander::kPrice: {
      double gpu_hour = 0;
      for (const ScaleUpOption& o : options) {
        const GroupState& g = world.groups()[o.group];
        if (g.gpus > 0) {
          const double per_gpu = g.spec.price_per_hour / g.gpus;
          gpu_hour = gpu_hour == 0 ? per_gpu : std::min(gpu_hour, per_gpu);
        }
      }
      return KeepLowest(std::move(options), [&](const ScaleUpOption& o) { return PriceSubScore(o, world, gpu_hour); });
    }
    case StockExpander::kPriority:
      return KeepHighestPriority(std::move(options), world);
  }
  return options;
}

std::optional<std::vector<ScaleUpOption>> ApplyTopofitExpander(std::vector<ScaleUpOption> options, const World& world,
                                                               const std::vector<decision::Preference>& preferences) {
  decision::RankInput input;
  // One object per pod however many options carry it, as CA's request decodes (RankOptions works each
  // shared pod's demand out once).
  std::map<int, std::shared_ptr<const kube::Pod>> objects;
  // Under DRA topofit's expander reads the GPU pods' claims from its claim watch: here, the replay's.
  std::map<std::string, int, std::less<>> claim_of;  // claim name -> pod
  decision::ClaimSource claims;
  claims.claim = [&](absl::string_view, absl::string_view name) -> std::optional<kube::ResourceClaim> {
    auto it = claim_of.find(name);
    if (it == claim_of.end()) return std::nullopt;
    return world.ClaimObject(it->second);
  };
  for (const ScaleUpOption& option : options) {
    const GroupState& group = world.groups()[option.group];
    decision::GroupOption wire;
    wire.node_group_id = group.spec.name;
    wire.node_count = option.node_count;
    for (int pod : option.pods) {
      std::shared_ptr<const kube::Pod>& object = objects[pod];
      if (object == nullptr) {
        object = std::make_shared<const kube::Pod>(world.PodObject(pod));
        if (world.policy().gpu_api == GpuApi::kDra && world.klass(pod).gpus > 0) {
          claim_of.emplace(world.ClaimName(pod), pod);
        }
      }
      wire.pods.push_back(object);
    }
    input.options.push_back(std::move(wire));
    input.price_per_node_hour[group.spec.name] = group.spec.price_per_hour;
  }
  // CA's request carries the template of every node group, not only those in the options.
  input.templates = world.group_templates();
  input.preferences = preferences;
  input.now = world.time();
  if (world.policy().gpu_api == GpuApi::kDra) input.claims = &claims;
  codec::TopologyResolver topologies;  // one per loop: a replay has few templates
  decision::RankPolicy policy;
  policy.capacity_wait = world.policy().capacity_wait;
  decision::ScaleUpChoice choice = decision::ChooseScaleUp(input, topologies, policy);
  if (world.recorder() != nullptr) {
    for (history::Record& record : history::ScaleUpRecords(world.time(), input, choice)) {
      world.recorder()->Record(std::move(record));
    }
  }
  if (choice.ranking.veto) return std::nullopt;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < options.size(); ++i) index.emplace(world.groups()[options[i].group].spec.name, i);
  if (choice.intent) options[index.at(choice.intent->node_group)].intent = *std::move(choice.intent);
  std::vector<ScaleUpOption> kept;
  for (const std::string& id : choice.ranking.chosen) {
    auto it = index.find(id);
    if (it != index.end()) kept.push_back(options[it->second]);
  }
  return kept;
}

ExpanderChoice ChooseOption(std::vector<ScaleUpOption> options, World& world,
                            const std::vector<decision::Preference>& preferences) {
  ExpanderChoice choice;
  if (options.empty()) return choice;
  if (world.policy().topofit_expander) {
    std::optional<std::vector<ScaleUpOption>> ranked = ApplyTopofitExpander(std::move(options), world, preferences);
    if (!ranked) {
      choice.vetoed = true;
      return choice;
    }
    options = *std::move(ranked);
  }
  for (StockExpander expander : world.policy().chain) {
    options = ApplyStockExpander(expander, std::move(options), world);
  }
  options = ApplyStockExpander(StockExpander::kRandom, std::move(options), world);
  if (!options.empty()) choice.option = std::move(options.front());
  return choice;
}

}  // namespace topofit::sim
