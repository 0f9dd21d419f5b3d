#include "history/from_decisions.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "decision/pod_demand.h"
#include "decision/pod_uid.h"
#include "topology/catalog.h"

namespace topofit::history {
namespace {

Reason LossReason(decision::RankCriterion criterion) {
  switch (criterion) {
    case decision::RankCriterion::kPreferences: return Reason::kFewerPreferences;
    case decision::RankCriterion::kCostPerUsefulGpu: return Reason::kHigherCostPerUsefulGpu;
    case decision::RankCriterion::kPodsPlaced: return Reason::kFewerPodsPlaced;
    case decision::RankCriterion::kNone: break;
  }
  return Reason::kChosen;
}

Record Started(absl::Time time, Component component, Kind kind, Reason reason) {
  Record r;
  r.time = time;
  r.component = component;
  r.kind = kind;
  r.reason = reason;
  return r;
}

// A record about one pod: its uid is the correlation id.
Record AboutPod(absl::Time time, Kind kind, Reason reason, PodSubject pod) {
  Record r = Started(time, Component::kExtender, kind, reason);
  r.correlation_id = pod.uid;
  r.pods = {std::move(pod)};
  return r;
}

PodSubject SubjectOf(const kube::Pod& pod) {
  return {decision::LedgerPodUid(pod), absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name)};
}

// The pods topofit asked capacity for, by ledger uid: the name of the pod itself, where CA's option names
// the stand-in it made from the pod's ProvisioningRequest (ml/topofit-trainer-0-0 for ml/trainer).
std::map<std::string, std::string, std::less<>> PreferredPodKeys(const decision::RankInput& input) {
  std::map<std::string, std::string, std::less<>> keys;
  for (const decision::Preference& p : input.preferences) keys.emplace(p.pod_uid, p.pod_key);
  return keys;
}

}  // namespace

Candidate NodeCandidate(absl::string_view node, const decision::NodeVerdict& verdict) {
  Candidate c;
  c.name = std::string(node);
  const decision::RefusalFacts facts = decision::FactsOf(verdict);
  c.reason = ReasonOf(facts.refusal);
  c.unresolvable = facts.unresolvable;
  c.requested = facts.requested;
  c.available = facts.available;
  c.free_gpus = facts.free_gpus;
  c.held_gpus = facts.held_gpus;
  c.held_until = facts.held_until;
  if (verdict.chosen) c.topology = DetailOf(*verdict.chosen);
  else if (verdict.best_reachable) c.topology = DetailOf(*verdict.best_reachable);
  return c;
}

void FilterCandidates::Add(const decision::NodeGpuSnapshot& node, const decision::NodeVerdict& verdict) {
  if (verdict.fits && first_fit_ < candidates_.size()) {
    ++candidates_[first_fit_].count;
    return;
  }
  if (verdict.fits) first_fit_ = candidates_.size();
  candidates_.push_back(NodeCandidate(node.node, verdict));
  if (candidates_.back().topology && node.topology->source() == topology::kFallbackSource) {
    candidates_.back().topology->assumed = true;
  }
}

void FilterCandidates::AddUnknownTopology(std::string node) {
  candidates_.push_back({.name = std::move(node), .reason = Reason::kTopologyUnknown, .unresolvable = true});
}

Record FilterRecord(absl::Time time, PodSubject pod, int gpus, std::vector<Candidate> nodes) {
  bool any_fits = false;
  for (const Candidate& c : nodes) any_fits = any_fits || c.reason == Reason::kFits;
  Record r = AboutPod(time, Kind::kFilter, any_fits ? Reason::kFits : Reason::kNoNodeFits, std::move(pod));
  r.gpus = gpus;
  r.candidates = std::move(nodes);
  return r;
}

Record PreferenceRecord(absl::Time time, const decision::Preference& preference) {
  Record r = AboutPod(time, Kind::kPreference, Reason::kNoNodeFits, {preference.pod_uid, preference.pod_key});
  r.gpus = preference.gpus;
  // The pod's required topology, as a candidate shape: what capacity it needs.
  Candidate needed;
  needed.name = "needed";
  needed.topology = TopologyDetail{"", std::string(topology::LinkClassName(preference.min_link)),
                                   preference.min_bandwidth_mbps};
  r.candidates.push_back(std::move(needed));
  for (const std::string& node : preference.refused_nodes) {
    r.candidates.push_back(Candidate{.name = node, .reason = Reason::kNoNodeFits});
  }
  return r;
}

Record CapacityRecord(absl::Time time, Kind kind, PodSubject pod, std::string provisioning_request) {
  Record r = AboutPod(time, kind, kind == Kind::kCapacityWithdrawn ? Reason::kBound : Reason::kNoNodeFits, std::move(pod));
  r.provisioning_request = std::move(provisioning_request);
  return r;
}

std::vector<Record> FilterCycleRecords(absl::Time time, PodSubject pod, int gpus, std::vector<Candidate> nodes,
                                       const decision::Preference* preference, bool capacity_requested) {
  std::vector<Record> records;
  records.push_back(FilterRecord(time, pod, gpus, std::move(nodes)));
  if (preference != nullptr) records.push_back(PreferenceRecord(time, *preference));
  if (capacity_requested) records.push_back(CapacityRecord(time, Kind::kCapacityRequested, std::move(pod)));
  return records;
}

