#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/filter.h"
#include "decision/group_rank.h"
#include "decision/intent.h"
#include "decision/gang_book.h"
#include "decision/preference.h"
#include "decision/scale_up_choice.h"
#include "history/idle_gpus.h"
#include "history/record.h"

namespace topofit::history {

// Records made from the decision library's typed verdicts, one function per kind, shared by the extender,
// the expander and the replay (so a replay's records read like a cluster's). Quantities only; the words
// are made when a record is shown.

// A node as filter (or bind) judged it for a pod: its refusal, what fell short, and the set the pod would
// get or could at best reach.
Candidate NodeCandidate(absl::string_view node, const decision::NodeVerdict& verdict);

// The nodes a filter judged, as its record keeps them: each refused node with its typed refusal, and the
// nodes that fit as the first of them (its name and the set it would give) with their count. What explain
// tells of a filter ("80 of 100 nodes fit; n-1 would give GPUs 0,1") needs no more, and a filter of a pod
// that fits most nodes writes one candidate for them, not one each.
class FilterCandidates {
 public:
  explicit FilterCandidates(size_t nodes) { candidates_.reserve(nodes); }
  void Add(const decision::NodeGpuSnapshot& node, const decision::NodeVerdict& verdict);
  // A node the filter could not judge (its topology unresolved).
  void AddUnknownTopology(std::string node);
  std::vector<Candidate> Take() && { return std::move(candidates_); }

 private:
  std::vector<Candidate> candidates_;
  size_t first_fit_ = SIZE_MAX;  // its index in candidates_
};

// A filter call for a GPU pod: fits when some node passed, else no-node-fits.
Record FilterRecord(absl::Time time, PodSubject pod, int gpus, std::vector<Candidate> nodes);
// The capacity a refused pod needs, as recorded in the ledger; its candidates are the nodes that refused it.
Record PreferenceRecord(absl::Time time, const decision::Preference& preference);
// A ProvisioningRequest asked for a pod (kCapacityRequested) or withdrawn when it bound (kCapacityWithdrawn).
Record CapacityRecord(absl::Time time, Kind kind, PodSubject pod, std::string provisioning_request = "");
// The records of one filter cycle (decision/pod_filter.h), in the one order the extender and the replay
// write them: the filter (the nodes judged), then, for a pod no node took, its preference, then the
// capacity request made for it when `capacity_requested`. The filter's record comes first: a caller that
// folds repeated refusals decides on it for the rest.
std::vector<Record> FilterCycleRecords(absl::Time time, PodSubject pod, int gpus, std::vector<Candidate> nodes,
                                       const decision::Preference* preference, bool capacity_requested);
// A bind: the GPU ids the pod holds on `node`, or the failure.
Record BindRecord(absl::Time time, PodSubject pod, std::string node, int gpus, std::string gpu_ids, bool bound);
// The extender's gang decisions, each about one member (its uid is the correlation id), `gang` set:
// every member's place reserved at once (candidates: the places' nodes, Candidate::count members each; gpus:
// the whole gang's), no node or domain offered holds the gang (gpus: the whole gang's), or the member's bind
// held until every member has joined (node: its place; one candidate "members", requested = the gang's
// size, available = members joined).
Record GangReservedRecord(absl::Time time, PodSubject pod, const decision::GangReservation& reservation, int member_gpus);
Record GangNoRoomRecord(absl::Time time, PodSubject pod, std::string gang, int members, int member_gpus);
Record GangWaitingRecord(absl::Time time, PodSubject pod, const decision::GangReservation& reservation, std::string node);

// GPU options a ranking record keeps: enough to explain any realistic decision (CA sends one option per
// node group) without a 10,000-candidate row when a request is that large.
inline constexpr size_t kMaxRecordedOptions = 100;

// The expander's verdict on CA's options: each GPU option (the first kMaxRecordedOptions) with its scores
// and why it lost to the best (the first criterion it fell behind on); the pods of the GPU options that have
// a ledger preference (those topofit asked capacity for: their chains).
Record RankingRecord(absl::Time time, const decision::RankInput& input, const decision::Ranking& ranking);
// The scale-up the expander chose and the pods whose GPUs its nodes will hold, named by `pod_keys` (ledger
// uid -> namespace/name; PodKeys gives them from a ranking's input, a pod with a ledger preference by the
// name the preference gives, not that of the stand-in CA made from its ProvisioningRequest).
Record IntentRecord(absl::Time time, const decision::Intent& intent, const std::map<std::string, std::string>& pod_keys);
// A node's idle GPUs (recorded when they change): `gpus` its free GPUs, a candidate per reason that has
// some (the node, the reason, `free_gpus` how many), each with the node's free GPU ids; no candidate when
// nothing on the node is free any more.
Record IdleRecord(absl::Time time, const NodeIdleGpus& idle);

std::map<std::string, std::string> PodKeys(const decision::RankInput& input, absl::string_view node_group);

// The records of one expander call (decision::ChooseScaleUp), in the one order the gRPC service and the replay
// write them: the ranking, when it judged a GPU option, then the intent, when there is one.
std::vector<Record> ScaleUpRecords(absl::Time time, const decision::RankInput& input, const decision::ScaleUpChoice& choice);

// The node agent's answers to the kubelet on `node` (agent/device_plugin_service.h). GetPreferredAllocation:
// `preferred` (GPU indexes) is the extender's choice for `pod` (as-chosen), or topofit's allocator's when
// no pod waits with a choice (allocator-fallback, `pod` null). Allocate: the kubelet gave a container of
// `pod` the GPUs `given`, which the extender chose as `chosen` (as-chosen, or other-devices when they
// differ), or gave devices matched to no pod (unmatched, `pod` null).
Record PreferredAllocationRecord(absl::Time time, std::string node, const PodSubject* pod, std::string preferred);
Record AllocationRecord(absl::Time time, std::string node, const PodSubject* pod, std::string chosen, std::string given);

// A container of `pod` on `node` restarted (the restart collector): the cause DiagnoseRestart gave, the pod's
// GPU request, and what the restart left behind.
Record RestartRecord(absl::Time time, PodSubject pod, std::string node, int gpus, decision::RestartCause cause,
                     RestartDetail detail);

// What cluster-autoscaler said of the ProvisioningRequest `provisioning_request` (namespace/name) topofit
// made for `pod`: one of the capacity-status reasons (kCapacityNotFound ... kCapacityRevoked).
Record CapacityStatusRecord(absl::Time time, PodSubject pod, std::string provisioning_request, Reason reason);

}  // namespace topofit::history
