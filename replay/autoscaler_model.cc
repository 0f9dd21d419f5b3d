#include "replay/autoscaler_model.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "decision/scale_down_guard.h"
#include "kube/node_affinity.h"

namespace topofit::sim {
namespace {

constexpr SimTime kNever = std::numeric_limits<SimTime>::max();

bool Contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

}  // namespace

std::vector<int> AutoscalerModel::UnschedulablePods() const {
  std::vector<int> pods;
  for (int pod : world_.pending()) {
    const SimPod& p = world_.pods()[pod];
    // Pods consuming a ProvisioningRequest are the request's business, not ordinary scale-up's.
    if (p.unschedulable && p.provisioning_request < 0) pods.push_back(pod);
  }
  // The scheduling queue's order: higher priority first, then older (pod ids follow arrival).
  std::stable_sort(pods.begin(), pods.end(),
                   [&](int a, int b) { return world_.klass(a).priority > world_.klass(b).priority; });
  // The CapacityBuffers' fake pods, which CA's pod list processor adds after the real ones.
  const std::vector<int> buffered = world_.ActiveBufferPods();
  pods.insert(pods.end(), buffered.begin(), buffered.end());
  return pods;
}

std::unordered_map<int, std::vector<int>> AutoscalerModel::PlaceBufferPods(
    std::unordered_map<int, FreeCapacity>& free) const {
  // As filter_out_schedulable places pending pods (next-fit by count, the nodes in id order) and leaves them
  // in the snapshot scale-down reads.
  std::unordered_map<int, std::vector<int>> placed;
  const std::vector<int> pods = world_.ActiveBufferPods();
  if (pods.empty()) return placed;  // no buffers: nothing on scale-down's hot path
  std::vector<int> nodes;
  for (int id : world_.ready_nodes()) nodes.push_back(id);
  std::sort(nodes.begin(), nodes.end());
  size_t hint = 0;
  for (int pod : pods) {
    const int klass = world_.pods()[pod].klass;
    for (size_t k = 0; k < nodes.size(); ++k) {
      const size_t i = (hint + k) % nodes.size();
      FreeCapacity& slot = free[nodes[i]];
      if (world_.FitsByCount(klass, world_.nodes()[nodes[i]].group, slot)) {
        world_.Take(slot, klass);
        placed[nodes[i]].push_back(pod);
        hint = i;
        break;
      }
    }
  }
  return placed;
}

std::vector<int> AutoscalerModel::FilterOutSchedulable(const std::vector<int>& pods,
                                                       const std::vector<int>& excluded) const {
  struct Slot {
    int group;
    FreeCapacity free;
  };
  std::vector<Slot> slots;
  for (int id : world_.live_nodes()) {
    const SimNode& node = world_.nodes()[id];
    if (node.booked_until > world_.now() || Contains(excluded, node.id)) continue;
    // A node long past its provision time is not upcoming any more (CA: long-unregistered).
    if (node.state == NodeState::kProvisioning &&
        world_.now() - node.requested >= config_.max_node_provision_time) {
      continue;
    }
    // Upcoming nodes stand in as empty template copies.
    slots.push_back({node.group, node.state == NodeState::kReady ? world_.FreeOf(node) : world_.EmptyOf(node.group)});
  }
  std::vector<int> remaining;
  std::unordered_set<int> failed_classes;  // capacity only shrinks during the pass
  size_t hint = 0;
  for (int pod : pods) {
    const int klass = world_.pods()[pod].klass;
    bool fitted = false;
    if (!failed_classes.count(klass)) {
      for (size_t k = 0; k < slots.size() && !fitted; ++k) {
        const size_t i = (hint + k) % slots.size();
        if (world_.FitsByCount(klass, slots[i].group, slots[i].free)) {
          world_.Take(slots[i].free, klass);
          hint = i;
          fitted = true;
        }
      }
      if (!fitted) failed_classes.insert(klass);
    }
    if (!fitted) remaining.push_back(pod);
  }
  return remaining;
}

std::vector<ScaleUpOption> AutoscalerModel::Estimate(const std::vector<int>& pods) const {
  std::vector<ScaleUpOption> options;
  for (int g = 0; g < static_cast<int>(world_.groups().size()); ++g) {
    const GroupState& group = world_.groups()[g];
    const int limit = std::min(group.spec.max_size - group.target, config_.max_nodes_per_scale_up);
    if (limit <= 0 || BackedOff(g)) continue;
    const FreeCapacity empty = world_.EmptyOf(g);
    // One exemplar per equivalence class is checked against the template.
    std::unordered_map<int, bool> class_fits;
    std::vector<int> candidates;
    for (int pod : pods) {
      const int klass = world_.pods()[pod].klass;
      auto [it, added] = class_fits.try_emplace(klass, false);
      if (added) it->second = world_.FitsByCount(klass, g, empty);
      if (it->second) candidates.push_back(pod);
    }
    if (candidates.empty()) continue;
    // First-fit decreasing by the pod's CPU + memory share of the template; GPUs play no part in the order.
    auto weight = [&](int pod) {
      const PodClass& c = world_.klass(pod);
      return static_cast<double>(c.cpu_milli) / static_cast<double>(std::max<int64_t>(empty.cpu_milli, 1)) +
             static_cast<double>(c.memory_mib) / static_cast<double>(std::max<int64_t>(empty.memory_mib, 1));
    };
    std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) { return weight(a) > weight(b); });
    std::vector<FreeCapacity> nodes;
    ScaleUpOption option;
    option.group = g;
    for (int pod : candidates) {
      const int klass = world_.pods()[pod].klass;
      auto fit = std::find_if(nodes.begin(), nodes.end(),
                              [&](const FreeCapacity& free) { return world_.FitsByCount(klass, g, free); });
      if (fit == nodes.end()) {
        if (static_cast<int>(nodes.size()) >= limit) continue;
        nodes.push_back(empty);
        fit = nodes.end() - 1;
      }
      world_.Take(*fit, klass);
      option.pods.push_back(pod);
    }
    option.node_count = static_cast<int>(nodes.size());
    options.push_back(std::move(option));
  }
  return options;
}

