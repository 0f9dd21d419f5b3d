// The extender's part in placing gangs all or nothing (decision/gang_book.h, docs/gangs.md): filter
// reserves and steers, bind waits for the whole gang. The rest of the verbs are in extender.cc.

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decision/gang_capacity_target.h"
#include "decision/gang_placement.h"
#include "decision/pod_uid.h"
#include "history/from_decisions.h"
#include "scheduler/extender.h"
#include "server/logging.h"
#include "topology/catalog.h"

namespace topofit::scheduler {
namespace {

// Every node of the request refused with `reason`, as FailedAndUnresolvableNodes: preemption cannot
// make a gang's room (it evicts for one pod at a time), so kube-scheduler must not try it.
codec::ExtenderFilterResult RefuseAll(const codec::ExtenderArgs& args, const std::string& reason) {
  codec::ExtenderFilterResult result;
  if (args.nodes) result.nodes.emplace(); else result.node_names.emplace();
  if (args.nodes) {
    for (const codec::NodeArg& node : *args.nodes) result.failed_and_unresolvable_nodes[node.name] = reason;
  } else if (args.node_names) {
    for (const std::string& node : *args.node_names) result.failed_and_unresolvable_nodes[node] = reason;
  }
  return result;
}

std::string Places(const decision::GangReservation& reservation) {
  std::set<std::string> nodes;
  for (const decision::GangSlot& slot : reservation.slots) nodes.insert(slot.node);
  return absl::StrJoin(nodes, ",");
}

}  // namespace

absl::StatusOr<std::optional<kube::ComputeDomain>> Extender::ComputeDomainOf(const kube::Pod& pod) const {
  if (!compute_domains_) return std::nullopt;
  return decision::ComputeDomainOf(pod, compute_domains_);
}

std::map<std::string, std::string, std::less<>> Extender::DomainsBoundNow() {
  std::map<std::string, std::string, std::less<>> bound;
  const absl::Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(domain_binds_mu_);
  for (auto it = domain_binds_.begin(); it != domain_binds_.end();) {
    if (now - it->second.at >= kComputeDomainBindMemory) {
      it = domain_binds_.erase(it);
      continue;
    }
    bound.emplace(it->first, it->second.uid);
    ++it;
  }
  return bound;
}

void Extender::RememberDomainBind(const kube::ComputeDomain& domain, const std::string& node) {
  std::lock_guard<std::mutex> lock(domain_binds_mu_);
  domain_binds_.insert_or_assign(node, DomainBind{domain.metadata.uid, clock_.Now()});
}

kube::ComputeDomain Extender::WithBoundNodes(const kube::ComputeDomain& domain,
                                             const std::map<std::string, std::string, std::less<>>& bound) const {
  kube::ComputeDomain joined = domain;
  for (const auto& [node, uid] : bound) {
    if (uid != domain.metadata.uid) continue;
    const std::shared_ptr<const decision::NodeGpuSnapshot> snapshot = state_.Snapshot(node);
    if (snapshot == nullptr) continue;
    auto clique = snapshot->origin->labels.find(topology::kGpuCliqueLabel);
    if (clique == snapshot->origin->labels.end()) continue;
    joined.nodes.push_back(kube::ComputeDomainNode{.name = node, .clique_id = clique->second, .status = {}});
  }
  return joined;
}

std::optional<std::string> Extender::RefusalWithBinds(const kube::ComputeDomain& joined,
                                                      const std::map<std::string, std::string, std::less<>>& bound,
                                                      absl::string_view node, const kube::StringMap& labels) {
  const auto on_node = bound.find(node);
  return decision::ComputeDomainRefusal(joined, labels, on_node == bound.end() ? "" : on_node->second);
}

std::string Extender::ComputeDomainBindGate(const kube::ComputeDomain& domain, const std::string& node) {
  const std::shared_ptr<const decision::NodeGpuSnapshot> snapshot = state_.Snapshot(node);
  if (snapshot == nullptr) return std::string();
  const std::map<std::string, std::string, std::less<>> bound = DomainsBoundNow();
  std::optional<std::string> refusal = RefusalWithBinds(WithBoundNodes(domain, bound), bound, node, snapshot->origin->labels);
  return refusal ? absl::StrCat("topofit: ", *refusal) : std::string();
}

void Extender::RefuseOutside(const kube::ComputeDomain& domain, RequestNodes& nodes) {
  const std::map<std::string, std::string, std::less<>> bound = DomainsBoundNow();
  const kube::ComputeDomain joined = WithBoundNodes(domain, bound);
  size_t kept = 0;
  for (size_t i = 0; i < nodes.snapshots.size(); ++i) {
    if (std::optional<std::string> refusal =
            RefusalWithBinds(joined, bound, nodes.names[i], nodes.snapshots[i]->origin->labels)) {
      nodes.outside_domain.insert_or_assign(std::string(nodes.names[i]), absl::StrCat("topofit: ", *refusal));
      continue;
    }
    nodes.snapshots[kept] = std::move(nodes.snapshots[i]);
    nodes.names[kept] = nodes.names[i];
    if (!nodes.raw.empty()) nodes.raw[kept] = nodes.raw[i];
    ++kept;
  }
  nodes.snapshots.resize(kept);
  nodes.names.resize(kept);
  if (!nodes.raw.empty()) nodes.raw.resize(kept);
}

absl::StatusOr<std::optional<decision::Gang>> Extender::CountedGangOf(const kube::Pod& pod,
                                                                      const kube::ComputeDomain* domain) {
  absl::StatusOr<std::optional<decision::Gang>> gang = decision::GangOf(pod, domain);
  if (!gang.ok() || !*gang || (*gang)->min_count) return gang;
  if ((*gang)->source != decision::GangSource::kPodGroup && (*gang)->source != decision::GangSource::kWorkload) {
    return std::optional<decision::Gang>();
  }
  const std::string id = decision::GangIdOf(**gang);
  const absl::Time now = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(workload_counts_mu_);
    if (auto known = workload_counts_.find(id); known != workload_counts_.end()) {
      if (!known->second.failed_until || now < *known->second.failed_until) {
        if (!known->second.count) return std::optional<decision::Gang>();
        (*gang)->min_count = known->second.count;
        return gang;
      }
    }
  }
  // Read outside the lock: a slow API server delays this pod's filter, not every other's.
  absl::StatusOr<std::optional<int>> count = kube_.WorkloadGangMinCount(pod);
  if (!count.ok()) {
    server::LogEvent(log_, "gang",
                     {{"gang", id}, {"pod", absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name)},
                      {"event", "count_unknown"}, {"reason", std::string(count.status().message())}},
                     spdlog::level::warn);
  }
  {
    std::lock_guard<std::mutex> lock(workload_counts_mu_);
    WorkloadCount remembered;
    if (count.ok()) remembered.count = *count; else remembered.failed_until = now + kWorkloadCountRetry;
    auto [entry, added] = workload_counts_.insert_or_assign(id, remembered);
    if (added) {
      workload_counts_order_.push_back(id);
      if (workload_counts_order_.size() > kWorkloadCountsRemembered) {
        workload_counts_.erase(workload_counts_order_.front());
        workload_counts_order_.pop_front();
      }
    }
  }
  if (!count.ok() || !*count) return std::optional<decision::Gang>();
  (*gang)->min_count = *count;
  return gang;
}

