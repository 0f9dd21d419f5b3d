#include "cli/kube_observability.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/logging.h"

namespace topofit::cli {

KubeObservability::KubeObservability(server::MetricsRegistry& registry, const server::Clock& clock,
                                     std::shared_ptr<spdlog::logger> log)
    : clock_(clock),
      log_(std::move(log)),
      api_requests_(registry.AddCounter("topofit_kube_api_requests_total",
                                        "Attempts of requests to the Kubernetes API, by client, verb and HTTP status "
                                        "(none: no reply).",
                                        {"client", "verb", "code"})),
      watch_synced_(registry.AddGauge("topofit_watch_synced", "1 once the watched collection has been listed.",
                                      {"resource"})),
      watch_healthy_(registry.AddGauge("topofit_watch_healthy",
                                       "0 from a failed LIST or WATCH until the next success, else 1.", {"resource"})),
      watch_lists_(registry.AddCounter("topofit_watch_lists_total",
                                       "Complete LISTs of a watched collection: initial, or relist.",
                                       {"resource", "kind"})),
      watch_failures_(registry.AddCounter("topofit_watch_failures_total", "Failed LISTs and WATCHes.", {"resource"})),
      ledger_writes_(registry.AddCounter("topofit_ledger_writes_total",
                                         "Annotation patches of the ledger in the API (ok, failed: retried, "
                                         "pod_gone).",
                                         {"result"})),
      leader_(registry.AddGauge("topofit_leader_election_master_status",
                                "1 while this replica holds the Lease, else 0.", {"name"})) {}

server::ConditionLog& KubeObservability::NewConditionLog(std::string event, server::LogFields subject) {
  return condition_logs_.emplace_back(*log_, clock_, std::move(event), std::move(subject));
}

void KubeObservability::Observe(kubeclient::RestOptions& options, const std::string& client) {
  server::ConditionLog& condition = NewConditionLog("kube_api", {{"client", client}});
  options.on_attempt = [this, client, &condition](const kubeclient::ApiAttempt& attempt) {
    const std::string code = attempt.code == 0 ? "none" : absl::StrCat(attempt.code);
    api_requests_.Inc({client, std::string(attempt.verb), code});
    if (attempt.status.ok()) {
      condition.Succeeded();
    } else if (attempt.will_retry) {
      // The reason is the verb and the code: one line while the API server answers 503 to everything.
      condition.Failed(absl::StrCat(attempt.verb, " ", code), attempt.retry_in, attempt.status.message());
    }
  };
}

void KubeObservability::Observe(kubeclient::ListWatchOptions& options, const std::string& resource) {
  server::ConditionLog& condition = NewConditionLog("watch", {{"resource", resource}});
  watch_synced_.Set(0, {resource});
  watch_healthy_.Set(1, {resource});
  options.on_listed = [this, resource, &condition](bool relist, int64_t objects) {
    watch_synced_.Set(1, {resource});
    watch_healthy_.Set(1, {resource});
    watch_lists_.Inc({resource, relist ? "relist" : "initial"});
    condition.Succeeded();
    if (relist) server::LogEvent(*log_, "watch_relisted", {{"resource", resource}, {"objects", objects}});
  };
  options.on_failure = [this, resource, &condition](const absl::Status& failure, absl::Duration retry_in) {
    watch_healthy_.Set(0, {resource});
    watch_failures_.Inc({resource});
    condition.Failed(failure.message(), retry_in);
  };
  options.on_recovered = [this, resource, &condition] {
    watch_healthy_.Set(1, {resource});
    condition.Succeeded();
  };
}

void KubeObservability::Observe(kubeclient::ApiLedgerOptions& options) {
  options.on_publish = [this](absl::string_view result) { ledger_writes_.Inc({std::string(result)}); };
}

void KubeObservability::Observe(kubeclient::LeaderElectionConfig& config) {
  const std::string name = config.lease_name;
  const server::LogFields subject = {{"lease", absl::StrCat(config.namespace_name, "/", config.lease_name)},
                                     {"identity", config.identity}};
  leader_.Set(0, {name});
  server::ConditionLog& condition = NewConditionLog("leader_election", subject);
  config.on_started_leading = [this, name, subject, then = std::move(config.on_started_leading)] {
    leader_.Set(1, {name});
    server::LogEvent(*log_, "leader_elected", subject);
    if (then) then();
  };
  config.on_stopped_leading = [this, name, subject, then = std::move(config.on_stopped_leading)] {
    leader_.Set(0, {name});
    server::LogEvent(*log_, "leader_lost", subject, spdlog::level::warn);
    if (then) then();
  };
  config.on_round = [&condition](const absl::Status& round) {
    // Another replica holding the Lease (FailedPrecondition) or winning a race for it (Aborted, a 409) is
    // how the election works, not a failure.
    if (round.ok() || absl::IsFailedPrecondition(round) || absl::IsAborted(round)) {
      condition.Succeeded();
    } else {
      condition.Failed(absl::StatusCodeToString(round.code()), absl::ZeroDuration(), round.message());
    }
  };
}

}  // namespace topofit::cli
