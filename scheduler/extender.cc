#include "scheduler/extender.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "decision/capacity_hold.h"
#include "decision/pod_filter.h"
#include "decision/capacity_shapes.h"
#include "decision/filter.h"
#include "decision/filter_memo.h"
#include "decision/judged_reasons.h"
#include "decision/preempt.h"
#include "decision/preference.h"
#include "decision/pod_uid.h"
#include "decision/prioritize.h"
#include "decision/scale_down_guard.h"
#include "history/from_decisions.h"
#include "kube/topofit_annotations.h"
#include "server/logging.h"

namespace topofit::scheduler {

using decision::CapacityHolds;
using decision::FilterMemo;
using decision::GpuDemand;
using decision::NodeGpuSnapshot;
using decision::NodeVerdict;
using decision::Refusal;

namespace {

// Binding races another bind for the same GPUs at most this often before giving up.
constexpr int kBindAttempts = 3;

}  // namespace

Extender::Extender(GpuState& state, ledger::Ledger& ledger, KubeClient& kube, ExtenderMetrics& metrics,
                   spdlog::logger& log, const server::Clock& clock, CapacityRequests* capacity,
                   const Leadership& leadership, std::string scheduler_name)
    : state_(state),
      ledger_(ledger),
      kube_(kube),
      metrics_(metrics),
      log_(log),
      clock_(clock),
      capacity_(capacity),
      leadership_(leadership),
      scheduler_name_(std::move(scheduler_name)) {}

namespace {

bool ConsumesCapacityRequest(const kube::Pod& pod) {
  return pod.metadata.annotations.count(kube::kConsumeProvisioningRequestAnnotation) > 0;
}

}  // namespace

absl::StatusOr<codec::ExtenderArgs> Extender::ParseArgs(const std::string& body) const {
  return codec::ParseExtenderArgs(body, [this](absl::string_view name, absl::string_view resource_version) {
    return state_.IsCurrent(name, resource_version);
  });
}

absl::StatusOr<Extender::RequestNodes> Extender::NodesOf(const codec::ExtenderArgs& args) {
  RequestNodes out;
  if (args.nodes) {
    for (size_t i = 0; i < args.nodes->size(); ++i) {
      const codec::NodeArg& arg = (*args.nodes)[i];
      const kube::Node* node = arg.node ? &*arg.node : nullptr;
      std::optional<kube::Node> decoded;
      if (node == nullptr && !state_.IsCurrent(arg.name, arg.resource_version)) {
        // Another request changed the node since this one was parsed: learn it from this request after all.
        absl::StatusOr<kube::Node> late = codec::DecodeNodeArg(arg, i);
        if (!late.ok()) return late.status();
        node = &decoded.emplace(*std::move(late));
      }
      if (node != nullptr) {
        if (absl::Status learned = state_.UpsertNode(*node); !learned.ok()) {
          out.unresolved[arg.name] = absl::StrCat("topofit: ", learned.message());
          continue;
        }
      }
      std::shared_ptr<const NodeGpuSnapshot> snapshot = state_.Snapshot(arg.name);
      if (snapshot == nullptr) {  // removed meanwhile
        out.unresolved[arg.name] = "topofit: node removed while the request was served";
        continue;
      }
      out.snapshots.push_back(std::move(snapshot));
      out.names.push_back(arg.name);
      out.raw.push_back(arg.raw);
    }
  } else if (args.node_names) {
    std::vector<std::shared_ptr<const NodeGpuSnapshot>> snapshots = state_.SnapshotsOf(*args.node_names);
    out.snapshots.reserve(snapshots.size());
    out.names.reserve(snapshots.size());
    for (size_t i = 0; i < snapshots.size(); ++i) {
      const std::string& name = (*args.node_names)[i];
      std::shared_ptr<const NodeGpuSnapshot>& snapshot = snapshots[i];
      if (snapshot == nullptr) {
        // Retried by kube-scheduler: the node watch brings the node within moments.
        out.unknown[name] = "topofit: unknown node (not yet seen by topofit's node watch)";
      } else {
        out.snapshots.push_back(std::move(snapshot));
        out.names.push_back(name);
      }
    }
  }
  return out;
}

absl::StatusOr<codec::ExtenderFilterResult> Extender::Filter(const codec::ExtenderArgs& args) {
  codec::ExtenderFilterResult result;
  absl::StatusOr<GpuDemand> demand = decision::DemandOf(args.pod);
  const std::string pod_key = absl::StrCat(args.pod.metadata.namespace_name, "/", args.pod.metadata.name);
  if (!demand.ok()) return InvalidPod(args.pod, pod_key, demand.status().message());
  // A pod whose GPUs come from claims goes through the same cycle, each node judged by what its claims ask
  // (extender_claims.cc); its ProvisioningRequest names its own claims (kubeclient/provisioning.h), and its
  // gang is placed whole where GangPlacesClaims says it can be.
  absl::StatusOr<std::optional<decision::ClaimGpuDemand>> claims = ClaimDemandOf(args.pod, *demand);
  if (!claims.ok()) return InvalidPod(args.pod, pod_key, claims.status().message());
  const bool claim_pod = claims->has_value();
  const GpuDemand counted = claim_pod ? decision::CountedDemand(*demand, **claims) : *demand;
  absl::StatusOr<std::optional<kube::ComputeDomain>> compute_domain = ComputeDomainOf(args.pod);
  if (!compute_domain.ok()) return InvalidPod(args.pod, pod_key, compute_domain.status().message());
  std::optional<decision::Gang> gang;  // of known size: placed all or nothing
  if (counted.wants_gpus()) {
    absl::StatusOr<std::optional<decision::Gang>> member_of =
        CountedGangOf(args.pod, compute_domain->has_value() ? &**compute_domain : nullptr);
    if (!member_of.ok()) return InvalidPod(args.pod, pod_key, member_of.status().message());
    if (*member_of && (*member_of)->min_count &&
        (!claim_pod || GangPlacesClaims(**claims, compute_domain->has_value() ? &**compute_domain : nullptr))) {
      gang = **member_of;
    }
  }
  absl::StatusOr<RequestNodes> nodes = NodesOf(args);
  if (!nodes.ok()) return nodes.status();
  if (*compute_domain) RefuseOutside(**compute_domain, *nodes);
  if (gang) {
    if (std::optional<codec::ExtenderFilterResult> placed =
            FilterGangMember(args, counted, *gang, *nodes, compute_domain->has_value() ? &**compute_domain : nullptr,
                             claim_pod ? &**claims : nullptr, *demand)) {
      // The gang's words cover every node; a node its domain may not use says why itself.
      for (const auto& [node, reason] : nodes->outside_domain) placed->failed_and_unresolvable_nodes.insert_or_assign(node, reason);
      return *std::move(placed);
    }
  }
  if (counted.wants_gpus()) {
    std::lock_guard<std::mutex> lock(gangs_mu_);
    ExpireGangs();
    nodes->snapshots = WithoutReserved(std::move(nodes->snapshots), {});
  }

  if (args.nodes) result.nodes.emplace(); else result.node_names.emplace();
  result.failed_and_unresolvable_nodes.insert(nodes->unresolved.begin(), nodes->unresolved.end());
  result.failed_and_unresolvable_nodes.insert(nodes->outside_domain.begin(), nodes->outside_domain.end());
  result.failed_nodes.insert(nodes->unknown.begin(), nodes->unknown.end());
  const CapacityHolds holds = HoldsNow(counted);
  const std::optional<decision::CapacityAsk> ask = claim_pod ? std::nullopt : AskNow(args.pod, *demand);
  FilterMemo memo;
  const decision::JudgedPod judged = decision::JudgedPod::Of(args.pod);
  std::vector<const NodeGpuSnapshot*> offered;
  offered.reserve(nodes->snapshots.size());
  for (const auto& snapshot : nodes->snapshots) offered.push_back(snapshot.get());
  std::vector<std::string> claim_reasons;  // a claim pod's words per node, from its claims' verdicts
  const decision::PodFilterOutcome outcome =
      claim_pod ? FilterClaims(**claims, *demand, judged, offered, holds, claim_reasons)
                : decision::FilterPod(*demand, judged, offered, holds, memo, ask ? &*ask : nullptr);
  const bool recording = recorder_ != nullptr && counted.wants_gpus();
  history::FilterCandidates candidates(recording ? offered.size() + nodes->unresolved.size() : 0);
  decision::JudgedReasons reasons(judged, holds, ask ? &*ask : nullptr);
  // Counted here and added to the metric once per refusal after the loop: per node, the family's lock and
  // a label vector cost more than the verdict for a request refused on thousands of nodes.
  std::map<decision::Refusal, int> refused;
  for (size_t i = 0; i < offered.size(); ++i) {
    if (i + decision::kPrefetchAhead < offered.size()) decision::PrefetchForReasons(*offered[i + decision::kPrefetchAhead]);
    const NodeGpuSnapshot& node = *offered[i];
    const NodeVerdict& verdict = outcome.verdicts[i];
    const absl::string_view name = nodes->names[i];
    if (recording) candidates.Add(node, verdict);
    if (verdict.fits) {
      if (result.nodes) result.nodes->push_back(nodes->raw[i]); else result.node_names->emplace_back(name);
      continue;
    }
    std::string reason = claim_pod ? std::move(claim_reasons[i]) : reasons.For(verdict, node);
    ++refused[verdict.refusal];
    // Checked here too: building the fields costs more than the check, for every refused node.
    if (log_.should_log(spdlog::level::debug)) {
      server::LogEvent(log_, "filter_node",
                       {{"pod", pod_key}, {"node", name},
                        {"verdict", verdict.unresolvable ? "unresolvable" : "fail"}, {"reason", reason}},
                       spdlog::level::debug);
    }
    (verdict.unresolvable ? result.failed_and_unresolvable_nodes : result.failed_nodes)
        .insert_or_assign(std::string(name), std::move(reason));
  }
  for (const auto& [refusal, count] : refused) {
    metrics_.nodes_refused.Inc({std::string(decision::RefusalCode(refusal))}, static_cast<double>(count));
  }
  metrics_.nodes_refused.Inc({"unknown-topology"}, static_cast<double>(nodes->unresolved.size()));
  metrics_.nodes_refused.Inc({"unknown-node"}, static_cast<double>(nodes->unknown.size()));
  metrics_.nodes_refused.Inc({"compute-domain"}, static_cast<double>(nodes->outside_domain.size()));

  std::optional<decision::UnplacedPod> unplaced;
  if (counted.wants_gpus() && !outcome.any_fits()) {
    std::vector<std::string> refused;
    for (const auto* failed : {&result.failed_nodes, &result.failed_and_unresolvable_nodes}) {
      for (const auto& [node, reason] : *failed) refused.push_back(node);
    }
    unplaced = decision::UnplacedAfter(args.pod, counted, outcome, std::move(refused));
  }
  const bool capacity_requested = unplaced && unplaced->needs_capacity_request &&
                                  RequestCapacity(args.pod, unplaced->preference);
  if (recording) {
    for (const auto& [name, reason] : nodes->unresolved) candidates.AddUnknownTopology(name);
    RecordCycle(history::FilterCycleRecords(clock_.Now(), {decision::LedgerPodUid(args.pod), pod_key},
                                            counted.request.gpus, std::move(candidates).Take(),
                                            unplaced ? &unplaced->preference : nullptr, capacity_requested));
  }
  if (unplaced) KeepPreference(std::move(unplaced->preference));
  const size_t passed = result.nodes ? result.nodes->size() : result.node_names->size();
  server::LogEvent(log_, "filter",
                   {{"pod", pod_key},
                    {"gpus", claim_pod && (*claims)->all ? std::string("all") : absl::StrCat(counted.request.gpus)},
                    {"passed", passed},
                    {"failed", result.failed_nodes.size()},
                    {"unresolvable", result.failed_and_unresolvable_nodes.size()}});
  return result;
}

codec::ExtenderFilterResult Extender::InvalidPod(const kube::Pod& pod, const std::string& pod_key,
                                                absl::string_view message) {
  codec::ExtenderFilterResult result;
  result.error = absl::StrCat("topofit: pod ", pod_key, ": ", message);
  metrics_.invalid_pods.Inc();
  server::LogEvent(log_, "filter", {{"pod", pod_key}, {"verdict", "error"}, {"reason", result.error}},
                   spdlog::level::warn);
  if (recorder_ != nullptr) {
    history::Record record = history::FilterRecord(clock_.Now(), {decision::LedgerPodUid(pod), pod_key}, 0, {});
    record.reason = history::Reason::kInvalidPod;
    RecordCycle({std::move(record)});
  }
  return result;
}

CapacityHolds Extender::HoldsNow(const GpuDemand& demand) const {
  if (!demand.wants_gpus()) return CapacityHolds();
  // Shared, not copied: the ledger regroups its intents only when they change.
  const std::shared_ptr<const std::vector<decision::Intent>> intents = ledger_.IntentsView();
  if (intents->empty()) return CapacityHolds();
  const std::vector<std::shared_ptr<const NodeGpuSnapshot>> snapshots = state_.Snapshots();
  std::vector<const NodeGpuSnapshot*> nodes;
  nodes.reserve(snapshots.size());
  for (const auto& snapshot : snapshots) nodes.push_back(snapshot.get());
  std::vector<std::string> held_for;  // the preferences read are those of the intents' pods: their names
  for (const decision::Intent& intent : *intents) {
    held_for.insert(held_for.end(), intent.pod_uids.begin(), intent.pod_uids.end());
  }
  return CapacityHolds(*intents, ledger_.PreferencesOf(held_for), nodes, {clock_.Now(), capacity_wait_});
}

Extender::ShapesNow Extender::ClusterShapesNow() const {
  ShapesNow now;
  now.snapshots = state_.Snapshots();
  now.shapes.nodes.reserve(now.snapshots.size());
  for (const auto& snapshot : now.snapshots) now.shapes.nodes.push_back(snapshot.get());
  // Only trusted templates may make a pod wait for a group no node shows: an untrusted one may be a
  // forger's, naming a group that does not exist (ledger::NodeGroupTemplate).
  now.shapes.group_templates = ledger::TemplatesOf(ledger_.NodeGroups(), ledger::TemplateTrust::kTrustedOnly);
  now.shapes.topologies = &group_topologies_;
  return now;
}

std::optional<decision::CapacityAsk> Extender::AskNow(const kube::Pod& pod, const GpuDemand& demand) const {
  if (!decision::MayAskForCapacity(demand)) return std::nullopt;
  const ShapesNow now = ClusterShapesNow();
  return decision::CapacityAskFor(pod, demand, now.shapes, clock_.Now(), ledger_.PreferencesOf({pod.metadata.uid}),
                                  capacity_wait_);
}

void Extender::RecordCycle(std::vector<history::Record> records) {
  if (!refusals_.Keep(records.front())) return;
  for (history::Record& record : records) recorder_->Record(std::move(record));
}

bool Extender::RequestCapacity(const kube::Pod& pod, const decision::Preference& preference) {
  // Only the leader writes to the cluster; a follower's filter (during a failover) asks for nothing. The
  // request names the shapes that give what the preference asks, or CA would book another node this
  // filter refuses.
  if (capacity_ == nullptr || !leadership_.IsLeader()) return false;
  capacity_->RequestFor(PodRef{pod.metadata.uid, pod.metadata.namespace_name, pod.metadata.name},
                        {preference.refused_nodes, decision::ShapeTermsFor(preference, ClusterShapesNow().shapes)});
  AskedCapacity(pod.metadata.uid);
  return true;
}

void Extender::KeepPreference(decision::Preference preference) {
  server::LogEvent(log_, "preference", {{"pod", preference.pod_key}, {"gpus", preference.gpus},
                                        {"min_link", std::string(topology::LinkClassName(preference.min_link))}});
  ledger_.RecordPreference(std::move(preference));
  metrics_.pending_preferences.Set(static_cast<double>(ledger_.PreferenceCount()));
}

absl::StatusOr<std::vector<codec::HostPriority>> Extender::Prioritize(const codec::ExtenderArgs& args) {
  absl::StatusOr<RequestNodes> nodes = NodesOf(args);
  if (!nodes.ok()) return nodes.status();
  absl::StatusOr<GpuDemand> demand = decision::DemandOf(args.pod);
  FilterMemo memo;
  std::vector<codec::HostPriority> priorities;
  // A pod whose GPUs come from claims is scored by what they ask (extender_claims.cc).
  absl::StatusOr<std::optional<decision::ClaimGpuDemand>> claims = std::nullopt;
  if (demand.ok()) claims = ClaimDemandOf(args.pod, *demand);
  // The buffers' sets are kept whole from device-plugin pods only: a claim pod's devices are the DRA
  // allocator's choice, not the set topofit's filter chose.
  static const decision::WarmCapacity kNoWarm;
  const std::shared_ptr<const decision::WarmCapacity> warm = warm_ != nullptr ? warm_->Warm() : nullptr;
  decision::WarmMemo warm_memo;
  for (size_t i = 0; i < nodes->snapshots.size(); ++i) {
    const std::shared_ptr<const NodeGpuSnapshot>& snapshot = nodes->snapshots[i];
    if (i + decision::kPrefetchAhead < nodes->snapshots.size()) {
      decision::PrefetchForJudging(*nodes->snapshots[i + decision::kPrefetchAhead]);
    }
    // A pod topofit cannot read was refused by filter; scoring stays neutral (prioritize errors are ignored).
    int64_t score = decision::kMinExtenderScore;
    if (demand.ok() && claims.ok() && *claims) {
      const decision::ClaimNodeVerdict judged = JudgeClaims(**claims, *demand, *snapshot);
      score = decision::PrioritizeScore(judged.demand, judged.verdict, *snapshot->topology);
    } else if (demand.ok() && claims.ok()) {
      score = decision::WarmKeptScore(warm != nullptr ? *warm : kNoWarm, *demand, memo.FilterAndScore(*demand, *snapshot),
                                      *snapshot, &warm_memo);
    }
    priorities.push_back({std::string(nodes->names[i]), score});
  }
  for (const auto* others : {&nodes->unresolved, &nodes->unknown}) {
    for (const auto& [name, reason] : *others) priorities.push_back({name, decision::kMinExtenderScore});
  }
  return priorities;
}

void Extender::AskedCapacity(const std::string& pod_uid) {
  std::lock_guard<std::mutex> lock(asked_mu_);
  if (asked_capacity_.insert(pod_uid).second) asked_order_.push_back(pod_uid);
  while (asked_order_.size() > kAskedCapacityRemembered) {
    asked_capacity_.erase(asked_order_.front());
    asked_order_.pop_front();
  }
}

bool Extender::HasAskedCapacity(const std::string& pod_uid) {
  std::lock_guard<std::mutex> lock(asked_mu_);
  return asked_capacity_.count(pod_uid) > 0;
}

absl::StatusOr<std::string> Extender::Bind(const codec::ExtenderBindingArgs& args) {
  if (!leadership_.IsLeader()) {
    metrics_.binds.Inc({"not_leader"});
    return std::string("topofit: this replica is not the leader; it binds nothing (kube-scheduler retries the pod)");
  }
  const PodRef pod{args.pod_uid, args.pod_namespace, args.pod_name};
  // The pod as the API server holds it decides what may be bound, never the request (whoever reaches the
  // extender can send one), nor what an earlier filter call was told about the pod.
  const bool node_known = state_.Snapshot(args.node) != nullptr;
  absl::StatusOr<kube::Pod> stored = node_known ? PodToBind(args) : absl::NotFoundError("not read: unknown node");
  if (!stored.ok() && !absl::IsNotFound(stored.status())) {
    const std::string error = absl::StrCat("topofit: reading pod ", pod.key(), ": ", stored.status().message());
    metrics_.binds.Inc({"error"});
    server::LogEvent(log_, "bind", {{"pod", pod.key()}, {"node", args.node}, {"result", error}}, spdlog::level::warn);
    return error;
  }
  const BindAuthorization authorized =
      AuthorizeBind(args, stored.ok() ? &*stored : nullptr, node_known, scheduler_name_, dra_ != nullptr);
  if (authorized.refusal) {
    metrics_.binds.Inc({"refused"});
    metrics_.bind_refusals.Inc({std::string(BindRefusalCode(*authorized.refusal))});
    server::LogEvent(log_, "bind",
                     {{"pod", pod.key()}, {"node", args.node}, {"result", "refused"},
                      {"refusal", std::string(BindRefusalCode(*authorized.refusal))}, {"reason", authorized.reason}},
                     spdlog::level::warn);
    return authorized.reason;
  }
  // A pod that says whether CA may evict it is left as its owner wrote it.
  const bool says_safe_to_evict = stored->metadata.annotations.contains(kube::kSafeToEvictAnnotation);
  // The ComputeDomain the pod joins, read once for the gang, the domain's own gate and its memory of binds.
  absl::StatusOr<std::optional<kube::ComputeDomain>> joined = ComputeDomainOf(*stored);
  const kube::ComputeDomain* compute_domain = joined.ok() && *joined ? &**joined : nullptr;
  std::optional<topology::GpuSet> reserved;  // a gang member's place
  if (std::string waiting = GangBindGate(*stored, compute_domain, args, !authorized.demand.wants_gpus(), reserved);
      !waiting.empty()) {
    metrics_.binds.Inc({"waiting_for_gang"});
    server::LogEvent(log_, "bind", {{"pod", pod.key()}, {"node", args.node}, {"result", waiting}});
    return waiting;
  }
  // Two filters of pods of different ComputeDomains may both have passed the node.
  if (compute_domain != nullptr) {
    if (std::string held = ComputeDomainBindGate(*compute_domain, args.node); !held.empty()) {
      metrics_.binds.Inc({"refused"});
      server::LogEvent(log_, "bind", {{"pod", pod.key()}, {"node", args.node}, {"result", held}}, spdlog::level::warn);
      return held;
    }
  }
  // A gang member's request is its gang's, withdrawn when the gang lands.
  const bool asked_capacity = !reserved && (ConsumesCapacityRequest(*stored) || HasAskedCapacity(args.pod_uid));
  std::string gpu_ids;
  std::shared_ptr<std::mutex> lock = PodBindLock(args.pod_uid);
  std::string error;
  {
    std::lock_guard<std::mutex> one_bind(*lock);
    error = authorized.demand.wants_gpus()
                ? BindOnce(args, pod, decision::JudgedPod::Of(*stored), authorized.demand, asked_capacity,
                           says_safe_to_evict, reserved, gpu_ids)
                : BindClaimPod(args, pod, *stored, asked_capacity, says_safe_to_evict);
  }
  ReleasePodBindLock(args.pod_uid, std::move(lock));
  if (error.empty() && compute_domain != nullptr) RememberDomainBind(*compute_domain, args.node);
  if (reserved && error.empty()) {
    std::lock_guard<std::mutex> gangs(gangs_mu_);
    if (gangs_.Bound(args.pod_uid)) {
      metrics_.gang_reservations.Inc({"landed"});
      if (absl::StatusOr<std::optional<decision::Gang>> gang = CountedGangOf(*stored, compute_domain); gang.ok() && *gang) {
        WithdrawGangCapacity(decision::GangIdOf(**gang));
      }
    }
  }
  metrics_.binds.Inc({error.empty() ? "ok" : "error"});
  if (recorder_ != nullptr) {
    recorder_->Record(history::BindRecord(clock_.Now(), {pod.uid, pod.key()}, args.node, 0, gpu_ids, error.empty()));
  }
  server::LogEvent(log_, "bind",
                   {{"pod", pod.key()}, {"node", args.node}, {"gpus", gpu_ids}, {"result", error.empty() ? "ok" : error}},
                   error.empty() ? spdlog::level::info : spdlog::level::warn);
  return error;
}

absl::StatusOr<kube::Pod> Extender::PodToBind(const codec::ExtenderBindingArgs& args) {
  if (pending_pods_ != nullptr) {
    std::shared_ptr<const kube::Pod> watched = pending_pods_->Find(args.pod_namespace, args.pod_name);
    // Another uid: the watch may lag a pod deleted and recreated under the name; the API server decides.
    if (watched != nullptr && watched->metadata.uid == args.pod_uid) {
      metrics_.bind_pod_reads.Inc({"watch"});
      return *watched;
    }
  }
  metrics_.bind_pod_reads.Inc({"api"});
  return kube_.GetPod(args.pod_namespace, args.pod_name);
}

std::shared_ptr<std::mutex> Extender::PodBindLock(const std::string& pod_uid) {
  std::lock_guard<std::mutex> guard(binding_mu_);
  std::shared_ptr<std::mutex>& lock = binding_[pod_uid];
  if (lock == nullptr) lock = std::make_shared<std::mutex>();
  return lock;
}

void Extender::ReleasePodBindLock(const std::string& pod_uid, std::shared_ptr<std::mutex> lock) {
  std::lock_guard<std::mutex> guard(binding_mu_);
  lock.reset();
  auto it = binding_.find(pod_uid);
  if (it != binding_.end() && it->second.use_count() == 1) binding_.erase(it);  // nobody else waits
}

std::string Extender::BindOnce(const codec::ExtenderBindingArgs& args, const PodRef& pod,
                               const decision::JudgedPod& judged, const GpuDemand& demand,
                               bool asked_capacity, bool says_safe_to_evict,
                               const std::optional<topology::GpuSet>& reserved, std::string& gpu_ids) {
  bool claimed = false;  // by this call: only then may a failure release GPUs
  bool repeat = false;   // an earlier bind of the pod to this node claimed them
  topology::GpuSet gpus;
  topology::SetQuality quality;  // of `gpus`, when this call chose them
  bool on_buffer = false;        // they were GPUs of the buffered sets, when this call chose them
  if (std::optional<std::pair<std::string, topology::GpuSet>> held = state_.AssignmentOf(args.pod_uid)) {
    if (held->first != args.node) {
      return absl::StrCat("topofit: pod ", pod.key(), " holds GPUs ", held->second.ToString(), " on node ",
                          held->first, ", not on ", args.node);
    }
    gpus = held->second;
    repeat = true;
  } else if (reserved) {
    if (absl::Status assumed = state_.Assume(pod, args.node, *reserved); !assumed.ok()) {
      return absl::StrCat("topofit: ", assumed.message());
    }
    gpus = *reserved;
    claimed = true;
  } else {
    // Choose on the current state and claim under the state's lock; a concurrent bind that claimed first
    // makes Assume fail, and the choice is made again on the new state.
    absl::Status assumed = absl::UnknownError("not attempted");
    for (int attempt = 0; attempt < kBindAttempts && !assumed.ok(); ++attempt) {
      std::shared_ptr<const NodeGpuSnapshot> node = state_.Snapshot(args.node);
      if (node == nullptr) return absl::StrCat("topofit: node ", args.node, " removed while binding");
      {
        std::lock_guard<std::mutex> gangs(gangs_mu_);
        node = WithoutReserved({node}, {}).front();  // never a gang's reserved GPUs
      }
      const CapacityHolds holds = HoldsNow(demand);
      FilterMemo memo;
      const NodeVerdict verdict = decision::JudgeNode(demand, judged, *node, holds, memo);
      if (!verdict.fits) return decision::JudgedReasonText(verdict, judged, *node, holds);
      gpus = verdict.chosen->gpus;
      quality = verdict.chosen->quality;
      on_buffer = warm_ != nullptr && warm_->Warm()->LostGpus(*node, gpus) > 0;
      assumed = state_.Assume(pod, args.node, gpus);
      if (!assumed.ok() && assumed.code() != absl::StatusCode::kFailedPrecondition) break;
    }
    if (!assumed.ok()) return absl::StrCat("topofit: ", assumed.message());
    claimed = true;
  }
  // The bind time orders the pods the node agent gives their chosen GPUs (the kubelet admits them in
  // bind order); microseconds, since one extender binds many pods a second. A repeat leaves both as the
  // first bind wrote them.
  kube::StringMap annotations = {
      {std::string(kube::kBoundAtAnnotation), absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", clock_.Now(), absl::UTCTimeZone())}};
  // Where DRA serves the node's GPUs, the claim kube-scheduler made for the pod names them: the GPUs held
  // here only count them until the claim is seen (kubeclient::GpuStateSync), and no ids are written.
  if (const std::shared_ptr<const NodeGpuSnapshot> node = state_.Snapshot(args.node);
      node == nullptr || !node->gpus_through_dra) {
    gpu_ids = gpus.ToString();
    annotations.emplace(kube::kGpuIdsAnnotation, gpu_ids);
  }
  const bool guarded =
      drain_guard_ != nullptr && !repeat && !says_safe_to_evict && decision::KeepFromScaleDownDrain(demand, quality);
  const bool kept = guarded && drain_guard_->KeepsNow(demand, args.node);
  if (kept) annotations.emplace(kube::kSafeToEvictAnnotation, "false");
  // The annotations travel on the Binding: written with spec.nodeName in one call, or not at all.
  if (absl::Status bound = kube_.BindPod(args.pod_namespace, args.pod_name, args.pod_uid, args.node,
                                         repeat ? kube::StringMap() : annotations);
      !bound.ok()) {
    if (claimed) state_.Forget(args.pod_uid);
    if (repeat) {
      std::string outcome = RepeatedBindOutcome(args, bound);
      if (!outcome.empty()) return outcome;
    } else {
      return absl::StrCat("topofit: binding ", pod.key(), " to ", args.node, ": ", bound.message());
    }
  }
  if (guarded) drain_guard_->Track(pod, args.node, demand, kept);
  if (on_buffer) metrics_.buffered_starts.Inc();
  Landed(pod, asked_capacity);
  return std::string();
}

void Extender::Landed(const PodRef& pod, bool asked_capacity) {
  ledger_.ForgetPod(pod.uid);
  if (capacity_ != nullptr && asked_capacity) {
    capacity_->Withdraw(pod);  // it has served
    if (recorder_ != nullptr) {
      recorder_->Record(history::CapacityRecord(clock_.Now(), history::Kind::kCapacityWithdrawn, {pod.uid, pod.key()}));
    }
  }
}

std::string Extender::RepeatedBindOutcome(const codec::ExtenderBindingArgs& args, const absl::Status& bound) {
  const std::string failed = absl::StrCat("topofit: binding ", args.pod_namespace, "/", args.pod_name, " to ",
                                          args.node, ": ", bound.message());
  // 409: the pod is assigned already. Ours landed when the API server holds it on this node; otherwise
  // the watch (--live-state) or the pod's deletion will correct what the state holds for it.
  if (!absl::IsAborted(bound)) return failed;
  absl::StatusOr<kube::Pod> current = kube_.GetPod(args.pod_namespace, args.pod_name);
  if (current.ok() && current->metadata.uid == args.pod_uid && current->spec.node_name == args.node) return "";
  return failed;
}

absl::StatusOr<std::map<std::string, codec::MetaVictims>> Extender::Preempt(
    const codec::ExtenderPreemptionArgs& args) {
  absl::StatusOr<GpuDemand> demand = decision::DemandOf(args.pod);
  if (!demand.ok()) return absl::InvalidArgumentError(demand.status().message());
  std::map<std::string, codec::MetaVictims> kept;
  for (const auto& [node, victims] : args.victims) {
    std::shared_ptr<const NodeGpuSnapshot> snapshot = state_.Snapshot(node);
    if (snapshot == nullptr) {  // declined, as a node where preemption cannot help: it may be retried later
      server::LogEvent(log_, "preempt", {{"pod", absl::StrCat(args.pod.metadata.namespace_name, "/", args.pod.metadata.name)},
                                         {"node", node},
                                         {"declined", true},
                                         {"reason", "unknown node"}});
      continue;
    }
    std::optional<std::vector<std::string>> trimmed = decision::TrimVictims(*demand, *snapshot, victims.pod_uids);
    server::LogEvent(log_, "preempt",
                     {{"pod", absl::StrCat(args.pod.metadata.namespace_name, "/", args.pod.metadata.name)},
                      {"node", node},
                      {"proposed", victims.pod_uids.size()},
                      {"declined", !trimmed.has_value()},
                      {"kept", trimmed ? trimmed->size() : 0}});
    if (trimmed) kept[node] = codec::MetaVictims{*std::move(trimmed), victims.num_pdb_violations};
  }
  return kept;
}

bool Extender::PodDeleted(const std::string& pod_uid) {
  const bool released = state_.Forget(pod_uid);
  ledger_.ForgetPod(pod_uid);
  metrics_.pending_preferences.Set(static_cast<double>(ledger_.PreferenceCount()));
  {
    std::lock_guard<std::mutex> lock(asked_mu_);
    asked_capacity_.erase(pod_uid);
  }
  {
    std::lock_guard<std::mutex> lock(gangs_mu_);
    gangs_.Left(pod_uid);
    for (auto it = gang_asks_.begin(); it != gang_asks_.end(); ++it) {
      if (it->second.members.contains(pod_uid)) {
        WithdrawGangCapacity(it->first);  // erases `it`
        break;
      }
    }
  }
  server::LogEvent(log_, "pod_deleted", {{"uid", pod_uid}, {"released", released}});
  return released;
}

absl::Status Extender::PodReported(const PodRef& pod, const std::string& node, int gpus,
                                   std::optional<topology::GpuSet> ids) {
  absl::Status observed = state_.ObservePod(pod, node, gpus, ids);
  server::LogEvent(log_, "pod_reported", {{"pod", pod.key()}, {"node", node}, {"gpus", gpus},
                                          {"result", observed.ok() ? "ok" : std::string(observed.message())}});
  return observed;
}

}  // namespace topofit::scheduler