std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> Extender::WithoutReserved(
    std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> snapshots, absl::string_view gang) const {
  if (gangs_.size() == 0) return snapshots;
  for (std::shared_ptr<const decision::NodeGpuSnapshot>& snapshot : snapshots) {
    const topology::GpuSet reserved = gangs_.ReservedOn(snapshot->node, gang).without(snapshot->ours | snapshot->elsewhere);
    if (reserved.empty()) continue;
    auto held = std::make_shared<decision::NodeGpuSnapshot>(*snapshot);
    held->elsewhere = held->elsewhere | reserved;
    snapshot = std::move(held);
  }
  return snapshots;
}

void Extender::ExpireGangs() {
  for (const decision::GangReservation& expired : gangs_.Expire(clock_.Now())) {
    metrics_.gang_reservations.Inc({"expired"});
    server::LogEvent(log_, "gang",
                     {{"gang", expired.gang}, {"event", "expired"}, {"joined", expired.joined()},
                      {"bound", expired.bound()}, {"members", static_cast<int>(expired.slots.size())},
                      {"nodes", Places(expired)}},
                     spdlog::level::warn);
  }
}

std::optional<codec::ExtenderFilterResult> Extender::FilterGangMember(const codec::ExtenderArgs& args,
                                                                      const decision::GpuDemand& demand,
                                                                      const decision::Gang& gang,
                                                                      const RequestNodes& nodes,
                                                                      const kube::ComputeDomain* domain,
                                                                      const decision::ClaimGpuDemand* claims,
                                                                      const decision::GpuDemand& own) {
  const std::string id = decision::GangIdOf(gang);
  const std::string pod_uid = decision::LedgerPodUid(args.pod);
  const std::string pod_key = absl::StrCat(args.pod.metadata.namespace_name, "/", args.pod.metadata.name);
  std::lock_guard<std::mutex> lock(gangs_mu_);
  ExpireGangs();
  // A place on a node the gang's ComputeDomain may no longer use (the driver labelled it for another
  // domain after the reservation was made) would never be taken: the gang is placed again from scratch.
  if (const decision::GangReservation* held = gangs_.Find(id); held != nullptr && !nodes.outside_domain.empty()) {
    for (const decision::GangSlot& slot : held->slots) {
      if (slot.bound || !nodes.outside_domain.contains(slot.node)) continue;
      const std::string node = slot.node;  // the slot goes with the reservation
      gangs_.Cancel(id);
      metrics_.gang_reservations.Inc({"cancelled"});
      server::LogEvent(log_, "gang", {{"gang", id}, {"event", "cancelled"}, {"node", node},
                                      {"reason", nodes.outside_domain.at(node)}});
      break;
    }
  }
  if (gangs_.Find(id) == nullptr && !gangs_.SlotOf(pod_uid)) {
    if (gangs_.Landed(id)) return std::nullopt;  // a pod that replaces a member of a running gang
    absl::StatusOr<std::optional<decision::GangTopology>> wanted = decision::GangTopologyOf(args.pod, domain_labels_);
    if (!wanted.ok()) {
      codec::ExtenderFilterResult result;
      result.error = absl::StrCat("topofit: pod ", pod_key, ": ", wanted.status().message());
      return result;
    }
    if (domain != nullptr) *wanted = decision::ComputeDomainTopology(*wanted, *domain);
    const auto snapshots = WithoutReserved(nodes.snapshots, id);
    std::vector<decision::GangCandidate> candidates;
    candidates.reserve(snapshots.size());
    for (const auto& snapshot : snapshots) {
      // A member whose GPUs come from claims goes only where its claims are met (a node's slices, selectors).
      if (claims != nullptr && !JudgeClaims(*claims, own, *snapshot).verdict.fits) continue;
      candidates.push_back({snapshot.get(), {}, decision::NvlinkDomainOf(snapshot->origin->labels, domain_labels_)});
    }
    // A ComputeDomain's channel is prepared once per node: its members take a node each.
    const decision::GangAsk ask{demand, *gang.min_count, wanted->value_or(decision::GangTopology{}), domain != nullptr ? 1 : 0};
    absl::StatusOr<decision::GangPlacement> placement = decision::PlaceGang(ask, candidates);
    absl::Status reserved = placement.ok() ? gangs_.Reserve(id, *placement, clock_.Now()) : placement.status();
    if (!reserved.ok()) {
      metrics_.gang_reservations.Inc({"no_room"});
      const std::string reason = absl::StrCat("topofit: gang ", id, ": ", reserved.message());
      server::LogEvent(log_, "gang", {{"gang", id}, {"pod", pod_key}, {"event", "no_room"}, {"reason", reason}});
      if (absl::IsInvalidArgument(reserved)) {
        codec::ExtenderFilterResult result;
        result.error = reason;
        return result;
      }
      // kube-scheduler retries the member every few seconds: repeats are folded as its refusals are.
      if (recorder_ != nullptr) {
        RecordCycle({history::GangNoRoomRecord(clock_.Now(), {pod_uid, pod_key}, id, *gang.min_count, demand.request.gpus)});
      }
      return RefuseAll(args, absl::StrCat(reason, RequestGangCapacity(args.pod, demand, gang,
                                                                      wanted->value_or(decision::GangTopology{}),
                                                                      claims != nullptr)));
    }
    metrics_.gang_reservations.Inc({"reserved"});
    if (recorder_ != nullptr) {
      recorder_->Record(history::GangReservedRecord(clock_.Now(), {pod_uid, pod_key}, *gangs_.Find(id), demand.request.gpus));
    }
    server::LogEvent(log_, "gang",
                     {{"gang", id}, {"pod", pod_key}, {"event", "reserved"}, {"members", *gang.min_count},
                      {"nodes", Places(*gangs_.Find(id))},
                      {"domain", placement->domain ? placement->domain->id.value : std::string("none")}});
  }
  std::set<std::string, std::less<>> offered;
  for (const auto& snapshot : nodes.snapshots) offered.insert(snapshot->node);
  const std::optional<decision::GangSlot> slot =
      gangs_.Join(id, pod_uid, [&](absl::string_view node) { return offered.contains(node); }, clock_.Now());
  const decision::GangReservation* reservation = gangs_.Find(id);
  if (!slot) {
    if (reservation == nullptr || reservation->complete()) return std::nullopt;  // beyond the gang's count
    return RefuseAll(args, absl::StrCat("topofit: gang ", id, ": its open places are on nodes ", Places(*reservation),
                                        ", none of which kube-scheduler offered this pod"));
  }
  codec::ExtenderFilterResult result = RefuseAll(
      args, absl::StrCat("topofit: gang ", id, ": this member's place is on node ", slot->node));
  if (!offered.contains(slot->node)) return result;
  result.failed_and_unresolvable_nodes.erase(slot->node);
  if (result.nodes) {
    for (size_t i = 0; i < nodes.snapshots.size(); ++i) {
      if (nodes.snapshots[i]->node == slot->node) result.nodes->push_back(nodes.raw[i]);
    }
  } else {
    result.node_names->push_back(slot->node);
  }
  server::LogEvent(log_, "filter",
                   {{"pod", pod_key}, {"gpus", demand.request.gpus}, {"gang", id}, {"node", slot->node},
                    {"joined", reservation->joined()}, {"members", static_cast<int>(reservation->slots.size())}});
  return result;
}

