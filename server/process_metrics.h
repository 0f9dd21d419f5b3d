#pragma once

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "server/metrics.h"

namespace topofit::server {

// The process_* metrics every Prometheus client library exports (client_golang's process collector), so
// the dashboards and alerts written for any Kubernetes component work on topofit's processes too:
// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds and process_start_time_seconds, read from /proc when scraped.
void RegisterProcessMetrics(MetricsRegistry& registry);

// What /proc/<pid>/stat says of a process (proc(5)): CPU time in clock ticks, start time in ticks after
// boot, virtual size in bytes, resident set in pages.
struct ProcStat {
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  uint64_t start_ticks = 0;
  uint64_t vsize_bytes = 0;
  int64_t rss_pages = 0;
};
// Parses the file's one line; the command name (field 2) may hold spaces and parentheses, so the fields
// are counted after its last ')'.
absl::StatusOr<ProcStat> ParseProcStat(absl::string_view stat);

}  // namespace topofit::server
