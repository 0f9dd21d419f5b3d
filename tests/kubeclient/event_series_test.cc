#include "kubeclient/event_series.h"

#include <catch2/catch.hpp>

namespace topofit::kubeclient {
namespace {

using history::PodEvent;
using history::PodEventKind;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

PodEvent Refused(const std::string& name = "trainer") {
  return PodEvent{PodEventKind::kRefusedForTopology, "ml", name, "uid-" + name, "g5-1: needs links of NV or better"};
}

TEST_CASE("An Event is the events.k8s.io/v1 object client-go's recorder makes", "[event_series]") {
  const nlohmann::json event = EventObject(Refused(), "topofit-host", kStart + absl::Microseconds(250));
  CHECK(event["apiVersion"] == "events.k8s.io/v1");
  CHECK(event["kind"] == "Event");
  // "<regarding name>.<UnixNano in hex>": 1700000000000250000 = 0x17979cfe362dd090.
  CHECK(event["metadata"]["name"] == "trainer.17979cfe362dd090");
  CHECK(event["metadata"]["namespace"] == "ml");
  CHECK(event["eventTime"] == "2023-11-14T22:13:20.000250Z");
  CHECK(event["reportingController"] == "topofit");
  CHECK(event["reportingInstance"] == "topofit-host");
  CHECK(event["type"] == "Warning");
  CHECK(event["reason"] == "RefusedForTopology");
  CHECK(event["action"] == "Filter");
  CHECK(event["note"] == "g5-1: needs links of NV or better");
  CHECK(event["regarding"] ==
        nlohmann::json({{"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", "ml"}, {"name", "trainer"}, {"uid", "uid-trainer"}}));
  CHECK_FALSE(event.contains("series"));
  CHECK(EventPath("ml", "trainer.1") == "/apis/events.k8s.io/v1/namespaces/ml/events/trainer.1");
}

TEST_CASE("Repeats become a series: created, patched at the second, counted after, finished after 6 minutes",
          "[event_series]") {
  EventSeriesCache cache("topofit-host");
  const std::optional<EventWrite> first = cache.Observe(Refused(), kStart);
  REQUIRE(first);
  CHECK_FALSE(first->series);

  const std::optional<EventWrite> second = cache.Observe(Refused(), kStart + absl::Seconds(10));
  REQUIRE(second);
  CHECK(second->series);
  CHECK(second->event["metadata"]["name"] == first->event["metadata"]["name"]);  // the same object, patched
  CHECK(second->event["series"] == nlohmann::json({{"count", 2}, {"lastObservedTime", "2023-11-14T22:13:30.000000Z"}}));

  CHECK_FALSE(cache.Observe(Refused(), kStart + absl::Seconds(20)));  // counted only
  CHECK_FALSE(cache.Observe(Refused(), kStart + absl::Seconds(30)));
  CHECK(cache.Tick(kStart + absl::Minutes(6)).empty());  // observed 5.5 minutes ago: still going

  // 6 minutes after the last observation: the final count written, the series forgotten.
  const std::vector<EventWrite> finished = cache.Tick(kStart + absl::Seconds(30) + absl::Minutes(6));
  REQUIRE(finished.size() == 1);
  CHECK(finished[0].series);
  CHECK(finished[0].event["series"]["count"] == 4);
  CHECK(finished[0].event["series"]["lastObservedTime"] == "2023-11-14T22:13:50.000000Z");
  CHECK(cache.size() == 0);

  // The next occurrence starts afresh.
  const std::optional<EventWrite> again = cache.Observe(Refused(), kStart + absl::Minutes(10));
  REQUIRE(again);
  CHECK_FALSE(again->series);
}

TEST_CASE("Events differing in kind or pod are separate, the note is not part of the key", "[event_series]") {
  EventSeriesCache cache("topofit-host");
  REQUIRE(cache.Observe(Refused("a"), kStart));
  REQUIRE(cache.Observe(Refused("b"), kStart));
  PodEvent asked = Refused("a");
  asked.kind = PodEventKind::kCapacityRequested;
  REQUIRE(cache.Observe(asked, kStart));
  CHECK(cache.size() == 3);
  PodEvent reworded = Refused("a");
  reworded.note = "another best set";
  const std::optional<EventWrite> repeat = cache.Observe(reworded, kStart + absl::Seconds(1));
  REQUIRE(repeat);
  CHECK(repeat->series);
  CHECK(repeat->event["note"] == "g5-1: needs links of NV or better");  // the first note stays, as in client-go
}

TEST_CASE("A single Event is forgotten after 6 minutes without a write, a long series is refreshed every 30",
          "[event_series]") {
  EventSeriesCache cache("topofit-host");
  REQUIRE(cache.Observe(Refused("single"), kStart));
  CHECK(cache.Tick(kStart + absl::Minutes(6)).empty());
  CHECK(cache.size() == 0);

  // Observed every 5 minutes for 40 minutes: patched at the second, then once when 30 minutes passed.
  int written = 0;
  for (int minute = 0; minute <= 40; minute += 5) {
    const absl::Time now = kStart + absl::Minutes(minute);
    written += cache.Observe(Refused("busy"), now) ? 1 : 0;
    written += static_cast<int>(cache.Tick(now).size());
  }
  // Created at 0, patched at 5 (count 2), heartbeat at 35 (30 minutes after the patch).
  CHECK(written == 3);
}

TEST_CASE("Past its cap the cache forgets the entry observed longest ago", "[event_series]") {
  EventSeriesCache cache("topofit-host", 2);
  REQUIRE(cache.Observe(Refused("a"), kStart));
  REQUIRE(cache.Observe(Refused("b"), kStart + absl::Seconds(1)));
  REQUIRE(cache.Observe(Refused("c"), kStart + absl::Seconds(2)));
  CHECK(cache.size() == 2);
  const std::optional<EventWrite> a = cache.Observe(Refused("a"), kStart + absl::Seconds(3));  // forgotten: created anew
  REQUIRE(a);
  CHECK_FALSE(a->series);
}

}  // namespace
}  // namespace topofit::kubeclient
