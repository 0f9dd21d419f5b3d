#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "cli/decision_history.h"
#include "cli/kube_observability.h"
#include "cli/pod_events.h"
#include "history/recorder.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/list_watcher.h"
#include "kubeclient/rest_client.h"
#include "ledger/ledger.h"
#include "server/clock.h"
#include "server/sampled_log.h"
#include "server/metrics.h"
#include "server/ops_endpoints.h"

namespace topofit::cli {

// What the front ends of one process share: one clock, one metrics registry, one ledger (in `topofit
// serve` the extender's preferences reach the expander, and its intents reach the extender, in memory;
// with --ledger=api, through the API, as between separate processes).
struct ProcessState {
  ProcessState();
  // The readiness of a process serving on it: "serving" while `serving` holds (set once the servers
  // listen, cleared at shutdown), and "ledger-sync": with --ledger=api, once the pending pods have been
  // listed.
  server::ReadinessChecks ReadinessChecks(const std::atomic<bool>& serving) const;

  const server::RealClock clock;  // the real clock, constructed here once and injected from here
  server::MetricsRegistry registry;
  // Metrics and condition logs of every API client, watch, ledger write and election of the process.
  KubeObservability kube_observability;
  // A ledger at its cap evicts on every new entry: logged at most once a minute with the count (either
  // kind; the metric counts each).
  server::SampledLog eviction_log;
  // Both ledgers' caps; evictions counted (topofit_ledger_evicted_total{kind}) and logged.
  const ledger::LedgerLimits ledger_limits;
  // --ledger=api (UseLedger): the ledger's client, declared before the ledger that publishes through it.
  std::unique_ptr<kubeclient::RestClient> ledger_rest;
  std::unique_ptr<kubeclient::KubeApi> ledger_kube;
  std::unique_ptr<ledger::Ledger> ledger;
  std::unique_ptr<kubeclient::ListWatcher> ledger_watch;  // feeds the ledger: declared after it, stopped first
  // What the front ends record their decisions to (OpenDecisionHistory); empty: nothing is recorded.
  DecisionHistory decisions;
  // With an API server (UsePodEvents): the Events on pods, shown each record before it is stored.
  PodEvents pod_events;
  std::unique_ptr<history::ObservedRecorder> observed;
  // Where the front ends hand their decisions: the history, and the pod Events once they are on.
  history::DecisionRecorder* recorder() const {
    return observed != nullptr ? static_cast<history::DecisionRecorder*>(observed.get()) : decisions.recorder.get();
  }
};

// "" once `watcher` has listed; else "<what> not listed yet", with the last error if there was one: a
// readiness check's failure.
std::string NotListedYet(const kubeclient::ListWatcher& watcher, absl::string_view what);

// `status` with its message after "<what>: ", the flag or part that failed.
absl::Status Prefixed(absl::string_view what, const absl::Status& status);

}  // namespace topofit::cli
