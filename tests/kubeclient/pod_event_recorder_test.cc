#include "kubeclient/pod_event_recorder.h"

#include <map>
#include <string>

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "history/from_decisions.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::FakeApiServer;
using testing::StatusJson;

constexpr char kEvents[] = "/apis/events.k8s.io/v1/namespaces/ml/events";

history::Record Bound(absl::Time time) {
  return history::BindRecord(time, {"uid-trainer", "ml/trainer"}, "p4d-new", 8, "0,1,2,3,4,5,6,7", true);
}

struct Fixture {
  explicit Fixture(PodEventOptions options = Options())
      : certs(topofit::testing::TestCerts::Create().value()),
        server(*certs),
        rest(testing::DirectClientFor(server, *certs)),
        recorder(*rest, clock, log, std::move(options),
                 PodEventHooks{.on_written = [this](absl::string_view w) { Count(written, w); },
                               .on_dropped = [this](absl::string_view w) { Count(dropped, w); }}) {}
  static PodEventOptions Options() {
    PodEventOptions options;
    options.reporting_instance = "topofit-test";
    options.tick = absl::Milliseconds(5);
    return options;
  }
  void Count(std::map<std::string, int>& counts, absl::string_view what) {
    absl::MutexLock lock(&mu);
    ++counts[std::string(what)];
  }
  int Written(const std::string& what) {
    absl::MutexLock lock(&mu);
    return written[what];
  }
  int Dropped(const std::string& what) {
    absl::MutexLock lock(&mu);
    return dropped[what];
  }
  std::vector<testing::RecordedRequest> EventRequests() const {
    std::vector<testing::RecordedRequest> out;
    for (const auto& r : server.requests()) {
      if (r.target.starts_with(kEvents)) out.push_back(r);
    }
    return out;
  }

  server::FakeClock clock;
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
  absl::Mutex mu;
  std::map<std::string, int> written, dropped;
  PodEventRecorder recorder;
};

TEST_CASE("A bind becomes a GpusAssigned Event on the pod, POSTed to events.k8s.io/v1", "[pod_event_recorder]") {
  Fixture f;
  f.recorder.Observe(Bound(f.clock.Now()));
  REQUIRE(f.recorder.WaitIdle(testing::kPatience));
  const std::vector<json> stored = f.server.StoredObjects(kEvents);
  REQUIRE(stored.size() == 1);
  CHECK(stored[0]["reason"] == "GpusAssigned");
  CHECK(stored[0]["type"] == "Normal");
  CHECK(stored[0]["reportingController"] == "topofit");
  CHECK(stored[0]["reportingInstance"] == "topofit-test");
  CHECK(stored[0]["regarding"]["uid"] == "uid-trainer");
  CHECK(stored[0]["note"] == "bound to p4d-new, GPUs 0,1,2,3,4,5,6,7");
  CHECK(f.Written("create") == 1);

  // Records that are not Events write nothing.
  f.recorder.Observe(history::CapacityRecord(f.clock.Now(), history::Kind::kCapacityWithdrawn, {"uid-trainer", "ml/trainer"}));
  REQUIRE(f.recorder.WaitIdle(testing::kPatience));
  CHECK(f.EventRequests().size() == 1);
}

TEST_CASE("Repeats are one Event with a series: patched at the second, the final count when it ends",
          "[pod_event_recorder]") {
  Fixture f;
  for (int i = 0; i < 3; ++i) {
    f.recorder.Observe(Bound(f.clock.Now()));
    REQUIRE(f.recorder.WaitIdle(testing::kPatience));
    f.clock.Advance(absl::Seconds(10));
  }
  std::vector<testing::RecordedRequest> requests = f.EventRequests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "POST");
  CHECK(requests[1].method == "PATCH");
  CHECK(requests[1].Header("Content-Type") == "application/strategic-merge-patch+json");
  CHECK(json::parse(requests[1].body)["series"]["count"] == 2);

  // Nothing observed for 6 minutes: the series ends with its count, 3.
  f.clock.Advance(absl::Minutes(6));
  REQUIRE(Eventually([&] { return f.EventRequests().size() == 3; }));
  const std::vector<json> stored = f.server.StoredObjects(kEvents);
  REQUIRE(stored.size() == 1);
  CHECK(stored[0]["series"]["count"] == 3);
  // The server stores the patch before the recorder hears its answer and counts it.
  CHECK(Eventually([&] { return f.Written("patch") == 2; }));
}

TEST_CASE("A series whose Event the API server lost is created again, series and all", "[pod_event_recorder]") {
  Fixture f;
  f.recorder.Observe(Bound(f.clock.Now()));
  REQUIRE(f.recorder.WaitIdle(testing::kPatience));
  f.server.Script(404, StatusJson(404, "NotFound", "events.events.k8s.io not found"));
  f.recorder.Observe(Bound(f.clock.Now()));
  REQUIRE(f.recorder.WaitIdle(testing::kPatience));
  const std::vector<testing::RecordedRequest> requests = f.EventRequests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[1].method == "PATCH");
  CHECK(requests[2].method == "POST");
  CHECK(json::parse(requests[2].body)["series"]["count"] == 2);
}

TEST_CASE("A refused write and a full queue drop the Event and count it, decisions never wait", "[pod_event_recorder]") {
  SECTION("write refused") {
    Fixture f;
    f.server.Script(403, StatusJson(403, "Forbidden", "events.events.k8s.io is forbidden"));
    f.recorder.Observe(Bound(f.clock.Now()));
    REQUIRE(f.recorder.WaitIdle(testing::kPatience));
    CHECK(f.Dropped("write-failed") == 1);
    CHECK(f.server.StoredObjects(kEvents).empty());
  }
  SECTION("queue full") {
    PodEventOptions options = Fixture::Options();
    options.queue_capacity = 0;
    Fixture f(options);
    f.recorder.Observe(Bound(f.clock.Now()));
    CHECK(f.Dropped("queue-full") == 1);
    REQUIRE(f.recorder.WaitIdle(testing::kPatience));
    CHECK(f.EventRequests().empty());
  }
}

}  // namespace
}  // namespace topofit::kubeclient
