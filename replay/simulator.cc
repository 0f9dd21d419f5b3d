#include "replay/simulator.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <queue>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "replay/gang_scheduling.h"
#include "replay/headroom_controller.h"
#include "replay/kube_scheduler_model.h"
#include "codec/node_topology.h"
#include "decision/capacity_shapes.h"
#include "decision/gang.h"
#include "decision/gang_book.h"
#include "decision/pod_filter.h"
#include "decision/preference.h"
#include "decision/scale_down_guard.h"
#include "history/from_decisions.h"
#include "history/idle_records.h"
#include "history/refusal_aggregator.h"
#include "server/clock.h"

namespace topofit::sim {
namespace {

constexpr SimTime kNever = std::numeric_limits<SimTime>::max();
// The replay gives up when every pod has arrived and none has started or finished for this long while some
// still wait: CA may grow and remove nodes for them for ever (a gang no domain of the nodes it grows ever
// holds), and nothing else will change.
constexpr SimTime kStalledFor = 12 * kHour;
// kube-scheduler re-queues pods unschedulable for this long (its 30 s flush); for a pod topofit refused,
// that retry is what keeps its ledger preference fresh.
constexpr SimTime kUnschedulableFlush = 5 * kMinute;

// The ledger's clock in a replay: simulated time from the Unix epoch.
class SimClock final : public server::Clock {
 public:
  explicit SimClock(const World& world) : world_(world) {}
  absl::Time Now() const override { return world_.time(); }
  // The replay's time never steps back: its wall clock is its monotonic one.
  absl::Duration Monotonic() const override { return world_.time() - absl::UnixEpoch(); }

 private:
  const World& world_;
};

struct Event {
  enum class Kind { kPodFinish, kNodeReady };
  SimTime at;
  int64_t sequence;  // FIFO among events at the same time: deterministic
  Kind kind;
  int id;
  int epoch;
  bool operator>(const Event& other) const {
    return std::tie(at, sequence) > std::tie(other.at, other.sequence);
  }
};

class Replayer {
 public:
  Replayer(std::unique_ptr<World> world, const ReplayOptions& options)
      : world_(std::move(world)),
        options_(options),
        clock_(*world_),
        ledger_(ledger::NewInMemoryLedger(clock_)),
        scheduler_(*world_),
        autoscaler_(*world_, options.autoscaler),
        waiting_(world_->classes().size()) {
    if (world_->policy().headroom.sizing == Headroom::Sizing::kAdaptive) {
      headroom_.emplace(world_->policy().headroom.adaptive);
    }
  }

  ReplayResult Run();

 private:
  void Schedule(int pod);
  // A gang scheduler's cycle (Policy::places_gangs_whole): every pending member placed at once, or all wait.
  void ScheduleGang(int gang);
  // The gang's id as the extender writes it (decision::GangIdOf of a member).
  std::string GangId(int gang) const;
  void RetryOn(int node);
  void Place(int pod, const PlacementDecision& decision);
  void Wait(int pod);
  void RecordRefusal(int pod, const PlacementDecision& decision);
  void RunTopofitRequestController();
  void RunAutoscaler();
  // Hands the extender's score the world's buffers (decision/warm_capacity.h) when their replicas changed.
  void KeepWarm();
  void Apply(const AutoscalerActions& actions);
  // The extender's holds on new capacity from the ledger's live intents (null: none), rebuilt when the
  // ledger or the time changed since the last call.
  const decision::CapacityHolds* Holds();
  // What `pod` needs to ask for capacity giving its preferred set (decision/capacity_ask.h), as the
  // extender works it out per filter; null when it could not ask. Valid until the next call.
  const decision::CapacityAsk* AskFor(int pod);
  // The node shapes the replayed cluster has and can grow: its live nodes and the groups CA offered.
  decision::ClusterShapes ClusterShapesNow();
  // The pod as the decision history names it.
  history::PodSubject Subject(int pod) const {
    const kube::Pod object = world_->PodObject(pod);
    return {object.metadata.uid, absl::StrCat(object.metadata.namespace_name, "/", object.metadata.name)};
  }
  // Classifies the live nodes' free GPUs now, when the cluster changed since the last sample and
  // kIdleSampleInterval has passed since it; else makes sure a sample is taken once it has.
  void SampleIdle();
  void Push(Event::Kind kind, SimTime at, int id, int epoch = 0) { events_.push({at, sequence_++, kind, id, epoch}); }
  ReplayResult Result() const;

