#include "history/idle_records.h"

#include "history/from_decisions.h"

namespace topofit::history {

void IdleRecords::RecordChanges(absl::Time now, const std::vector<NodeIdleGpus>& idle, DecisionRecorder& recorder) {
  for (const NodeIdleGpus& node : idle) {
    auto [last, first] = recorded_.try_emplace(node.node, node);
    if (!first && last->second == node) continue;
    if (first && node.free.empty()) continue;
    last->second = node;
    recorder.Record(IdleRecord(now, node));
  }
}

}  // namespace topofit::history
