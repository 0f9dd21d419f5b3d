#include "decision/headroom_plan.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kube/pod_resources.h"
#include "kube/topofit_annotations.h"
#include "topology/catalog.h"

namespace topofit::decision {
namespace {

// How many boots are remembered for the boot a buffer covers, and which of them it covers: nearly the
// slowest (a buffer sized for a typical boot runs dry during a slow one).
constexpr size_t kBootsRemembered = 64;
constexpr double kBootQuantile = 0.95;

std::string AnnotationOf(const kube::Pod& pod, absl::string_view key) {
  auto it = pod.metadata.annotations.find(std::string(key));
  return it == pod.metadata.annotations.end() ? std::string() : it->second;
}

// The q-quantile of ascending `values` by nearest rank; 0 for none.
template <typename T>
T NearestRank(const std::vector<T>& ascending, double q) {
  if (ascending.empty()) return T{};
  const double rank = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(ascending.size()));
  const size_t index = static_cast<size_t>(std::max(rank, 1.0)) - 1;
  return ascending[std::min(index, ascending.size() - 1)];
}

}  // namespace

int FillRateCover(const std::vector<int>& ascending_rises, double fill_rate) {
  int64_t total = 0;
  for (int rise : ascending_rises) total += rise;
  if (total == 0) return 0;
  // Covered pods grow with the cover by the number of rises at least that large: walk the covers the rises
  // themselves name (between two of them coverage grows linearly, so the smallest cover is one of them or
  // reached within the step above).
  const double wanted = std::clamp(fill_rate, 0.0, 1.0) * static_cast<double>(total);
  int64_t covered = 0;  // sum of min(rise, cover) at the current cover
  int cover = 0;
  size_t below = 0;  // rises <= cover
  while (below < ascending_rises.size()) {
    const int64_t larger = static_cast<int64_t>(ascending_rises.size() - below);
    const int next = ascending_rises[below];
    if (next > cover) {
      // Raising the cover to `next` covers `larger` more pods per step.
      const double missing = wanted - static_cast<double>(covered);
      const int64_t steps = next - cover;
      if (static_cast<double>(larger * steps) >= missing) {
        return cover + static_cast<int>(std::ceil(std::max(missing, 0.0) / static_cast<double>(larger)));
      }
      covered += larger * steps;
      cover = next;
    }
    ++below;
  }
  return cover;
}

std::string HeadroomShape::Name() const {
  std::vector<std::string> parts = {absl::StrCat(gpus, "gpu")};
  for (const std::string* part : {&min_link, &min_bandwidth, &topology_policy, &family}) {
    if (!part->empty()) parts.push_back(absl::AsciiStrToLower(*part));
  }
  return absl::StrJoin(parts, "-");
}

std::optional<HeadroomShape> HeadroomShapeOf(const kube::Pod& pod) {
  absl::StatusOr<int> gpus = kube::GpuRequest(pod);
  if (!gpus.ok() || *gpus <= 0) return std::nullopt;
  HeadroomShape shape;
  shape.gpus = *gpus;
  shape.min_link = AnnotationOf(pod, kube::kMinLinkAnnotation);
  shape.min_bandwidth = AnnotationOf(pod, kube::kMinBandwidthAnnotation);
  shape.topology_policy = AnnotationOf(pod, kube::kTopologyPolicyAnnotation);
  std::set<std::string> products;
  if (auto it = pod.spec.node_selector.find(std::string(topology::kGpuProductLabel)); it != pod.spec.node_selector.end()) {
    products.insert(it->second);
  }
  if (pod.spec.required_node_affinity) {
    for (const kube::NodeSelectorTerm& term : pod.spec.required_node_affinity->terms) {
      for (const kube::NodeSelectorRequirement& requirement : term.match_expressions) {
        if (requirement.key == topology::kGpuProductLabel && requirement.op == kube::NodeSelectorOperator::kIn) {
          products.insert(requirement.values.begin(), requirement.values.end());
        }
      }
    }
  }
  shape.family = absl::StrJoin(products, "+");
  return shape;
}

HeadroomPlanner::HeadroomPlanner(HeadroomConfig config) : config_(std::move(config)) {}

void HeadroomPlanner::ObserveLive(absl::Time at, const std::map<HeadroomShape, int>& live) {
  const absl::Time start = absl::UnixEpoch() + absl::Floor(at - absl::UnixEpoch(), config_.bucket);
  auto record = [&](std::vector<Bucket>& buckets, int count) {
    if (buckets.empty() || buckets.back().start < start) {
      buckets.push_back({start, count, count});
    } else {
      buckets.back().peak = std::max(buckets.back().peak, count);
    }
  };
  for (const auto& [shape, count] : live) {
    auto [it, first_seen] = buckets_.try_emplace(shape);
    // A shape that appears after the first observation rose from none; at the first, pods already there
    // are the load the planner starts from, not a burst (a restarted controller must not buy a buffer for
    // all of it).
    if (first_seen && observed_) it->second.push_back({start, 0, count});
    record(it->second, count);
  }
  observed_ = true;
  // A shape seen before and not named now has no live pods.
  for (auto& [shape, buckets] : buckets_) {
    if (!live.contains(shape)) record(buckets, 0);
  }
  Forget(at);
}

void HeadroomPlanner::ObserveBoot(absl::Duration boot) {
  boots_.push_back(boot);
  if (boots_.size() > kBootsRemembered) boots_.erase(boots_.begin());
}

