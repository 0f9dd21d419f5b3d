#pragma once

#include <optional>
#include <vector>

#include "replay/policy.h"
#include "replay/world.h"
#include "ledger/ledger.h"

namespace topofit::sim {

// One of CA's scale-up options: grow `group` by `node_count` nodes for `pods` (its estimator's result).
struct ScaleUpOption {
  int group = 0;
  int node_count = 0;
  std::vector<int> pods;
  // Set by topofit's expander on the one GPU option it chose (decision/intent.h): recorded in the ledger if
  // this option is the scale-up made.
  std::optional<decision::Intent> intent;
};

// The options a stock expander keeps, in input order (docs/bench.md, "The models"). `random` keeps one;
// the others keep every option tied at their best, so the chain can narrow further. `priority` reads the
// world's Policy::priorities and keeps every option when none of their groups matches.
std::vector<ScaleUpOption> ApplyStockExpander(StockExpander expander, std::vector<ScaleUpOption> options,
                                              const World& world);

// topofit's expander: decision::RankOptions — the function the gRPC server calls — on the options as CA
// would send them (pods as API objects, each group's template node and price) with the ledger's
// preferences. The kept options in rank order; nullopt for a veto (every GPU option would strand a pod).
std::optional<std::vector<ScaleUpOption>> ApplyTopofitExpander(std::vector<ScaleUpOption> options, const World& world,
                                                               const std::vector<decision::Preference>& preferences);

struct ExpanderChoice {
  std::optional<ScaleUpOption> option;  // the scale-up; none when there was no option or a veto
  bool vetoed = false;
};

// The whole chain for a policy: topofit's expander first when it runs, then the stock chain, then random
// for whatever ties remain.
ExpanderChoice ChooseOption(std::vector<ScaleUpOption> options, World& world,
                            const std::vector<decision::Preference>& preferences);

}  // namespace topofit::sim