std::string Extender::RequestGangCapacity(const kube::Pod& pod, const decision::GpuDemand& demand,
                                          const decision::Gang& gang, const decision::GangTopology& wanted,
                                          bool claim_pods) {
  if (capacity_ == nullptr || !leadership_.IsLeader() || !gang.min_count) return std::string();
  // New nodes of a domain are several nodes: a gang that must share one node is not served by them.
  if (wanted.required && wanted.required->level != decision::GangLevel::kDomain) return std::string();
  const std::string id = decision::GangIdOf(gang);
  const absl::Time now = clock_.Now();
  auto asked = gang_asks_.find(id);
  if (asked == gang_asks_.end() || now - asked->second.measured >= kGangTargetReuse) {
    ShapesNow shapes = ClusterShapesNow();
    const auto snapshots = WithoutReserved(shapes.snapshots, id);
    shapes.shapes.nodes.clear();
    for (const auto& snapshot : snapshots) shapes.shapes.nodes.push_back(snapshot.get());
    std::optional<decision::GangCapacityTarget> target =
        decision::GangCapacityTargetFor(pod, demand, *gang.min_count, shapes.shapes, domain_labels_);
    if (!target) return std::string();
    const bool first = asked == gang_asks_.end();
    asked = gang_asks_.try_emplace(id).first;
    asked->second.gang = {id, pod.metadata.namespace_name};
    asked->second.target = *std::move(target);
    asked->second.measured = now;
    if (first) {
      const decision::GangCapacityTarget& chosen = asked->second.target;
      server::LogEvent(log_, "gang",
                       {{"gang", id}, {"pod", absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name)},
                        {"event", "capacity_requested"}, {"node_group", chosen.node_group},
                        {"domain", chosen.ask.domain.id.value}, {"members", chosen.ask.new_members},
                        {"nodes", chosen.ask.new_nodes}});
    }
  }
  const PodRef member{pod.metadata.uid, pod.metadata.namespace_name, pod.metadata.name};
  asked->second.members.insert_or_assign(member.uid, member);
  const decision::GangCapacityTarget& target = asked->second.target;
  std::vector<PodRef> claim_members;
  if (claim_pods) {
    // One pod set per member, naming that member's claims (cluster-autoscaler makes none for the pods it
    // imagines): the request waits for as many members as it grows nodes for.
    const int needed = target.ask.new_members;
    if (needed > kMostClaimMembers) {
      return absl::StrCat("; a gang of claim pods is asked for with a ProvisioningRequest pod set per member, and ",
                          needed, " new members is more than one request holds (", kMostClaimMembers, ")");
    }
    if (static_cast<int>(asked->second.members.size()) < needed) {
      return absl::StrCat("; will ask cluster-autoscaler for ", target.ask.new_nodes, " new nodes (", needed,
                          " members) in ", target.ask.domain.id.value, " of node group ", target.node_group, " once ",
                          needed, " members have been refused (", asked->second.members.size(), " so far)");
    }
    for (const auto& [uid, ref] : asked->second.members) {
      if (static_cast<int>(claim_members.size()) == needed) break;
      claim_members.push_back(ref);
    }
  }
  capacity_->RequestForGang({asked->second.gang, member, target.ask.new_members, target.term, std::move(claim_members)});
  return absl::StrCat("; asked cluster-autoscaler for ", target.ask.new_nodes, " new nodes (", target.ask.new_members,
                      " members) in ", target.ask.domain.id.value, " of node group ", target.node_group);
}