absl::Duration HeadroomPlanner::Boot() const {
  if (boots_.empty()) return config_.default_boot;
  std::vector<absl::Duration> sorted = boots_;
  std::sort(sorted.begin(), sorted.end());
  return NearestRank(sorted, kBootQuantile);
}

void HeadroomPlanner::Forget(absl::Time now) {
  // A bucket is needed while a rise starting in the window can still reach it.
  const absl::Time oldest = now - config_.window - config_.bucket;
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    std::vector<Bucket>& buckets = it->second;
    buckets.erase(buckets.begin(), std::find_if(buckets.begin(), buckets.end(),
                                                [&](const Bucket& b) { return b.start >= oldest; }));
    // A shape without live pods for the whole window has nothing left to learn from (its zeros before a
    // burst are what the burst's rise is measured from, so they are kept until then).
    const bool idle_for_window =
        !buckets.empty() && buckets.front().start < now - config_.window &&
        std::all_of(buckets.begin(), buckets.end(), [](const Bucket& b) { return b.peak == 0; });
    if (idle_for_window && !held_.contains(it->first)) {
      rises_.erase(it->first);
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<int> HeadroomPlanner::Rises(const std::vector<Bucket>& buckets, absl::Time now) const {
  const absl::Duration boot = Boot();
  std::vector<int> rises;
  // Every bucket the window remembers starts a rise: from its first count to the highest peak of the buckets
  // starting within one boot of it (those still to come are not counted: a burst under way rises as far as seen).
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].start < now - config_.window) continue;
    int peak = buckets[i].peak;
    for (size_t j = i + 1; j < buckets.size() && buckets[j].start < buckets[i].start + boot; ++j) {
      peak = std::max(peak, buckets[j].peak);
    }
    rises.push_back(std::max(0, peak - buckets[i].first));
  }
  std::sort(rises.begin(), rises.end());
  return rises;
}

std::map<HeadroomShape, int> HeadroomPlanner::Targets(absl::Time now) const {
  std::map<HeadroomShape, int> targets;
  for (const auto& [shape, buckets] : buckets_) {
    const int target = FillRateCover(Rises(buckets, now), config_.quantile);
    if (target > 0) targets[shape] = target;
  }
  return targets;
}

std::vector<int> HeadroomPlanner::RisesOf(const HeadroomShape& shape) const {
  const auto it = rises_.find(shape);
  return it == rises_.end() ? std::vector<int>{} : it->second;
}

std::map<HeadroomShape, int> HeadroomPlanner::Plan(absl::Time now) {
  std::map<HeadroomShape, int> wanted;
  rises_.clear();
  for (const auto& [shape, buckets] : buckets_) rises_[shape] = Rises(buckets, now);
  // The targets of the rises just weighed (Targets(now) would weigh them again).
  targets_.clear();
  for (const auto& [shape, rises] : rises_) {
    if (const int target = FillRateCover(rises, config_.quantile); target > 0) targets_[shape] = target;
  }
  const std::map<HeadroomShape, int>& targets = targets_;
  std::set<HeadroomShape> shapes;
  for (const auto& [shape, target] : targets) shapes.insert(shape);
  for (const auto& [shape, held] : held_) shapes.insert(shape);
  for (const HeadroomShape& shape : shapes) {
    const auto found = targets.find(shape);
    const int target = found == targets.end() ? 0 : found->second;
    Held& held = held_[shape];
    if (target >= held.replicas) {
      held = {target, absl::InfiniteFuture(), 0};
    } else if (held.below_since == absl::InfiniteFuture()) {
      held.below_since = now;
      held.highest_since = target;
    } else {
      held.highest_since = std::max(held.highest_since, target);
      if (now - held.below_since >= config_.shrink_after) held = {held.highest_since, now, target};
    }
    if (held.replicas == 0) {
      held_.erase(shape);
    } else {
      wanted[shape] = held.replicas;
    }
  }
  return WithinBudget(wanted, rises_, config_.budget_gpus);
}

std::map<HeadroomShape, int> WithinBudget(const std::map<HeadroomShape, int>& wanted,
                                          const std::map<HeadroomShape, std::vector<int>>& rises, int budget_gpus) {
  if (budget_gpus <= 0) return wanted;
  // The k-th replica of a shape is used by a rise of k or more: its chance is the share of such rises.
  struct Replica {
    double chance_per_gpu;
    int gpus;
    const HeadroomShape* shape;
  };
  std::vector<Replica> replicas;
  for (const auto& [shape, count] : wanted) {
    const auto found = rises.find(shape);
    const std::vector<int> none;
    const std::vector<int>& seen = found == rises.end() ? none : found->second;
    for (int k = 1; k <= count; ++k) {
      const auto at_least = static_cast<double>(seen.end() - std::lower_bound(seen.begin(), seen.end(), k));
      const double chance = seen.empty() ? 0 : at_least / static_cast<double>(seen.size());
      replicas.push_back({chance / shape.gpus, shape.gpus, &shape});
    }
  }
  // Stable: a shape's replicas stay in order (their chances do not rise with k), ties keep shape order.
  std::stable_sort(replicas.begin(), replicas.end(),
                   [](const Replica& a, const Replica& b) { return a.chance_per_gpu > b.chance_per_gpu; });
  std::map<HeadroomShape, int> kept;
  int used = 0;
  for (const Replica& replica : replicas) {
    if (used + replica.gpus > budget_gpus) continue;
    used += replica.gpus;
    ++kept[*replica.shape];
  }
  return kept;
}

}  // namespace topofit::decision