std::optional<ScaleUpOption> AutoscalerModel::ScaleUpFor(const std::vector<int>& pods,
                                                         const std::vector<decision::Preference>& preferences) {
  const std::vector<int> remaining = FilterOutSchedulable(pods, {});
  if (remaining.empty()) return std::nullopt;
  return Expand(Estimate(remaining), preferences).option;
}

ExpanderChoice AutoscalerModel::Expand(std::vector<ScaleUpOption> options,
                                       const std::vector<decision::Preference>& preferences) {
  if (world_.policy().topofit_expander && !options.empty()) topofit_expander_called_ = true;
  ExpanderChoice choice = ChooseOption(std::move(options), world_, preferences);
  vetoes_ += choice.vetoed;
  return choice;
}

std::optional<ScaleUpOption> AutoscalerModel::HandleProvisioningRequest(
    int request, const std::vector<decision::Preference>& preferences) {
  ProvisioningRequest& r = world_.provisioning_requests()[request];
  // The template's affinity confines it to its shapes: CA books and grows only nodes of those groups.
  std::vector<bool> admitted(world_.groups().size(), true);
  if (!r.shapes.empty()) {
    for (size_t g = 0; g < admitted.size(); ++g) admitted[g] = kube::MatchesAnyTerm(r.shapes, world_.groups()[g].template_node);
  }
  std::vector<int> excluded = r.excluded_nodes;
  for (int id : world_.live_nodes()) {
    if (!admitted[world_.nodes()[id].group]) excluded.push_back(id);
  }
  // best-effort-atomic: first the existing capacity (count-only, the template's NotIn nodes excluded). A
  // gang's request is made because no domain holds it whole, which counting cannot see: it asks for new
  // nodes for every member.
  if (!r.gang && FilterOutSchedulable(r.pods, excluded).empty()) {
    r.provisioned_at = world_.now();
    return std::nullopt;
  }
  const std::vector<int> wanted = r.gang ? std::vector<int>(r.pods.end() - r.new_pods, r.pods.end()) : r.pods;
  std::vector<ScaleUpOption> options = Estimate(wanted);
  // Atomic: an option that does not take every pod of the request is no option.
  std::erase_if(options, [&](const ScaleUpOption& o) { return !admitted[o.group] || o.pods.size() != wanted.size(); });
  std::optional<ScaleUpOption> option = Expand(std::move(options), preferences).option;
  if (!option) {
    r.backoff = r.backoff == 0 ? config_.request_retry : std::min(2 * r.backoff, config_.request_max_backoff);
    r.next_attempt = world_.now() + r.backoff;
    return std::nullopt;
  }
  r.provisioned_at = world_.now();
  return option;
}

bool AutoscalerModel::KeptFromDrain(int pod, const std::vector<const decision::NodeGpuSnapshot*>& ready,
                                    decision::FilterMemo& memo) const {
  const SimPod& p = world_.pods()[pod];
  if (!world_.spec(pod).safe_to_evict) return true;  // cluster-autoscaler.kubernetes.io/safe-to-evict: "false"
  return p.drain_guarded && !decision::AnotherNodeGivesItsTopology(world_.klass(pod).demand,
                                                                   world_.nodes()[p.node].gpus.node, ready, memo);
}

