#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ledger/ledger.h"
#include "scheduler/gpu_state.h"

namespace topofit::scheduler {

// The refusal label (NodeVerdict::refusal, the nodes-refused metric) of a node refused for a hold.
inline constexpr absl::string_view kHeldForScaleUp = "held-for-scale-up";

// New capacity a scale-up brought for some pods is held for them, so that a node bought for an 8-GPU
// NVLink job is not fragmented by 1-GPU pods before the job lands (DESIGN.md, "The ledger"). On a node an
// intent brought (ledger/node_group_identity.h), a GPU pod the intent is not for may take GPUs only while
// enough stay free for the intent's pods that are still pending (those with a live preference: a pod
// leaves the intent when it binds or goes). The hold ends with the intent's pods or its expiry.
//
// Built once per request from the ledger's intents (the GPUs held: Intent::pod_gpus of the pods still in
// it) and preferences (the pods' names, for the reason); pure and cheap to query per node.
class CapacityHolds {
 public:
  CapacityHolds(const std::vector<ledger::Intent>& intents, const std::vector<ledger::Preference>& preferences);

  // Why `pod_uid`, wanting `gpus`, may not use `node`, or nullopt when it may.
  std::optional<std::string> Refusal(absl::string_view pod_uid, int gpus, const NodeGpuSnapshot& node) const;

 private:
  struct Held {
    ledger::Intent intent;
    int gpus = 0;                   // the pending demand of its pods
    std::vector<std::string> pods;  // their namespace/name where known, else uid
  };
  std::vector<Held> held_;  // the intents whose pods still wait
};

}  // namespace topofit::scheduler
