#pragma once

// What a topofit process tells of its dealings with the API server, declared once: metrics for every API
// client, list-watch, ledger write and leader election of the process, and their failures logged once per
// change (server/condition_log.h) instead of on every retry.
//
//   topofit_kube_api_requests_total{client,verb,code}  every attempt; code is the HTTP status, "none" when no
//                                                      reply came (refused, reset, timed out)
//   topofit_watch_synced{resource}                     1 once the collection has been listed
//   topofit_watch_healthy{resource}                    0 from a failed LIST or WATCH to the next success
//   topofit_watch_lists_total{resource,kind}           complete LISTs, kind initial or relist (after 410 Gone,
//                                                      or after the watch could not resume)
//   topofit_watch_failures_total{resource}             failed LISTs and WATCHes
//   topofit_ledger_writes_total{result}                the ledger's annotation patches (--ledger=api): ok,
//                                                      failed (retried), pod_gone
//   topofit_leader_election_master_status{name}        1 while this replica holds the Lease (client-go's
//                                                      leader_election_master_status)
//
// Logs: kube_api_failing / kube_api_recovered per client, watch_failing / watch_recovered per resource,
// watch_relisted, leader_election_failing / leader_election_recovered (API errors, not another replica
// holding the Lease), leader_elected / leader_lost.

#include <deque>
#include <memory>
#include <string>

#include "kubeclient/api_ledger.h"
#include "kubeclient/leader_election.h"
#include "kubeclient/list_watcher.h"
#include "kubeclient/rest_client.h"
#include "server/clock.h"
#include "server/condition_log.h"
#include "server/metrics.h"
#include "spdlog/logger.h"

namespace topofit::cli {

class KubeObservability {
 public:
  // `registry` and `clock` must outlive this object.
  KubeObservability(server::MetricsRegistry& registry, const server::Clock& clock,
                    std::shared_ptr<spdlog::logger> log);
  KubeObservability(const KubeObservability&) = delete;
  KubeObservability& operator=(const KubeObservability&) = delete;

  // Each sets the hooks of the options it is given; this object must outlive what is built from them.
  void Observe(kubeclient::RestOptions& options, const std::string& client);
  void Observe(kubeclient::ListWatchOptions& options, const std::string& resource);
  void Observe(kubeclient::ApiLedgerOptions& options);
  // Keeps the config's own on_started_leading / on_stopped_leading and calls them after its own.
  void Observe(kubeclient::LeaderElectionConfig& config);

 private:
  server::ConditionLog& NewConditionLog(std::string event, server::LogFields subject);

  const server::Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
  server::Counter& api_requests_;
  server::Gauge& watch_synced_;
  server::Gauge& watch_healthy_;
  server::Counter& watch_lists_;
  server::Counter& watch_failures_;
  server::Counter& ledger_writes_;
  server::Gauge& leader_;
  std::deque<server::ConditionLog> condition_logs_;  // a deque: the hooks keep references
};

}  // namespace topofit::cli
