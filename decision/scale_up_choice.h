#pragma once

#include <functional>
#include <optional>

#include "decision/group_rank.h"
#include "decision/intent.h"

namespace topofit::decision {

// One call of topofit's expander, composed once for the gRPC service and the replay: CA's options ranked
// (RankOptions) and the scale-up intent the ranking implies (IntentFor). What each caller then does with
// it — answer CA, or narrow the replay's expander chain — stays with the caller; the records of the call
// come from history::ScaleUpRecords, so a replay's read like a cluster's.
struct ScaleUpChoice {
  Ranking ranking;
  std::optional<Intent> intent;  // when exactly one GPU group was chosen (IntentFor)

  // Whether the ranking judged a GPU option: one of options without GPU pods only passes them through and
  // decides nothing worth recording.
  bool judged_gpu_options() const;
};

// `stop` as RankOptions takes it: once it answered true the choice is incomplete and the caller discards it.
ScaleUpChoice ChooseScaleUp(const RankInput& input, TopologySource& topologies, const RankPolicy& policy = {},
                            const std::function<bool()>& stop = {});

}  // namespace topofit::decision
