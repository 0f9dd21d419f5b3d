#pragma once

#include "decision/headroom_plan.h"
#include "replay/world.h"

namespace topofit::sim {

// topofit's adaptive headroom in a replay (Policy::headroom, Headroom::Sizing::kAdaptive): what its controller
// does in a cluster (docs/headroom.md) — watch the pods and the nodes' boots, plan each shape's buffer, write
// the CapacityBuffers' replicas — once per cluster-autoscaler loop, taken as instantaneous.
class HeadroomController {
 public:
  explicit HeadroomController(const decision::HeadroomConfig& config) : planner_(config) {}

  // A node became Ready `boot` after it was requested.
  void NodeBooted(SimTime boot);
  // Observes the live (pending or running) pods of every buffered shape, plans, and sets the world's buffers;
  // whether any buffer changed.
  bool Reconcile(World& world);

 private:
  decision::HeadroomPlanner planner_;
};

}  // namespace topofit::sim
