#include "kubeclient/headroom_reconciler.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "kubeclient/capacity_buffers.h"
#include "server/logging.h"

namespace topofit::kubeclient {

HeadroomReconciler::HeadroomReconciler(const HeadroomDemand& demand, HeadroomWriter& writer,
                                       decision::HeadroomConfig config, server::MetricsRegistry& registry,
                                       spdlog::logger& log, history::DecisionRecorder* recorder,
                                       std::string mechanism)
    : demand_(demand),
      writer_(writer),
      planner_(std::move(config)),
      log_(log),
      recorder_(recorder),
      mechanism_(std::move(mechanism)),
      replicas_(registry.AddGauge("topofit_headroom_replicas",
                                  "Pods of each shape topofit keeps warm capacity for (its CapacityBuffer's or "
                                  "placeholder Deployment's replicas)",
                                  {"shape"})),
      gpus_(registry.AddGauge("topofit_headroom_gpus", "GPUs topofit keeps warm over every shape")),
      write_failures_(registry.AddCounter("topofit_headroom_write_failures_total",
                                          "Passes whose CapacityBuffer or placeholder writes failed")) {}

void HeadroomReconciler::Report(absl::Time now, const decision::HeadroomShape& shape, int replicas, int was,
                                int target) {
  const std::vector<int> rises = planner_.RisesOf(shape);
  history::HeadroomDetail detail{.shape = HeadroomObjectName(shape),
                                 .replicas = replicas,
                                 .was = was,
                                 .target = target,
                                 .fill_rate = planner_.config().quantile,
                                 .boot_seconds = absl::ToInt64Seconds(planner_.Boot()),
                                 .rises = static_cast<int>(rises.size()),
                                 .largest_rise = rises.empty() ? 0 : rises.back(),
                                 .mechanism = mechanism_};
  server::LogEvent(log_, "headroom",
                   {{"shape", detail.shape},
                    {"replicas", replicas},
                    {"was", was},
                    {"target", target},
                    {"boot_seconds", detail.boot_seconds},
                    {"largest_rise", detail.largest_rise}});
  if (recorder_ == nullptr) return;
  history::Record record;
  record.time = now;
  record.component = history::Component::kHeadroom;
  record.kind = history::Kind::kHeadroom;
  record.reason = replicas > was ? history::Reason::kHeadroomGrew : history::Reason::kHeadroomShrank;
  record.gpus = replicas * shape.gpus;
  record.headroom = std::move(detail);
  recorder_->Record(std::move(record));
}

void HeadroomReconciler::Follow(absl::Time now) {
  planner_.ObserveLive(now, demand_.Live());
  // Planned as the leader plans (same pods, same rules), so that the hysteresis is where the leader's is when
  // this replica takes over; the leader reports the changes.
  planned_ = planner_.Plan(now);
  writer_.Forget();
}

absl::Status HeadroomReconciler::Reconcile(absl::Time now) {
  planner_.ObserveLive(now, demand_.Live());
  std::map<decision::HeadroomShape, int> plan = planner_.Plan(now);
  std::set<decision::HeadroomShape> shapes;
  for (const auto& [shape, replicas] : plan) shapes.insert(shape);
  for (const auto& [shape, replicas] : planned_) shapes.insert(shape);
  const std::map<decision::HeadroomShape, int>& targets = planner_.last_targets();
  std::map<decision::HeadroomShape, HeadroomWant> wanted;
  int gpus = 0;
  for (const decision::HeadroomShape& shape : shapes) {
    const auto planned = plan.find(shape);
    const int replicas = planned == plan.end() ? 0 : planned->second;
    const auto before = planned_.find(shape);
    const int was = before == planned_.end() ? 0 : before->second;
    if (replicas != was) {
      const auto target = targets.find(shape);
      Report(now, shape, replicas, was, target == targets.end() ? 0 : target->second);
    }
    replicas_.Set(replicas, {HeadroomObjectName(shape)});
    gpus += replicas * shape.gpus;
    if (replicas == 0) continue;
    std::optional<nlohmann::json> exemplar = demand_.Exemplar(shape);
    if (!exemplar) continue;  // a shape is planned only from pods seen, whose exemplar is kept
    wanted[shape] = HeadroomWant{replicas, *std::move(exemplar)};
  }
  gpus_.Set(gpus);
  planned_ = std::move(plan);
  absl::Status written = writer_.Apply(wanted);
  if (!written.ok()) {
    write_failures_.Inc();
    server::LogEvent(log_, "headroom_write_failed", {{"error", written.ToString()}}, spdlog::level::warn);
  }
  return written;
}

}  // namespace topofit::kubeclient
