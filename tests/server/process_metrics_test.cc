#include "server/process_metrics.h"

#include <catch2/catch.hpp>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace topofit::server {
namespace {

// The value of an unlabelled sample `name` in the exposition `text`; -1 when absent.
double Sample(const std::string& text, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, name + " ")) {
      double value = 0;
      if (absl::SimpleAtod(line, &value)) return value;
    }
  }
  return -1;
}

TEST_CASE("ParseProcStat counts fields after the command name, whatever it holds", "[metrics][process]") {
  // A line of proc(5)'s format whose command holds a space and a ')'.
  const std::string stat =
      "4242 (topofit (x) y) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 75 0 0 20 0 9 0 123456 1073741824 5120 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
  const absl::StatusOr<ProcStat> parsed = ParseProcStat(stat);
  REQUIRE(parsed.ok());
  CHECK(parsed->utime_ticks == 250);
  CHECK(parsed->stime_ticks == 75);
  CHECK(parsed->start_ticks == 123456);
  CHECK(parsed->vsize_bytes == 1073741824);
  CHECK(parsed->rss_pages == 5120);
  CHECK_FALSE(ParseProcStat("4242 topofit S 1").ok());     // no command name
  CHECK_FALSE(ParseProcStat("4242 (topofit) S 1 2").ok());  // too short
}

TEST_CASE("process_* metrics are read from /proc when scraped, the CPU counter only growing", "[metrics][process]") {
  MetricsRegistry registry;
  RegisterProcessMetrics(registry);
  const std::string first = registry.Render();
  CHECK_THAT(first, Catch::Contains("# TYPE process_cpu_seconds_total counter"));
  CHECK(Sample(first, "process_resident_memory_bytes") > 1 << 20);  // a test binary holds more than a MiB
  CHECK(Sample(first, "process_virtual_memory_bytes") >= Sample(first, "process_resident_memory_bytes"));
  CHECK(Sample(first, "process_open_fds") >= 3);  // stdin, stdout, stderr at least
  CHECK(Sample(first, "process_max_fds") >= Sample(first, "process_open_fds"));
  CHECK(Sample(first, "process_start_time_seconds") > 1.5e9);  // after 2017: a real epoch time
  volatile double sink = 0;
  for (int i = 0; i < 20'000'000; ++i) sink = sink + i;  // some CPU time between two scrapes
  const std::string second = registry.Render();
  CHECK(Sample(second, "process_cpu_seconds_total") >= Sample(first, "process_cpu_seconds_total"));
  CHECK(Sample(second, "process_start_time_seconds") == Sample(first, "process_start_time_seconds"));
}

}  // namespace
}  // namespace topofit::server