void AutoscalerModel::UpdateUnneeded() {
  struct Candidate {
    int node;
    double utilization;
  };
  std::vector<Candidate> empty, busy;
  // What the drain guard judges on, once per loop.
  std::vector<const decision::NodeGpuSnapshot*> ready;
  for (int id : world_.ready_nodes()) ready.push_back(&world_.nodes()[id].gpus);
  decision::FilterMemo memo;
  std::unordered_map<int, FreeCapacity> free;
  for (int id : world_.ready_nodes()) free.emplace(id, world_.FreeOf(world_.nodes()[id]));
  // The buffers' fake pods sit where they fit: the capacity they keep is in use to scale-down.
  std::unordered_map<int, std::vector<int>> buffered = PlaceBufferPods(free);
  // A node's pods as scale-down sees them: the running ones, then the fake ones placed on it (copied only for
  // a node that has some).
  std::vector<int> with_buffered;
  auto pods_of = [&](int id) -> const std::vector<int>& {
    const std::vector<int>& running = world_.nodes()[id].pods;
    const auto it = buffered.find(id);
    if (it == buffered.end()) return running;
    with_buffered = running;
    with_buffered.insert(with_buffered.end(), it->second.begin(), it->second.end());
    return with_buffered;
  };
  for (int id : world_.ready_nodes()) {
    const SimNode& node = world_.nodes()[id];
    const GroupState& group = world_.groups()[node.group];
    const FreeCapacity& left = free[id];
    double utilization;
    if (group.gpus > 0) {
      utilization = static_cast<double>(group.gpus - left.gpus) / group.gpus;  // GPU nodes: GPUs only
    } else {
      utilization = std::max(static_cast<double>(group.spec.cpu_milli - left.cpu_milli) / static_cast<double>(std::max<int64_t>(group.spec.cpu_milli, 1)),
                             static_cast<double>(group.spec.memory_mib - left.memory_mib) / static_cast<double>(std::max<int64_t>(group.spec.memory_mib, 1)));
    }
    if (utilization > config_.utilization_threshold) continue;
    // CA never drains a node with a pod annotated safe-to-evict "false" (its drain rules).
    if (std::any_of(node.pods.begin(), node.pods.end(), [&](int pod) { return KeptFromDrain(pod, ready, memo); })) continue;
    (node.pods.empty() && !buffered.contains(id) ? empty : busy).push_back({id, utilization});
  }
  std::stable_sort(busy.begin(), busy.end(),
                   [](const Candidate& a, const Candidate& b) { return a.utilization < b.utilization; });
  if (static_cast<int>(busy.size()) > config_.non_empty_candidates) busy.resize(config_.non_empty_candidates);

  std::vector<int> unneeded;
  for (const Candidate& c : empty) unneeded.push_back(c.node);
  // Non-empty candidates: every pod must fit on some node that stays (count-only), committed one node
  // after another as CA's simulation does.
  for (const Candidate& c : busy) {
    std::unordered_map<int, FreeCapacity> trial = free;
    bool all_fit = true;
    for (int pod : pods_of(c.node)) {
      const int klass = world_.pods()[pod].klass;
      bool fitted = false;
      for (int id : world_.ready_nodes()) {
        if (id == c.node || Contains(unneeded, id)) continue;
        FreeCapacity& slot = trial[id];
        if (world_.FitsByCount(klass, world_.nodes()[id].group, slot)) {
          world_.Take(slot, klass);
          fitted = true;
          break;
        }
      }
      if (!fitted) {
        all_fit = false;
        break;
      }
    }
    if (all_fit) {
      free = std::move(trial);
      unneeded.push_back(c.node);
    }
  }
  for (int id : unneeded_) {
    if (!Contains(unneeded, id)) world_.nodes()[id].unneeded_since = -1;
  }
  for (int id : unneeded) {
    SimNode& node = world_.nodes()[id];
    if (node.unneeded_since < 0) node.unneeded_since = world_.now();
  }
  unneeded_ = std::move(unneeded);
}

void AutoscalerModel::ScaleDown(AutoscalerActions& actions) {
  if (last_scale_up_ >= 0 && world_.now() - last_scale_up_ < config_.delay_after_add) return;
  std::unordered_map<int, int> removing;  // group -> nodes removed this loop
  for (int id : unneeded_) {
    const SimNode& node = world_.nodes()[id];
    if (node.state != NodeState::kReady || world_.now() - node.unneeded_since < config_.unneeded_time) continue;
    const GroupState& group = world_.groups()[node.group];
    if (group.target - removing[node.group] <= group.spec.min_size) continue;
    if (node.pods.empty()) {
      if (static_cast<int>(actions.remove_empty.size()) >= config_.max_empty_bulk_delete) continue;
      actions.remove_empty.push_back(id);
    } else {
      if (actions.drain >= 0) continue;  // one node with running pods drained at a time
      actions.drain = id;
    }
    ++removing[node.group];
  }
}

