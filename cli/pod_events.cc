#include "cli/pod_events.h"

#include "absl/strings/str_cat.h"
#include "cli/ledger_flags.h"

namespace topofit::cli {

absl::StatusOr<PodEvents> StartPodEvents(const std::string& kubeconfig, server::MetricsRegistry& registry,
                                         const server::Clock& clock, spdlog::logger& log) {
  kubeclient::RestOptions rest_options;
  rest_options.user_agent = "topofit/events";
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(kubeconfig, rest_options);
  if (!rest.ok()) return absl::Status(rest.status().code(), absl::StrCat("events client: ", rest.status().message()));
  server::Counter& written = registry.AddCounter("topofit_pod_events_written_total",
                                                 "Kubernetes Events on pods written, by write (create, patch)", {"write"});
  server::Counter& dropped = registry.AddCounter(
      "topofit_pod_events_dropped_total",
      "Kubernetes Events on pods dropped, by reason (queue-full, write-failed)", {"reason"});
  PodEvents events;
  events.rest = *std::move(rest);
  kubeclient::PodEventOptions options;
  options.reporting_instance = kubeclient::DefaultReportingInstance();
  events.recorder = std::make_unique<kubeclient::PodEventRecorder>(
      *events.rest, clock, log, options,
      kubeclient::PodEventHooks{
          .on_written = [&written](absl::string_view write) { written.Inc({std::string(write)}); },
          .on_dropped = [&dropped](absl::string_view why) { dropped.Inc({std::string(why)}); }});
  return events;
}

}  // namespace topofit::cli
