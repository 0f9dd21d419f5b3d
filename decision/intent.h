#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "kube/objects.h"

namespace topofit::decision {

struct RankInput;
struct Ranking;

// A scale-up the expander chose: node group `node_group` grows by `node_count` for these pods. The
// extender honours it by holding the new capacity for those pods for a bounded time (capacity_hold.h).
struct Intent {
  std::string node_group;
  std::vector<std::string> pod_uids;  // those still pending: a pod leaves when it binds or goes
  // GPUs of those the new capacity is held for (pods requiring a topology, or preferring one the group's
  // nodes give; IntentFor).
  std::map<std::string, int> pod_gpus;
  int node_count = 0;
  kube::StringMap node_labels;  // what the group's nodes carry (node_group_identity.h)
  absl::Time recorded;
};

// The intent a ranking implies: when exactly one GPU group is chosen, that is the scale-up CA will make
// (the chain's later expanders only choose among the options without GPU pods passed through with it), so
// the extender should hold the group's new GPUs for the option's pods — by the uid the ledger knows them by
// (LedgerPodUid), with the GPUs of those that require a topology or prefer one the group gives (the pods
// the node is held for), and with the labels the group's nodes will carry (NodeGroupLabels of its
// template). With several GPU groups left
// the choice is CA's, and guessing would hold capacity for the wrong one: none. CA's CapacityBuffer fake
// pods (capacity_buffer.h) are never held for, and a scale-up for them alone has no intent: buffered
// capacity is for whichever real pod comes. The time is the ledger's to set. One function for the gRPC
// service and the bench.
std::optional<Intent> IntentFor(const RankInput& input, const Ranking& ranking);

}  // namespace topofit::decision