Record BindRecord(absl::Time time, PodSubject pod, std::string node, int gpus, std::string gpu_ids, bool bound) {
  Record r = AboutPod(time, Kind::kBind, bound ? Reason::kBound : Reason::kBindFailed, std::move(pod));
  r.gpus = gpus;
  if (!gpu_ids.empty()) r.candidates.push_back(Candidate{.name = node, .topology = TopologyDetail{gpu_ids, "", 0}});
  r.node = std::move(node);
  return r;
}

Record GangReservedRecord(absl::Time time, PodSubject pod, const decision::GangReservation& reservation, int member_gpus) {
  Record r = AboutPod(time, Kind::kGang, Reason::kGangReserved, std::move(pod));
  r.gang = reservation.gang;
  r.gpus = member_gpus * static_cast<int>(reservation.slots.size());
  std::map<std::string, int> members;
  for (const decision::GangSlot& slot : reservation.slots) ++members[slot.node];
  for (const auto& [node, count] : members) r.candidates.push_back(Candidate{.name = node, .count = count});
  return r;
}

Record GangNoRoomRecord(absl::Time time, PodSubject pod, std::string gang, int members, int member_gpus) {
  Record r = AboutPod(time, Kind::kGang, Reason::kGangNoRoom, std::move(pod));
  r.gang = std::move(gang);
  r.gpus = members * member_gpus;
  r.candidates.push_back(Candidate{.name = "members", .requested = members});
  return r;
}

Record GangWaitingRecord(absl::Time time, PodSubject pod, const decision::GangReservation& reservation, std::string node) {
  Record r = AboutPod(time, Kind::kGang, Reason::kGangWaiting, std::move(pod));
  r.gang = reservation.gang;
  r.node = std::move(node);
  r.candidates.push_back(Candidate{.name = "members",
                                   .requested = static_cast<int64_t>(reservation.slots.size()),
                                   .available = reservation.joined()});
  return r;
}

Record RankingRecord(absl::Time time, const decision::RankInput& input, const decision::Ranking& ranking) {
  Record r = Started(time, Component::kExpander, Kind::kRanking, ranking.veto ? Reason::kVetoed : Reason::kChosen);
  const std::set<std::string> chosen(ranking.chosen.begin(), ranking.chosen.end());
  const decision::OptionVerdict* best = nullptr;
  for (const decision::OptionVerdict& v : ranking.verdicts) {
    if (v.needs_gpus && chosen.count(v.node_group_id) > 0) {
      best = &v;
      break;
    }
  }
  if (best != nullptr) r.node_group = best->node_group_id;
  // The ranking joins the chains of the pods topofit asked capacity for (a ledger preference), not of
  // every pending pod CA sent: naming thousands of pods per call cost the expander more than it ranks.
  const std::map<std::string, std::string, std::less<>> preferred = PreferredPodKeys(input);
  std::set<std::string, std::less<>> pod_uids;
  for (size_t i = 0; i < ranking.verdicts.size() && i < input.options.size(); ++i) {
    const decision::OptionVerdict& v = ranking.verdicts[i];
    if (!v.needs_gpus) continue;
    if (r.candidates.size() < kMaxRecordedOptions) {
      Candidate c;
      c.name = v.node_group_id;
      if (v.strands) c.reason = Reason::kGroupWouldStrand;
      else if (chosen.count(v.node_group_id) > 0) c.reason = Reason::kChosen;
      else if (best != nullptr) c.reason = LossReason(decision::LostOn(v, *best, ranking.by_price));
      else c.reason = Reason::kVetoed;
      c.preferences_satisfied = v.preferences_satisfied;
      c.quality_per_mille = v.quality_per_mille;
      c.idle_gpus = v.idle_gpus;
      c.price = v.price;
      c.requested = static_cast<int64_t>(v.unplaced_pods.size());  // pods the new nodes would refuse
      c.available = v.placed_pods;
      r.candidates.push_back(std::move(c));
    }
    if (preferred.empty()) continue;
    for (const kube::Pod& pod : input.options[i].pods) {
      const std::string& uid = decision::LedgerPodUid(pod);
      auto named = preferred.find(uid);
      if (named != preferred.end() && pod_uids.insert(uid).second) r.pods.push_back({uid, named->second});
    }
  }
  return r;
}

Record IdleRecord(absl::Time time, const NodeIdleGpus& idle) {
  // The record's reason is that of most of its GPUs (the first in classification order on a tie); a node
  // with nothing free has all its GPUs bound.
  Reason reason = Reason::kBound;
  int most = 0;
  for (size_t i = 0; i < kIdleReasons; ++i) {
    if (idle.counts[i] > most) {
      most = idle.counts[i];
      reason = ReasonOfIdle(static_cast<IdleReason>(i));
    }
  }
  Record r = Started(time, Component::kExtender, Kind::kIdle, reason);
  r.node = idle.node;
  r.node_group = idle.node_group;
  r.gpus = idle.free.size();
  for (size_t i = 0; i < kIdleReasons; ++i) {
    if (idle.counts[i] == 0) continue;
    r.candidates.push_back(Candidate{.name = idle.node,
                                     .reason = ReasonOfIdle(static_cast<IdleReason>(i)),
                                     .free_gpus = idle.counts[i],
                                     .topology = TopologyDetail{idle.free.ToString(), "", 0}});
  }
  return r;
}