void Extender::WithdrawGangCapacity(const std::string& gang) {
  const auto asked = gang_asks_.find(gang);
  if (asked == gang_asks_.end()) return;
  capacity_->WithdrawGang(asked->second.gang);
  server::LogEvent(log_, "gang", {{"gang", gang}, {"event", "capacity_withdrawn"}});
  gang_asks_.erase(asked);
}

std::string Extender::GangBindGate(const kube::Pod& pod, const kube::ComputeDomain* domain,
                                   const codec::ExtenderBindingArgs& args, bool claim_pod,
                                   std::optional<topology::GpuSet>& reserved) {
  absl::StatusOr<std::optional<decision::Gang>> gang = CountedGangOf(pod, domain);
  if (!gang.ok() || !*gang || !(*gang)->min_count) return std::string();
  const std::string id = decision::GangIdOf(**gang);
  std::lock_guard<std::mutex> lock(gangs_mu_);
  ExpireGangs();
  const decision::GangReservation* reservation = gangs_.Find(id);
  const std::optional<decision::GangSlot> slot = gangs_.SlotOf(args.pod_uid);
  if (!slot) {
    // The filter places a claim pod's gang only when it can judge its claims on every node at once
    // (GangPlacesClaims); one it did not place binds as a single pod.
    if (claim_pod || gangs_.Landed(id) || (reservation != nullptr && reservation->complete())) return std::string();
    return absl::StrCat("topofit: gang ", id, ": the pod has no reserved place (none was made, or it expired); "
                        "its next filter reserves one");
  }
  if (!reservation->complete()) {
    if (recorder_ != nullptr) {
      RecordCycle({history::GangWaitingRecord(
          clock_.Now(), {decision::LedgerPodUid(pod), absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name)},
          *reservation, slot->node)});
    }
    return absl::StrCat("topofit: gang ", id, ": ", reservation->joined(), " of ", reservation->slots.size(),
                        " members have their place; none binds before all do (kube-scheduler retries the pod)");
  }
  if (slot->node != args.node) {
    return absl::StrCat("topofit: gang ", id, ": the pod's place is on node ", slot->node, ", not ", args.node);
  }
  // kube-scheduler's DRA plugin allocated a claim pod's devices before this bind, from what was free: they
  // are its own, whichever GPUs of the node they are.
  if (claim_pod) {
    reserved = slot->gpus;
    return std::string();
  }
  // Another pod took the place's GPUs since the reservation (a bind racing the filter that made it): the
  // gang is placed again from scratch rather than bound in part.
  const std::shared_ptr<const decision::NodeGpuSnapshot> node = state_.Snapshot(args.node);
  const std::optional<std::pair<std::string, topology::GpuSet>> held = state_.AssignmentOf(args.pod_uid);
  const bool repeat = held && held->first == args.node && held->second == slot->gpus;
  if (node == nullptr || (!repeat && !slot->gpus.without(node->free()).empty())) {
    gangs_.Cancel(id);
    metrics_.gang_reservations.Inc({"cancelled"});
    return absl::StrCat("topofit: gang ", id, ": the GPUs reserved on node ", args.node,
                        " were taken; the gang is placed again");
  }
  reserved = slot->gpus;
  return std::string();
}

}  // namespace topofit::scheduler
