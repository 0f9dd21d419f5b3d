#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "history/idle_gpus.h"
#include "history/recorder.h"

namespace topofit::history {

// The idle records (from_decisions.h: IdleRecord) of a series of classifications: one per node whose idle
// GPUs changed since the last record of it; a node first seen with nothing free has nothing to tell yet.
// The one rule behind the extender's idle records (scheduler/idle_gpus_gauge.h) and the replay's
// (replay/simulator.h). Not thread-safe.
class IdleRecords {
 public:
  void RecordChanges(absl::Time now, const std::vector<NodeIdleGpus>& idle, DecisionRecorder& recorder);

 private:
  std::map<std::string, NodeIdleGpus> recorded_;  // by node: what the last record said
};

}  // namespace topofit::history