  std::unique_ptr<World> world_;
  ReplayOptions options_;
  SimClock clock_;
  std::unique_ptr<ledger::Ledger> ledger_;
  KubeSchedulerModel scheduler_;
  AutoscalerModel autoscaler_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  int64_t sequence_ = 0;
  int64_t processed_ = 0;
  // Unschedulable pods by class, in queue order (pod ids follow arrival): a class that does not fit a
  // node does not fit it for any of its pods — save a hold, which depends on the pod (RetryOn).
  std::vector<std::set<int>> waiting_;
  std::set<int> waiting_classes_;
  std::unordered_map<int, SimTime> preference_refreshed_;
  // The holds (Holds()), the time they were built at, and whether the ledger or the nodes changed since.
  std::optional<decision::CapacityHolds> holds_;
  std::optional<decision::CapacityAsk> ask_;  // AskFor's
  codec::TopologyResolver topologies_;        // of the node group templates AskFor reads from the ledger
  SimTime holds_at_ = -1;
  bool holds_stale_ = true;
  bool dirty_ = true;
  int failed_nodes_ = 0;
  int evicted_pods_ = 0;
  int evicted_multi_gpu_pods_ = 0;
  std::map<std::string, kube::Node> gpu_group_templates_;  // what the expander records: the same every call
  std::optional<HeadroomController> headroom_;  // topofit's adaptive buffers (Policy::headroom)
  std::vector<int> warm_replicas_;             // each buffer's replicas the extender's score keeps whole
  int finished_ = 0;
  SimTime last_progress_ = 0;  // the last pod start or completion
  // Idle GPUs by reason (SampleIdle): the samples, the next one due after a change (kNever: none due).
  std::vector<IdleSample> idle_samples_;
  SimTime idle_sampled_at_ = -1;
  SimTime idle_due_ = 0;
  decision::FilterMemo idle_memo_{1 << 16};
  history::IdleRecords idle_records_;  // with a recorder: a record per node whose idle GPUs changed
  // A waiting gang is tried again on every event: its repeated refusals folded as the extender folds them.
  history::RefusalAggregator gang_refusals_;
  // Totals at the last pod completion: the replay's end for the report.
  SimTime end_ = 0;
  double provisioned_at_end_ = 0, allocated_at_end_ = 0, cost_at_end_ = 0;
};

void Replayer::Wait(int pod) {
  SimPod& p = world_->pods()[pod];
  p.unschedulable = true;
  if (waiting_[p.klass].insert(pod).second) waiting_classes_.insert(p.klass);
}

void Replayer::Place(int pod, const PlacementDecision& decision) {
  SimPod& p = world_->pods()[pod];
  if (p.unschedulable) {
    waiting_[p.klass].erase(pod);
    if (waiting_[p.klass].empty()) waiting_classes_.erase(p.klass);
  }
  if (p.provisioning_request >= 0) world_->DeleteRequest(p.provisioning_request);  // topofit cleans it up
  if (world_->policy().topofit_extender) {
    ledger_->ForgetPod(world_->PodUid(pod));
    holds_stale_ = true;
    preference_refreshed_.erase(pod);
  }
  // Only a multi-GPU set can be what a pod asked for (nodes without GPUs have no topology).
  p.drain_guarded =
      world_->policy().topofit_extender && world_->policy().drain_guard && decision.gpus.size() > 1 &&
      decision::KeepFromScaleDownDrain(world_->klass(pod).demand,
                                       world_->nodes()[decision.node].gpus.topology->quality().Of(decision.gpus));
  if (world_->recorder() != nullptr) {
    world_->recorder()->Record(history::BindRecord(world_->time(), Subject(pod), world_->nodes()[decision.node].gpus.node,
                                                   decision.gpus.size(), decision.gpus.ToString(), true));
  }
  last_progress_ = world_->now();
  for (int began : world_->StartPod(pod, decision.node, decision.gpus)) {
    Push(Event::Kind::kPodFinish, world_->pods()[began].finish, began, world_->pods()[began].epoch);
  }
  dirty_ = true;
}

void Replayer::RecordRefusal(int pod, const PlacementDecision& decision) {
  SimPod& p = world_->pods()[pod];
  p.refused_for_topology = true;
  p.preferred_set = decision.filter.preferred_set;
  std::vector<std::string> refused;
  for (int node : decision.refused_nodes) refused.push_back(world_->nodes()[node].gpus.node);
  // Engaged: a GPU pod that every node offered to the extender refused (refused_for_topology).
  decision::UnplacedPod unplaced =
      *decision::UnplacedAfter(world_->PodObject(pod), world_->klass(pod).demand, decision.filter, std::move(refused));
  const bool capacity_requested =
      unplaced.needs_capacity_request && p.provisioning_request < 0 && world_->policy().provisioning_requests;
  if (capacity_requested) {
    // topofit asks CA for capacity the scheduler will accept: the pod's template without the refused
    // nodes, confined to the shapes that give what its preference asks.
    ProvisioningRequest request;
    request.pods = {pod};
    request.excluded_nodes = decision.refused_nodes;
    request.shapes = decision::ShapeTermsFor(unplaced.preference, ClusterShapesNow());
    request.created = world_->now();
    request.next_attempt = world_->now();
    world_->CreateRequest(std::move(request));
  }
  if (world_->recorder() != nullptr) {
    // The extender's records of this cycle, from the verdicts the cycle reached.
    history::FilterCandidates candidates(decision.refused_nodes.size());
    for (size_t i = 0; i < decision.refused_nodes.size(); ++i) {
      candidates.Add(world_->nodes()[decision.refused_nodes[i]].gpus, decision.filter.verdicts[i]);
    }
    for (history::Record& record :
         history::FilterCycleRecords(world_->time(), Subject(pod), world_->klass(pod).gpus, std::move(candidates).Take(),
                                     &unplaced.preference, capacity_requested)) {
      world_->recorder()->Record(std::move(record));
    }
  }
  ledger_->RecordPreference(std::move(unplaced.preference));
  holds_stale_ = true;
  preference_refreshed_[pod] = world_->now();
}

decision::ClusterShapes Replayer::ClusterShapesNow() {
  decision::ClusterShapes shapes;
  for (int node : world_->live_nodes()) shapes.nodes.push_back(&world_->nodes()[node].gpus);
  shapes.group_templates = ledger::TemplatesOf(ledger_->NodeGroups(), ledger::TemplateTrust::kTrustedOnly);
  shapes.topologies = &topologies_;
  return shapes;
}

const decision::CapacityAsk* Replayer::AskFor(int pod) {
  ask_.reset();
  const decision::GpuDemand& demand = world_->klass(pod).demand;
  if (!world_->policy().topofit_extender || world_->policy().gpu_api == GpuApi::kDra ||
      !decision::MayAskForCapacity(demand)) {
    return nullptr;
  }
  ask_ = decision::CapacityAskFor(world_->klass(pod).prototype, demand, ClusterShapesNow(), clock_.Now(),
                                  ledger_->PreferencesOf({world_->PodUid(pod)}),
                                  world_->policy().capacity_wait);
  return ask_ ? &*ask_ : nullptr;
}

const decision::CapacityHolds* Replayer::Holds() {
  if (!world_->policy().topofit_extender || !world_->policy().capacity_holds) return nullptr;
  if (holds_stale_ || holds_at_ != world_->now()) {
    std::vector<decision::Intent> intents = ledger_->Intents();
    holds_.reset();
    if (!intents.empty()) {
      std::vector<const decision::NodeGpuSnapshot*> nodes;
      for (int node : world_->live_nodes()) nodes.push_back(&world_->nodes()[node].gpus);
      holds_.emplace(intents, ledger_->Preferences(), nodes, decision::HoldContext{clock_.Now(), world_->policy().capacity_wait});
    }
    holds_at_ = world_->now();
    holds_stale_ = false;
  }
  return holds_ ? &*holds_ : nullptr;
}

std::string Replayer::GangId(int gang) const {
  const absl::StatusOr<std::optional<decision::Gang>> of =
      decision::GangOf(world_->PodObject(world_->gangs()[gang].members.front()));
  return of.ok() && *of ? decision::GangIdOf(**of) : absl::StrCat("replay-gang-", gang);
}

void Replayer::ScheduleGang(int gang) {
  const SimGang& g = world_->gangs()[gang];
  const bool arrived = std::none_of(g.members.begin(), g.members.end(),
                                    [&](int member) { return world_->pods()[member].phase == PodPhase::kFuture; });
  absl::StatusOr<std::vector<GangMemberPlacement>> placed =
      arrived ? PlaceGangMembers(*world_, gang) : absl::FailedPreconditionError("members yet to come");
  if (!placed.ok()) {
    std::vector<int> pending;
    for (int member : g.members) {
      if (world_->pods()[member].phase != PodPhase::kPending) continue;
      Wait(member);
      pending.push_back(member);
    }
    const bool asked = std::any_of(pending.begin(), pending.end(),
                                   [&](int member) { return world_->pods()[member].provisioning_request >= 0; });
    if (!arrived || asked) return;
    // As the extender records a gang refused for room, until its request stands.
    if (world_->recorder() != nullptr && !pending.empty()) {
      history::Record refused = history::GangNoRoomRecord(world_->time(), Subject(pending.front()), GangId(gang),
                                                          static_cast<int>(pending.size()),
                                                          world_->klass(pending.front()).gpus);
      if (gang_refusals_.Keep(refused)) world_->recorder()->Record(std::move(refused));
    }
    if (!world_->policy().topofit_extender || !world_->policy().provisioning_requests) return;
    // No domain holds the gang now: one request for what the domain nearest to holding it lacks, so that CA
    // grows that in the domain's group, or nothing, and never part of the gang pod by pod (every member is
    // the request's business).
    if (std::optional<decision::GangCapacityAsk> ask = GangDomainAskFor(*world_, gang)) {
      ProvisioningRequest request;
      request.pods = std::move(pending);
      request.gang = true;
      request.new_pods = ask->new_members;
      kube::NodeSelectorTerm in_domain;
      in_domain.match_expressions.push_back(
          {ask->domain.label_key, kube::NodeSelectorOperator::kIn, {ask->domain.id.value}});
      request.shapes = {std::move(in_domain)};
      request.created = world_->now();
      request.next_attempt = world_->now();
      world_->CreateRequest(std::move(request));
      dirty_ = true;
    }
    return;
  }
  if (world_->recorder() != nullptr && !placed->empty()) {
    // The extender's reservation and the binds that follow it are one step in the replay.
    decision::GangReservation reservation;
    reservation.gang = GangId(gang);
    for (const GangMemberPlacement& member : *placed) {
      reservation.slots.push_back({.node = world_->nodes()[member.node].gpus.node,
                                   .gpus = member.gpus,
                                   .pod_uid = world_->PodUid(member.pod),
                                   .bound = false});
    }
    world_->recorder()->Record(history::GangReservedRecord(world_->time(), Subject(placed->front().pod), reservation,
                                                           world_->klass(placed->front().pod).gpus));
  }
  for (const GangMemberPlacement& member : *placed) {
    PlacementDecision decision;
    decision.node = member.node;
    decision.gpus = member.gpus;
    Place(member.pod, decision);
  }
}

void Replayer::Schedule(int pod) {
  if (const int gang = world_->pods()[pod].gang; gang >= 0 && world_->policy().places_gangs_whole()) {
    ScheduleGang(gang);
    return;
  }
  scheduler_.set_holds(Holds());
  scheduler_.set_ask(AskFor(pod));
  const PlacementDecision decision = scheduler_.Schedule(pod);
  if (decision.node >= 0) {
    Place(pod, decision);
    return;
  }
  Wait(pod);
  if (decision.refused_for_topology) RecordRefusal(pod, decision);
}

void Replayer::RetryOn(int node) {
  // kube-scheduler's queue order: higher priority first, then older (pod ids follow arrival).
  auto before = [&](int a, int b) {
    const int pa = world_->klass(a).priority, pb = world_->klass(b).priority;
    return pa != pb ? pa > pb : a < b;
  };
  // The class queues merged by their head pod.
  auto later = [&](const std::pair<int, int>& a, const std::pair<int, int>& b) { return before(b.second, a.second); };
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, decltype(later)> heads(later);
  for (int klass : waiting_classes_) heads.push({klass, *waiting_[klass].begin()});
  while (!heads.empty()) {
    const auto [klass, pod] = heads.top();
    heads.pop();
    if (const int gang = world_->pods()[pod].gang; gang >= 0 && world_->policy().places_gangs_whole()) {
      // A gang's class is its own (its name is in its pods' annotations): the whole gang is tried at once,
      // on every Ready node, since the changed node may complete a domain.
      ScheduleGang(gang);
      continue;
    }
    scheduler_.set_holds(Holds());
    scheduler_.set_ask(AskFor(pod));
    const PlacementDecision decision = scheduler_.ScheduleOn(pod, node);
    if (decision.node < 0 && decision.filter.asking_for_capacity() && !world_->pods()[pod].refused_for_topology) {
      // It refused this node to ask for capacity giving its preferred set. kube-scheduler's cycle for it
      // offers every node, and the extender records its first refusal, which bounds how long it asks
      // (capacity_ask.h): that cycle, as when it arrived.
      Schedule(pod);
      continue;
    }
    if (decision.node < 0) {
      // The rest of the class does not fit this node either — unless a hold refused this pod: it refuses
      // the pods of other scale-ups, not the ones the node was grown for, which may come later in the
      // class. Every pod is offered the node in kube-scheduler's queue order, as when a node's arrival
      // moves them all to the active queue; offering the held-for pods first put younger pods ahead of
      // older ones and lengthened the tail of the wait (Azure LLM's multi-GPU p95, issue 13).
      if (decision.filter.held_back) {
        auto next = waiting_[klass].upper_bound(pod);
        if (next != waiting_[klass].end()) heads.push({klass, *next});
      }
      continue;
    }
    Place(pod, decision);
    if (!waiting_[klass].empty()) heads.push({klass, *waiting_[klass].begin()});
  }
}

void Replayer::RunTopofitRequestController() {
  if (!world_->policy().topofit_extender) return;
  // Copied: retrying a pod can create a new request.
  const std::vector<int> open(world_->open_requests().begin(), world_->open_requests().end());
  for (int index : open) {
    const ProvisioningRequest& request = world_->provisioning_requests()[index];
    if (request.provisioned_at < 0 || world_->now() - request.provisioned_at < options_.request_timeout) continue;
    // Provisioned, yet its pods still wait: the capacity went elsewhere. Delete it and retry them; they ask
    // again if they are still refused.
    const std::vector<int> pods = request.pods;
    world_->DeleteRequest(index);
    for (int pod : pods) {
      SimPod& p = world_->pods()[pod];
      if (p.phase != PodPhase::kPending || p.provisioning_request >= 0) continue;  // placed, or asked again
      waiting_[p.klass].erase(pod);
      if (waiting_[p.klass].empty()) waiting_classes_.erase(p.klass);
      Schedule(pod);
    }
    dirty_ = true;
  }
  for (auto& [pod, refreshed] : preference_refreshed_) {
    if (world_->now() - refreshed < kUnschedulableFlush) continue;
    const SimPod& p = world_->pods()[pod];
    if (p.phase != PodPhase::kPending || !p.refused_for_topology) continue;
    decision::Preference preference =
        decision::PreferenceFor(world_->PodObject(pod), world_->klass(pod).demand, {}, p.preferred_set);
    ledger_->RecordPreference(std::move(preference));
    holds_stale_ = true;
    refreshed = world_->now();
  }
}

void Replayer::Apply(const AutoscalerActions& actions) {
  // What the expander learns of the cluster's groups reaches the extender through the ledger.
  if (actions.topofit_expander_called && world_->policy().topofit_extender) {
    if (gpu_group_templates_.empty()) gpu_group_templates_ = decision::GpuGroupTemplates(world_->group_templates());
    ledger_->RecordNodeGroups(gpu_group_templates_, /*trusted=*/true);  // the replay's CA is the only caller
  }
  if (actions.scale_up && actions.scale_up->node_count > 0) {
    const ScaleUpOption& option = *actions.scale_up;
    const int id = static_cast<int>(world_->scale_ups().size());
    const bool for_buffer =
        std::any_of(option.pods.begin(), option.pods.end(), [&](int pod) { return world_->IsBufferPod(pod); });
    world_->scale_ups().push_back(
        {option.group, option.node_count, world_->now(), actions.provisioning_request >= 0, option.pods, for_buffer});
    const NodeGroupSpec& spec = world_->groups()[option.group].spec;
    for (int i = 0; i < option.node_count; ++i) {
      const int node = world_->AddNode(option.group, id);
      holds_stale_ = true;  // which nodes an intent holds depends on the nodes there are
      if (actions.provisioning_request >= 0) {
        world_->nodes()[node].booked_until = world_->now() + autoscaler_.config().booking;
      }
      // Keyed by the node's place in its group, so every policy's k-th node of a group boots alike.
      const std::initializer_list<uint64_t> key = {static_cast<uint64_t>(option.group),
                                                   static_cast<uint64_t>(world_->nodes()[node].ordinal)};
      const SimTime delay = world_->draws().Between(spec.provision_delay_min, spec.provision_delay_max,
                                                    DrawPurpose::kBootDelay, key);
      const bool fails = spec.provision_failure_rate > 0 &&
                         world_->draws().Unit(DrawPurpose::kBootFailure, key) < spec.provision_failure_rate;
      if (!fails) Push(Event::Kind::kNodeReady, world_->now() + delay, node);
    }
    for (int pod : option.pods) world_->pods()[pod].scale_up = id;
    // Only the extender reads intents, and only to hold capacity for them.
    // The intent is the expander's record as it answered (ApplyTopofitExpander); the ledger learns it when
    // CA makes that scale-up.
    if (option.intent && world_->policy().topofit_extender && world_->policy().capacity_holds) {
      ledger_->RecordIntent(*option.intent);
      holds_stale_ = true;
    }
    dirty_ = true;
  }
  for (int node : actions.remove_unready) {
    world_->RemoveNode(node);
    ++failed_nodes_;
    dirty_ = true;
  }
  for (int node : actions.remove_empty) {
    world_->RemoveNode(node);
    dirty_ = true;
  }
  if (actions.drain >= 0) {
    const std::vector<int> evicted = world_->nodes()[actions.drain].pods;
    for (int pod : evicted) {
      ++evicted_pods_;
      evicted_multi_gpu_pods_ += world_->klass(pod).gpus >= 2;
      world_->EvictPod(pod);
    }
    world_->RemoveNode(actions.drain);
    for (int pod : evicted) Schedule(pod);
    dirty_ = true;
  }
}

void Replayer::KeepWarm() {
  // The DRA allocator, not the extender, picks a claim pod's devices: its score cannot keep sets whole.
  const Policy& policy = world_->policy();
  if (!policy.topofit_extender || !policy.keep_buffered_sets || policy.gpu_api != GpuApi::kDevicePlugin) return;
  std::vector<int> replicas;
  std::vector<decision::WarmShape> shapes;
  for (const SimBuffer& buffer : world_->buffers()) {
    replicas.push_back(buffer.replicas);
    shapes.push_back({world_->classes()[buffer.klass].demand, buffer.replicas});
  }
  if (replicas == warm_replicas_) return;
  warm_replicas_ = std::move(replicas);
  scheduler_.set_warm(decision::WarmCapacity(std::move(shapes)));
}

void Replayer::RunAutoscaler() {
  RunTopofitRequestController();
  // The buffers' replicas CA reads this loop.
  if (headroom_ && headroom_->Reconcile(*world_)) dirty_ = true;
  KeepWarm();
  const bool changed = dirty_;
  dirty_ = false;
  const std::vector<decision::Preference> preferences =
      world_->policy().topofit_expander ? ledger_->Preferences() : std::vector<decision::Preference>{};
  const AutoscalerActions actions = autoscaler_.RunLoop(preferences, changed);
  Apply(actions);
}

void Replayer::SampleIdle() {
  const SimTime now = world_->now();
  if (idle_sampled_at_ >= 0 && now < idle_sampled_at_ + kIdleSampleInterval) {
    idle_due_ = std::min(idle_due_, idle_sampled_at_ + kIdleSampleInterval);
    return;
  }
  std::vector<const decision::NodeGpuSnapshot*> nodes;
  std::vector<history::NodeActivity> activity;
  for (int id : world_->live_nodes()) {
    const SimNode& node = world_->nodes()[id];
    if (node.gpus.topology == nullptr) continue;  // a node without GPUs
    nodes.push_back(&node.gpus);
    // Its pods hold GPUs (which the snapshot shows) unless some of them hold none.
    activity.push_back({node.state == NodeState::kReady, static_cast<int>(node.pods.size()) > 0 && node.used_gpus() == 0});
  }
  std::vector<decision::GpuDemand> pending;
  for (int klass : waiting_classes_) {
    if (world_->classes()[klass].gpus > 0) pending.push_back(world_->classes()[klass].demand);
  }
  static const decision::CapacityHolds kNoHolds;
  const decision::CapacityHolds* holds = Holds();
  IdleSample sample{now, {}};
  const std::vector<history::IdleCounts> classified =
      history::ClassifyNodes(nodes, activity, holds != nullptr ? *holds : kNoHolds, pending, idle_memo_);
  for (const history::IdleCounts& counts : classified) {
    for (size_t r = 0; r < history::kIdleReasons; ++r) sample.gpus[r] += counts[r];
  }
  if (idle_samples_.empty() || idle_samples_.back().gpus != sample.gpus) idle_samples_.push_back(sample);
  if (world_->recorder() != nullptr) {
    // The idle records the extender writes (scheduler/idle_gpus_gauge.h), each time idle GPUs are sampled.
    std::vector<history::NodeIdleGpus> idle;
    idle.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) idle.push_back(history::IdleOf(*nodes[i], classified[i]));
    idle_records_.RecordChanges(world_->time(), idle, *world_->recorder());
  }
  idle_sampled_at_ = now;
  idle_due_ = kNever;
}

ReplayResult Replayer::Run() {
  const std::vector<PodSpec>& specs = world_->workload().pods;
  const SimTime interval = options_.autoscaler.scan_interval;
  size_t next_arrival = 0;
  SimTime ca_next = interval;
  int idle_loops = 0;
  const int progress_step = std::max<int>(1, static_cast<int>(specs.size() / 100));
  while (true) {
    const SimTime event_at = events_.empty() ? kNever : events_.top().at;
    const SimTime arrival_at = next_arrival < specs.size() ? specs[next_arrival].arrival : kNever;
    // Every running pod has a finish event, except members of a gang waiting for the rest: they change
    // nothing by themselves.
    const bool quiet = event_at == kNever && arrival_at == kNever && world_->provisioning_nodes() == 0;
    // Nothing left that could change the cluster: every pod is done and the last loop, which saw the
    // cluster as it is, left nothing for scale-down to remove; or the pods left can never run (three loops
    // changed nothing) — then the replay stops as it is, since waiting for scale-down would let those pods
    // ask for capacity again, for ever.
    const bool settled = world_->pending_pods() == 0 && !dirty_ && !autoscaler_.ScaleDownPending();
    if (quiet && (settled || (world_->pending_pods() > 0 && idle_loops >= 3))) break;
    if (arrival_at == kNever && world_->pending_pods() > 0 && world_->now() - last_progress_ > kStalledFor) break;
    const SimTime now = std::min({event_at, arrival_at, ca_next, idle_due_});
    if (options_.horizon > 0 && now > options_.horizon) break;
    world_->AdvanceTo(now);

    std::vector<int> changed_nodes;
    while (!events_.empty() && events_.top().at == now) {
      const Event event = events_.top();
      events_.pop();
      ++processed_;
      if (event.kind == Event::Kind::kPodFinish) {
        const SimPod& p = world_->pods()[event.id];
        if (p.phase != PodPhase::kRunning || p.epoch != event.epoch) continue;  // evicted since
        changed_nodes.push_back(p.node);
        world_->FinishPod(event.id);
        last_progress_ = now;
        end_ = now;
        provisioned_at_end_ = world_->provisioned_gpu_ms();
        allocated_at_end_ = world_->allocated_gpu_ms();
        cost_at_end_ = world_->cost_dollars();
        if (++finished_ % progress_step == 0 && options_.progress) {
          options_.progress(static_cast<double>(finished_) / static_cast<double>(specs.size()));
        }
      } else if (world_->nodes()[event.id].state == NodeState::kProvisioning) {
        world_->MarkReady(event.id);
        if (headroom_) headroom_->NodeBooted(now - world_->nodes()[event.id].requested);
        changed_nodes.push_back(event.id);
      }
      dirty_ = true;
    }
    for (int node : changed_nodes) {
      if (world_->nodes()[node].state == NodeState::kReady) RetryOn(node);
    }
    while (next_arrival < specs.size() && specs[next_arrival].arrival == now) {
      const int pod = static_cast<int>(next_arrival++);
      ++processed_;
      world_->SetPending(pod);
      Schedule(pod);
      dirty_ = true;
    }
    if (now == ca_next) {
      const bool was_dirty = dirty_;
      RunAutoscaler();
      const bool active = dirty_ || was_dirty;
      idle_loops = active ? 0 : idle_loops + 1;
      // While nothing changes, the next loop that can decide differently is the next event or timer.
      SimTime next = ca_next + interval;
      if (!active) {
        const SimTime wake = std::min({event_at == now ? kNever : event_at, arrival_at == now ? kNever : arrival_at,
                                       autoscaler_.NextTimer()});
        if (wake != kNever && wake > next) next = (wake + interval - 1) / interval * interval;
      }
      ca_next = next;
    }
    SampleIdle();
  }
  if (end_ == 0) {
    end_ = world_->now();
    provisioned_at_end_ = world_->provisioned_gpu_ms();
    allocated_at_end_ = world_->allocated_gpu_ms();
    cost_at_end_ = world_->cost_dollars();
  }
  if (options_.progress) options_.progress(1.0);
  return Result();
}

ReplayResult Replayer::Result() const {
  ReplayResult result;
  result.policy = world_->policy().name;
  for (int pod = 0; pod < world_->workload_pods(); ++pod) {
    const SimPod& p = world_->pods()[pod];
    const PodSpec& spec = world_->spec(pod);
    result.pods.push_back({spec.gpus, spec.arrival, p.first_start, spec.duration, p.stretch, p.best_topology, p.evictions,
                           spec.runs_until_deleted, p.phase == PodPhase::kDone ? p.finish : -1,
                           spec.kind == "inference"});
  }
  for (const SimNode& node : world_->nodes()) {
    const NodeGroupSpec& group = world_->groups()[node.group].spec;
    result.nodes.push_back({node.gpus.node, group.name, group.price_per_hour, node.requested,
                            node.ready_at, node.removed_at, node.scale_up, node.first_pod, node.first_served});
  }
  std::vector<bool> served(world_->scale_ups().size(), false);
  std::vector<SimTime> first_ready(world_->scale_ups().size(), kNever);
  for (const SimNode& node : world_->nodes()) {
    if (node.scale_up < 0 || node.state == NodeState::kProvisioning || node.ready_at < 0) continue;
    if (node.first_served >= 0 && node.first_served <= node.ready_at + kStrandedAfter) served[node.scale_up] = true;
    first_ready[node.scale_up] = std::min(first_ready[node.scale_up], node.ready_at);
  }
  for (size_t i = 0; i < world_->scale_ups().size(); ++i) {
    const ScaleUp& s = world_->scale_ups()[i];
    // Every pod it was made for had started before its first node was Ready: somewhere else, on capacity
    // that freed or came up meanwhile.
    const bool overtaken =
        !served[i] && first_ready[i] != kNever && !s.pods.empty() &&
        std::all_of(s.pods.begin(), s.pods.end(), [&](int pod) {
          const SimTime started = world_->pods()[pod].first_start;
          return started >= 0 && started < first_ready[i];
        });
    result.scale_ups.push_back(
        {world_->groups()[s.group].spec.name, s.nodes, s.at, s.for_provisioning_request, !served[i], overtaken});
    result.nodes_created += s.nodes;
  }
  for (const SimGang& g : world_->gangs()) {
    const PodSpec& first = world_->spec(g.members.front());
    result.gangs.push_back({g.name, static_cast<int>(g.members.size()), first.gpus * static_cast<int>(g.members.size()),
                            first.gang_topology, first.gang_topology_required, first.arrival, g.first_started, g.split});
  }
  result.timeline = world_->timeline();
  result.idle_samples = idle_samples_;
  result.provisioned_gpu_hours = provisioned_at_end_ / static_cast<double>(kHour);
  result.allocated_gpu_hours = allocated_at_end_ / static_cast<double>(kHour);
  result.cost_dollars = cost_at_end_;
  result.peak_nodes = world_->peak_nodes();
  result.provisioning_requests = static_cast<int>(world_->provisioning_requests().size());
  result.vetoes = autoscaler_.vetoes();
  result.gpu_sets_not_as_chosen = scheduler_.gpu_sets_not_as_chosen();
  result.failed_nodes = failed_nodes_;
  result.evicted_pods = evicted_pods_;
  result.evicted_multi_gpu_pods = evicted_multi_gpu_pods_;
  // Each pod's ideal GPU-hours from where measuring begins (a lead-in's pods count from its end), at the
  // cheapest price of a GPU it may run on.
  const SimTime measure_from = world_->workload().measure_from;
  for (int pod = 0; pod < world_->workload_pods(); ++pod) {
    const SimPod& p = world_->pods()[pod];
    const PodClass& c = world_->classes()[p.klass];
    const PodSpec& spec = world_->workload().pods[p.spec];
    const SimTime ideal = spec.arrival + spec.duration - std::max(spec.arrival, measure_from);
    if (ideal <= 0) continue;
    result.lower_bound_cost_dollars +=
        c.cheapest_gpu_hour * c.gpus * static_cast<double>(ideal) / static_cast<double>(kHour);
  }
  result.end = end_;
  result.events = processed_;
  return result;
}

}  // namespace

absl::StatusOr<ReplayResult> Replay(const Workload& workload, const Policy& policy, const ReplayOptions& options) {
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(workload, policy, options.seed);
  if (!world.ok()) return world.status();
  (*world)->set_recorder(options.recorder);
  Replayer replayer(*std::move(world), options);
  return replayer.Run();
}

}  // namespace topofit::sim
