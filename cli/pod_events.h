#pragma once

// Kubernetes Events on the pods topofit decides about (kubeclient/pod_event_recorder.h): on where there is
// an API server to write them to — the extender with --live-state (and `serve`), the expander with
// --ledger=api — never in the replay.

#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "absl/status/statusor.h"
#include "kubeclient/pod_event_recorder.h"
#include "kubeclient/rest_client.h"
#include "server/clock.h"
#include "server/metrics.h"

namespace topofit::cli {

struct PodEvents {
  std::unique_ptr<kubeclient::RestClient> rest;  // of its own: Events never queue ahead of a Binding
  std::unique_ptr<kubeclient::PodEventRecorder> recorder;  // after the client it writes through
};

// Starts the recorder with its metrics on `registry`: topofit_pod_events_written_total{write: create|patch}
// and topofit_pod_events_dropped_total{reason: queue-full|write-failed}.
absl::StatusOr<PodEvents> StartPodEvents(const std::string& kubeconfig, server::MetricsRegistry& registry,
                                         const server::Clock& clock, spdlog::logger& log);

}  // namespace topofit::cli