std::map<std::string, std::string> PodKeys(const decision::RankInput& input, absl::string_view node_group) {
  const std::map<std::string, std::string, std::less<>> preferred = PreferredPodKeys(input);
  std::map<std::string, std::string> keys;
  for (const decision::GroupOption& option : input.options) {
    if (option.node_group_id != node_group) continue;
    for (const kube::Pod& pod : option.pods) {
      PodSubject subject = SubjectOf(pod);
      if (auto named = preferred.find(subject.uid); named != preferred.end()) subject.key = named->second;
      keys.emplace(std::move(subject.uid), std::move(subject.key));
    }
  }
  return keys;
}

Record IntentRecord(absl::Time time, const decision::Intent& intent, const std::map<std::string, std::string>& pod_keys) {
  Record r = Started(time, Component::kExpander, Kind::kIntent, Reason::kChosen);
  r.node_group = intent.node_group;
  for (const std::string& uid : intent.pod_uids) {
    auto it = pod_keys.find(uid);
    r.pods.push_back({uid, it != pod_keys.end() ? it->second : ""});
  }
  for (const auto& [uid, gpus] : intent.pod_gpus) r.gpus += gpus;
  r.candidates.push_back(Candidate{.name = intent.node_group, .reason = Reason::kChosen,
                                   .requested = intent.node_count});
  return r;
}

namespace {

// A record of the agent on `node`, about `pod` when it is known (its uid then the correlation id).
Record ByAgent(absl::Time time, Kind kind, Reason reason, std::string node, const PodSubject* pod) {
  Record r = Started(time, Component::kAgent, kind, reason);
  if (pod != nullptr) {
    r.correlation_id = pod->uid;
    r.pods = {*pod};
  }
  r.node = std::move(node);
  return r;
}

Candidate GpuSetCandidate(std::string name, std::string gpu_ids, Reason reason) {
  Candidate c;
  c.name = std::move(name);
  c.reason = reason;
  c.topology = TopologyDetail{std::move(gpu_ids), "", 0};
  return c;
}

int CountOf(absl::string_view gpu_ids) {
  return gpu_ids.empty() ? 0 : static_cast<int>(std::count(gpu_ids.begin(), gpu_ids.end(), ',')) + 1;
}

}  // namespace

Record PreferredAllocationRecord(absl::Time time, std::string node, const PodSubject* pod, std::string preferred) {
  const Reason reason = pod != nullptr ? Reason::kAsChosen : Reason::kAllocatorFallback;
  Record r = ByAgent(time, Kind::kPreferredAllocation, reason, std::move(node), pod);
  r.gpus = CountOf(preferred);
  r.candidates.push_back(GpuSetCandidate("preferred", std::move(preferred), reason));
  return r;
}

Record AllocationRecord(absl::Time time, std::string node, const PodSubject* pod, std::string chosen, std::string given) {
  const Reason reason = pod == nullptr ? Reason::kUnmatched : chosen == given ? Reason::kAsChosen : Reason::kOtherDevices;
  Record r = ByAgent(time, Kind::kAllocation, reason, std::move(node), pod);
  r.gpus = CountOf(given);
  r.candidates.push_back(GpuSetCandidate("given", std::move(given), reason));
  if (pod != nullptr) r.candidates.push_back(GpuSetCandidate("chosen", std::move(chosen), Reason::kChosen));
  return r;
}

std::vector<Record> ScaleUpRecords(absl::Time time, const decision::RankInput& input, const decision::ScaleUpChoice& choice) {
  std::vector<Record> records;
  if (choice.judged_gpu_options()) records.push_back(RankingRecord(time, input, choice.ranking));
  if (choice.intent) records.push_back(IntentRecord(time, *choice.intent, PodKeys(input, choice.intent->node_group)));
  return records;
}

Record CapacityStatusRecord(absl::Time time, PodSubject pod, std::string provisioning_request, Reason reason) {
  Record r = Started(time, Component::kProvisioner, Kind::kCapacityStatus, reason);
  r.correlation_id = pod.uid;
  r.pods = {std::move(pod)};
  r.provisioning_request = std::move(provisioning_request);
  return r;
}

Record RestartRecord(absl::Time time, PodSubject pod, std::string node, int gpus, decision::RestartCause cause,
                     RestartDetail detail) {
  Record r = Started(time, Component::kRestarts, Kind::kRestart, ReasonOfRestart(cause));
  r.correlation_id = pod.uid;
  r.pods = {std::move(pod)};
  r.node = std::move(node);
  r.gpus = gpus;
  r.restart = std::move(detail);
  return r;
}

}  // namespace topofit::history
