#include "server/metrics.h"

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

namespace topofit::server {
namespace {

TEST_CASE("Counter renders HELP, TYPE and one line per label values, sorted", "[metrics]") {
  MetricsRegistry registry;
  Counter& requests = registry.AddCounter("topofit_requests_total", "Requests.", {"route", "code"});
  requests.Inc({"/prioritize", "200"});
  requests.Inc({"/filter", "500"});
  requests.Inc({"/filter", "200"}, 2);
  requests.Inc({"/filter", "200"});

  // Sorted by label values: ("/filter","200") < ("/filter","500") < ("/prioritize","200").
  CHECK(registry.Render() ==
        "# HELP topofit_requests_total Requests.\n"
        "# TYPE topofit_requests_total counter\n"
        "topofit_requests_total{route=\"/filter\",code=\"200\"} 3\n"
        "topofit_requests_total{route=\"/filter\",code=\"500\"} 1\n"
        "topofit_requests_total{route=\"/prioritize\",code=\"200\"} 1\n");
  CHECK(requests.Value({"/filter", "200"}) == 3);
  CHECK(requests.Value({"/bind", "200"}) == 0);
}

TEST_CASE("Gauge sets and adds, an unlabeled metric shows 0 before any update", "[metrics]") {
  MetricsRegistry registry;
  Gauge& ready = registry.AddGauge("topofit_ready", "1 when ready.");
  Gauge& free_gpus = registry.AddGauge("topofit_free_gpus", "Free GPUs.", {"node"});
  CHECK(registry.Render() ==
        "# HELP topofit_ready 1 when ready.\n"
        "# TYPE topofit_ready gauge\n"
        "topofit_ready 0\n"
        "# HELP topofit_free_gpus Free GPUs.\n"
        "# TYPE topofit_free_gpus gauge\n");

  ready.Set(1);
  free_gpus.Set(8, {"n1"});
  free_gpus.Add(-2.5, {"n1"});
  CHECK(registry.Render() ==
        "# HELP topofit_ready 1 when ready.\n"
        "# TYPE topofit_ready gauge\n"
        "topofit_ready 1\n"
        "# HELP topofit_free_gpus Free GPUs.\n"
        "# TYPE topofit_free_gpus gauge\n"
        "topofit_free_gpus{node=\"n1\"} 5.5\n");
}

TEST_CASE("Histogram renders cumulative buckets, +Inf, _sum and _count", "[metrics]") {
  MetricsRegistry registry;
  Histogram& latency = registry.AddHistogram("topofit_latency_seconds", "Latency.", {0.005, 0.1, 1}, {"route"});
  latency.Observe(0.005, {"/filter"});  // on a bound: counts in le="0.005" (bounds are inclusive)
  latency.Observe(0.05, {"/filter"});   // le="0.1"
  latency.Observe(0.25, {"/filter"});   // le="1"
  latency.Observe(4, {"/filter"});      // only +Inf

  // Cumulative: 1, 1+1=2, 2+1=3, 3+1=4. Sum 0.005+0.05+0.25+4 = 4.305.
  CHECK(registry.Render() ==
        "# HELP topofit_latency_seconds Latency.\n"
        "# TYPE topofit_latency_seconds histogram\n"
        "topofit_latency_seconds_bucket{route=\"/filter\",le=\"0.005\"} 1\n"
        "topofit_latency_seconds_bucket{route=\"/filter\",le=\"0.1\"} 2\n"
        "topofit_latency_seconds_bucket{route=\"/filter\",le=\"1\"} 3\n"
        "topofit_latency_seconds_bucket{route=\"/filter\",le=\"+Inf\"} 4\n"
        "topofit_latency_seconds_sum{route=\"/filter\"} 4.305\n"
        "topofit_latency_seconds_count{route=\"/filter\"} 4\n");
  CHECK(latency.Count({"/filter"}) == 4);
}

TEST_CASE("Unlabeled histogram renders zeros before the first observation", "[metrics]") {
  MetricsRegistry registry;
  registry.AddHistogram("h", "H.", {1, 2.5});
  CHECK(registry.Render() ==
        "# HELP h H.\n"
        "# TYPE h histogram\n"
        "h_bucket{le=\"1\"} 0\n"
        "h_bucket{le=\"2.5\"} 0\n"
        "h_bucket{le=\"+Inf\"} 0\n"
        "h_sum 0\n"
        "h_count 0\n");
}

TEST_CASE("Label values escape backslash, quote and newline, HELP escapes backslash and newline", "[metrics]") {
  MetricsRegistry registry;
  Counter& c = registry.AddCounter("c_total", "Line one\nback\\slash \"quoted\".", {"v"});
  c.Inc({"a\\b\"c\nd"});
  CHECK(registry.Render() ==
        "# HELP c_total Line one\\nback\\\\slash \"quoted\".\n"
        "# TYPE c_total counter\n"
        "c_total{v=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST_CASE("Families render in registration order, re-registering returns the same family", "[metrics]") {
  MetricsRegistry registry;
  Counter& b = registry.AddCounter("b_total", "B.");
  registry.AddCounter("a_total", "A.");
  Counter& b_again = registry.AddCounter("b_total", "B.");
  CHECK(&b == &b_again);
  b_again.Inc();
  CHECK(registry.Render() ==
        "# HELP b_total B.\n# TYPE b_total counter\nb_total 1\n"
        "# HELP a_total A.\n# TYPE a_total counter\na_total 0\n");
}

TEST_CASE("Concurrent updates are all counted", "[metrics]") {
  MetricsRegistry registry;
  Counter& c = registry.AddCounter("c_total", "C.", {"t"});
  Histogram& h = registry.AddHistogram("h", "H.", {1});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.Inc({t % 2 == 0 ? "even" : "odd"});
        h.Observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(c.Value({"even"}) == 20000);
  CHECK(c.Value({"odd"}) == 20000);
  CHECK(h.Count() == 40000);
  CHECK(h.Sum() == 20000);  // 40000 * 0.5, exact in binary
}

}  // namespace
}  // namespace topofit::server
