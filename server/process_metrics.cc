#include "server/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace topofit::server {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The system's boot time (/proc/stat's btime), in seconds since the epoch; 0 when unreadable.
uint64_t BootTimeSeconds() {
  std::istringstream lines(ReadFile("/proc/stat"));
  for (std::string line; std::getline(lines, line);) {
    uint64_t seconds = 0;
    if (line.rfind("btime ", 0) == 0 && absl::SimpleAtoi(line.substr(6), &seconds)) return seconds;
  }
  return 0;
}

int64_t OpenFds() {
  std::error_code error;
  int64_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    ++n;
  }
  return n;
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(absl::string_view stat) {
  const size_t comm_end = stat.rfind(')');
  if (comm_end == absl::string_view::npos) return absl::InvalidArgumentError("no command name in /proc stat");
  // After ")": field 3 (state) is the first; utime is field 14, stime 15, starttime 22, vsize 23, rss 24.
  const std::vector<absl::string_view> fields = absl::StrSplit(stat.substr(comm_end + 1), ' ', absl::SkipEmpty());
  constexpr size_t kFirst = 3;
  const auto field = [&](size_t n) { return n - kFirst < fields.size() ? fields[n - kFirst] : absl::string_view(); };
  ProcStat out;
  if (!absl::SimpleAtoi(field(14), &out.utime_ticks) || !absl::SimpleAtoi(field(15), &out.stime_ticks) ||
      !absl::SimpleAtoi(field(22), &out.start_ticks) || !absl::SimpleAtoi(field(23), &out.vsize_bytes) ||
      !absl::SimpleAtoi(field(24), &out.rss_pages)) {
    return absl::InvalidArgumentError("a /proc stat field is missing or not a number");
  }
  return out;
}

void RegisterProcessMetrics(MetricsRegistry& registry) {
  Counter& cpu = registry.AddCounter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
  Gauge& resident = registry.AddGauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  Gauge& virtual_memory = registry.AddGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.");
  Gauge& open_fds = registry.AddGauge("process_open_fds", "Number of open file descriptors.");
  Gauge& max_fds = registry.AddGauge("process_max_fds", "Maximum number of open file descriptors.");
  Gauge& start_time = registry.AddGauge("process_start_time_seconds",
                                        "Start time of the process since unix epoch in seconds.");
  const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page_bytes = static_cast<double>(sysconf(_SC_PAGESIZE));
  const uint64_t boot = BootTimeSeconds();
  // The counter only grows: each scrape adds the CPU time used since the one before.
  auto counted = std::make_shared<std::atomic<uint64_t>>(0);
  registry.OnRender([cpu = &cpu, resident = &resident, virtual_memory = &virtual_memory, open_fds = &open_fds,
                     max_fds = &max_fds, start_time = &start_time, counted, ticks_per_second, page_bytes, boot] {
    const absl::StatusOr<ProcStat> stat = ParseProcStat(ReadFile("/proc/self/stat"));
    if (stat.ok()) {
      const uint64_t ticks = stat->utime_ticks + stat->stime_ticks;
      const uint64_t before = counted->exchange(ticks);
      if (ticks > before) cpu->Inc({}, static_cast<double>(ticks - before) / ticks_per_second);
      resident->Set(static_cast<double>(stat->rss_pages) * page_bytes);
      virtual_memory->Set(static_cast<double>(stat->vsize_bytes));
      if (boot > 0) start_time->Set(static_cast<double>(boot) + static_cast<double>(stat->start_ticks) / ticks_per_second);
    }
    open_fds->Set(static_cast<double>(OpenFds()));
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) max_fds->Set(static_cast<double>(limit.rlim_cur));
  });
}

}  // namespace topofit::server