bool AutoscalerModel::ScaleDownPending() const {
  return std::any_of(unneeded_.begin(), unneeded_.end(), [&](int id) {
    const SimNode& node = world_.nodes()[id];
    const GroupState& group = world_.groups()[node.group];
    return node.state == NodeState::kReady && group.target > group.spec.min_size;
  });
}

bool AutoscalerModel::BackedOff(int group) const { return world_.now() < backoff_[group].until; }

void AutoscalerModel::GiveUpUnready(AutoscalerActions& actions) {
  for (int id : world_.live_nodes()) {
    const SimNode& node = world_.nodes()[id];
    if (node.state != NodeState::kProvisioning || world_.now() - node.requested < config_.max_node_provision_time) {
      continue;
    }
    actions.remove_unready.push_back(node.id);
    Backoff& b = backoff_[node.group];
    if (b.last_failure >= 0 && world_.now() - b.last_failure >= config_.backoff_reset) b.duration = 0;
    // The duration doubles only once the previous backoff has run out.
    if (world_.now() >= b.until) {
      b.duration = b.duration == 0 ? config_.initial_backoff : std::min(2 * b.duration, config_.max_backoff);
      b.until = world_.now() + b.duration;
    }
    b.last_failure = world_.now();
  }
}

AutoscalerActions AutoscalerModel::RunLoop(const std::vector<decision::Preference>& preferences, bool state_changed) {
  AutoscalerActions actions;
  GiveUpUnready(actions);
  std::vector<int> pods = UnschedulablePods();
  if (!pods.empty()) {
    SimTime oldest = kNever;
    bool wants_gpus = false;
    for (int pod : pods) {
      if (world_.IsBufferPod(pod)) continue;  // a buffer's capacity is wanted now
      oldest = std::min(oldest, world_.spec(pod).arrival);
      wants_gpus |= world_.klass(pod).gpus > 0;
    }
    if (oldest != kNever && world_.now() - oldest < (wants_gpus ? config_.new_gpu_pod_delay : config_.new_pod_delay)) {
      std::erase_if(pods, [&](int pod) { return !world_.IsBufferPod(pod); });
    }
  }
  int request = -1;
  for (int i : world_.open_requests()) {
    const ProvisioningRequest& r = world_.provisioning_requests()[i];
    if (r.provisioned_at < 0 && r.next_attempt <= world_.now()) {
      request = i;
      break;
    }
  }
  // One ProvisioningRequest per loop, alternating with ordinary pending pods.
  if (request >= 0 && (pods.empty() || !last_loop_served_request_)) {
    actions.scale_up = HandleProvisioningRequest(request, preferences);
    if (actions.scale_up) actions.provisioning_request = request;
    last_loop_served_request_ = true;
  } else if (!pods.empty()) {
    actions.scale_up = ScaleUpFor(pods, preferences);
    last_loop_served_request_ = false;
  }
  if (actions.scale_up) last_scale_up_ = world_.now();
  if (state_changed) UpdateUnneeded();
  ScaleDown(actions);
  actions.topofit_expander_called = std::exchange(topofit_expander_called_, false);
  return actions;
}

SimTime AutoscalerModel::NextTimer() const {
  SimTime next = kNever;
  const SimTime cooldown_end = last_scale_up_ >= 0 ? last_scale_up_ + config_.delay_after_add : 0;
  for (int id : unneeded_) {
    const SimNode& node = world_.nodes()[id];
    if (node.state == NodeState::kReady) {
      next = std::min(next, std::max(node.unneeded_since + config_.unneeded_time, cooldown_end));
    }
  }
  for (int i : world_.open_requests()) {
    const ProvisioningRequest& r = world_.provisioning_requests()[i];
    if (r.provisioned_at < 0) next = std::min(next, r.next_attempt);
  }
  for (int id : world_.live_nodes()) {
    const SimNode& node = world_.nodes()[id];
    if (node.state == NodeState::kProvisioning) next = std::min(next, node.requested + config_.max_node_provision_time);
  }
  for (const Backoff& b : backoff_) {
    if (b.until > world_.now()) next = std::min(next, b.until);
  }
  SimTime oldest = kNever;
  bool wants_gpus = false;
  for (int pod : world_.pending()) {
    const SimPod& p = world_.pods()[pod];
    if (!p.unschedulable || p.provisioning_request >= 0) continue;
    oldest = std::min(oldest, world_.spec(pod).arrival);
    wants_gpus |= world_.klass(pod).gpus > 0;
  }
  if (oldest != kNever) {
    const SimTime ripe = oldest + (wants_gpus ? config_.new_gpu_pod_delay : config_.new_pod_delay);
    if (ripe > world_.now()) next = std::min(next, ripe);
  }
  return std::max(next, world_.now());
}

}  // namespace topofit::sim
