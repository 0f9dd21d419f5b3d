#include "decision/scale_up_choice.h"

#include <algorithm>

namespace topofit::decision {

bool ScaleUpChoice::judged_gpu_options() const {
  return std::any_of(ranking.verdicts.begin(), ranking.verdicts.end(), [](const OptionVerdict& v) { return v.needs_gpus; });
}

ScaleUpChoice ChooseScaleUp(const RankInput& input, TopologySource& topologies, const RankPolicy& policy,
                            const std::function<bool()>& stop) {
  ScaleUpChoice choice;
  choice.ranking = RankOptions(input, topologies, policy, stop);
  choice.intent = IntentFor(input, choice.ranking);
  return choice;
}

}  // namespace topofit::decision
