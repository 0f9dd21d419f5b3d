#pragma once

// topofit's headroom controller, one pass at a time (docs/headroom.md): the live GPU pods of each shape go to
// the planner (decision::HeadroomPlanner), and what it wants kept warm is written as CapacityBuffers or
// placeholder Deployments (HeadroomWriter). Each change of a shape's replicas is logged with the target it
// follows; the replicas and GPUs kept warm are metrics.

#include <map>

#include <spdlog/spdlog.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "decision/headroom_plan.h"
#include "history/recorder.h"
#include "kubeclient/headroom_demand.h"
#include "kubeclient/headroom_writer.h"
#include "server/metrics.h"

namespace topofit::kubeclient {

class HeadroomReconciler {
 public:
  // Every argument must outlive the reconciler. Each change of a shape's replicas is recorded to `recorder`
  // (the decision history: `topofit explain`, GET /decisions?kind=headroom, MCP) unless it is null; `mechanism`
  // names what the writer writes, for those records.
  HeadroomReconciler(const HeadroomDemand& demand, HeadroomWriter& writer, decision::HeadroomConfig config,
                     server::MetricsRegistry& registry, spdlog::logger& log,
                     history::DecisionRecorder* recorder = nullptr, std::string mechanism = "capacity-buffers");

  // Observes the live pods at `now`, plans and writes. A failed write is returned (and counted); the plan
  // stands, and the next pass writes what is still missing.
  absl::Status Reconcile(absl::Time now);
  // Observes the live pods at `now` and plans, but writes, reports and records nothing: what a replica that
  // does not lead does (--leader-elect), so that its plan and hysteresis are the leader's when it takes over;
  // it then reads again what the leader wrote before it writes (HeadroomWriter::Forget).
  void Follow(absl::Time now);

 private:
  // Logs and records a shape's change of replicas, with the target and the rises it follows.
  void Report(absl::Time now, const decision::HeadroomShape& shape, int replicas, int was, int target);

 public:

  // The replicas planned by the last pass, by shape.
  const std::map<decision::HeadroomShape, int>& planned() const { return planned_; }

 private:
  const HeadroomDemand& demand_;
  HeadroomWriter& writer_;
  decision::HeadroomPlanner planner_;
  spdlog::logger& log_;
  history::DecisionRecorder* recorder_;
  std::string mechanism_;
  server::Gauge& replicas_;
  server::Gauge& gpus_;
  server::Counter& write_failures_;
  std::map<decision::HeadroomShape, int> planned_;
};

}  // namespace topofit::kubeclient
