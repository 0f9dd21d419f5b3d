#include "cli/process_state.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "cli/build_info.h"
#include "server/process_metrics.h"

namespace topofit::cli {

ProcessState::ProcessState()
    : kube_observability(registry, clock, spdlog::default_logger()),
      eviction_log(*spdlog::default_logger(), clock, "ledger_evicted", spdlog::level::warn),
      ledger_limits{.on_evicted = [evicted = &registry.AddCounter("topofit_ledger_evicted_total",
                                                                   "Ledger entries evicted at the ledger's caps, "
                                                                   "by kind (preference, intent)",
                                                                   {"kind"}),
                                   log = &eviction_log](absl::string_view kind, const std::string& key) {
        evicted->Inc({std::string(kind)});
        log->Occurred({{"kind", std::string(kind)}, {"key", key}});
      }},
      ledger(ledger::NewInMemoryLedger(clock, {}, ledger_limits)) {
  RegisterBuildInfo(registry);
  server::RegisterProcessMetrics(registry);
}

server::ReadinessChecks ProcessState::ReadinessChecks(const std::atomic<bool>& serving) const {
  return {{"serving", [&serving] { return serving ? std::string() : std::string("not listening yet, or shutting down"); }},
          {"ledger-sync", [this] {
             return ledger_watch == nullptr ? std::string() : NotListedYet(*ledger_watch, "pending pods (--ledger=api)");
           }}};
}

absl::Status Prefixed(absl::string_view what, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

std::string NotListedYet(const kubeclient::ListWatcher& watcher, absl::string_view what) {
  if (watcher.synced()) return "";
  const absl::Status failure = watcher.last_failure();
  return absl::StrCat(what, " not listed yet", failure.ok() ? "" : absl::StrCat(": ", failure.message()));
}

}  // namespace topofit::cli
