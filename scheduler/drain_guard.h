#pragma once

#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/pod_demand.h"
#include "scheduler/gpu_state.h"
#include "scheduler/kube_client.h"
#include "scheduler/pod_ref.h"
#include "server/metrics.h"
#include "server/periodic.h"

namespace topofit::scheduler {

// Keeps cluster-autoscaler's scale-down from draining a node only while that would strand a pod there.
// CA's drain simulation counts GPUs and never asks the extender; a pod decision::KeepFromScaleDownDrain
// names (it got the topology it would refuse or wait for elsewhere) carries safe-to-evict "false" while no
// other busy node gives it that topology (decision::AnotherNodeGivesItsTopology), and loses it once one
// does: a drain then moves it there (kube-scheduler asks the extender where) and CA consolidates.
//
// The extender asks at bind (KeepsNow) and hands over the pods it may keep (Track); Refresh judges every
// tracked pod again on the GPU state and patches the pods whose answer changed; Start refreshes every
// `period` on a thread of its own until the object goes. Tracking lives in memory: after a restart, pods
// annotated before keep "false" until they end. topofit_drain_guard_pods{safe_to_evict} counts the pods
// tracked: "false" (kept) and "unset" (released). Thread-safe.
class DrainGuard {
 public:
  DrainGuard(const GpuState& state, KubeClient& kube, spdlog::logger& log, server::MetricsRegistry& registry);
  DrainGuard(const DrainGuard&) = delete;
  DrainGuard& operator=(const DrainGuard&) = delete;

  // Whether a pod of `demand` that KeepFromScaleDownDrain names, bound to `node`, is kept now: no other
  // node gives it its topology.
  bool KeepsNow(const decision::GpuDemand& demand, absl::string_view node) const;
  // `pod`, bound to `node`, is the guard's to keep or release from now on; `kept`: its bind wrote "false".
  void Track(const PodRef& pod, std::string node, decision::GpuDemand demand, bool kept);
  // A pod whose GPUs come from ResourceClaims, bound to `node` with the topology ask `demand` (DemandOf: its
  // annotations): the DRA plugin allocated its devices, which the state shows under its claims' `holders`
  // (ClaimHolderUid) once the claim watch has them. The first Refresh that sees them all on `node` judges
  // the set they make as a bind judges a device-plugin pod's (KeepFromScaleDownDrain), then keeps or
  // releases the pod as any other; a pod whose claims are not seen within kClaimRefreshes refreshes, or go,
  // is forgotten.
  void TrackClaims(const PodRef& pod, std::string node, decision::GpuDemand demand, std::vector<std::string> holders);
  static constexpr int kClaimRefreshes = 20;
  // Judges every tracked pod again; forgets the pods no longer bound where they were.
  void Refresh();
  void Start(absl::Duration period);

 private:
  struct Tracked {
    PodRef pod;
    std::string node;
    decision::GpuDemand demand;
    bool kept = false;
    // A claim pod's (TrackClaims): what its GPUs are held under, whether its set was judged yet, and how
    // many refreshes did not see them.
    std::vector<std::string> holders;
    bool judged = true;
    int unseen = 0;
  };
  // The GPUs `pod` holds on its node now: its own assignment, or its claims' together; nullopt when they are
  // not (all) there.
  std::optional<topology::GpuSet> HeldNow(const Tracked& pod) const;

  // The GPU state's Ready nodes at one moment (the snapshots kept alive while the pointers are used).
  struct ReadyNodes {
    explicit ReadyNodes(const GpuState& state);
    std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> snapshots;
    std::vector<const decision::NodeGpuSnapshot*> nodes;
  };

  // Sets the gauge from tracked_; called with mu_ held (or before any other thread can see this).
  void PublishLocked();

  const GpuState& state_;
  KubeClient& kube_;
  spdlog::logger& log_;
  server::Gauge& pods_;
  mutable std::mutex mu_;
  std::map<std::string, Tracked> tracked_;  // by pod uid, under mu_
  std::unique_ptr<server::Periodic> refresher_;  // last: stopped before the rest goes
};

}  // namespace topofit::scheduler
