#include "kubeclient/leader_election.h"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;
using testing::DirectClientFor;
using testing::Eventually;
using testing::FakeApiServer;
using testing::StatusJson;

constexpr char kLeasePath[] = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/topofit";

LeaderElectionConfig ConfigFor(std::string identity) {
  LeaderElectionConfig config;
  config.namespace_name = "kube-system";
  config.identity = std::move(identity);
  return config;
}

// One replica: its own client of the fake API server, its elector, and what its callbacks said.
struct Replica {
  std::unique_ptr<RestClient> rest;
  std::unique_ptr<LeaderElector> elector;
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};

  LeaderElector* operator->() const { return elector.get(); }
};

struct Fixture {
  Fixture() : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {}

  // kube-scheduler's timings (15 s / 10 s / 2 s) on the fake clock, which the test moves; rounds are run
  // by the test, one at a time.
  std::unique_ptr<Replica> Stepped(const std::string& identity, bool release_on_stop = true) {
    LeaderElectionConfig config = ConfigFor(identity);
    config.clock = &clock;
    config.release_on_stop = release_on_stop;
    return Make(std::move(config));
  }

  // On the real clock with its own thread: a 1 s lease (the shortest a Lease can hold), renewed every 50 ms.
  std::unique_ptr<Replica> Running(const std::string& identity, bool release_on_stop = true) {
    LeaderElectionConfig config = ConfigFor(identity);
    config.lease_duration = absl::Seconds(1);
    config.renew_deadline = absl::Milliseconds(500);
    config.retry_period = absl::Milliseconds(50);
    config.release_on_stop = release_on_stop;
    return Make(std::move(config));
  }

  std::unique_ptr<Replica> Make(LeaderElectionConfig config) {
    auto replica = std::make_unique<Replica>();
    replica->rest = DirectClientFor(server, *certs);
    Replica* r = replica.get();
    config.on_started_leading = [r] { ++r->started; };
    config.on_stopped_leading = [r] { ++r->stopped; };
    replica->elector = LeaderElector::Create(*replica->rest, std::move(config)).value();
    return replica;
  }

  json Spec() const { return server.StoredObject(kLeasePath)["spec"]; }

  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  server::FakeClock clock{absl::FromCivil(absl::CivilSecond(2026, 11, 30, 9, 0, 0), absl::UTCTimeZone())};
};

TEST_CASE("MicroTime is written as the API server writes it", "[leader_election]") {
  const absl::Time t = absl::FromCivil(absl::CivilSecond(2026, 11, 30, 9, 0, 0), absl::UTCTimeZone());
  CHECK(FormatMicroTime(t) == "2026-11-30T09:00:00.000000Z");
  CHECK(FormatMicroTime(t + absl::Microseconds(1234567)) == "2026-11-30T09:00:01.234567Z");
}

TEST_CASE("DefaultLeaderIdentity: the hostname and a random suffix, different for two processes on one host",
          "[leader_election]") {
  char hostname[256] = {};
  REQUIRE(gethostname(hostname, sizeof(hostname) - 1) == 0);
  const std::string first = DefaultLeaderIdentity();
  CHECK(first.rfind(absl::StrCat(hostname, "_"), 0) == 0);
  CHECK(first.size() == std::strlen(hostname) + 1 + 8);  // eight hex digits
  CHECK(DefaultLeaderIdentity() != first);
}

TEST_CASE("LeaderElector::Create refuses timings that could give two leaders", "[leader_election]") {
  Fixture f;
  std::unique_ptr<RestClient> rest = DirectClientFor(f.server, *f.certs);
  struct Row {
    const char* name;
    absl::Duration lease, renew, retry;
    const char* message;
  };
  const Row rows[] = {
      {"renew deadline not under the lease", absl::Seconds(10), absl::Seconds(10), absl::Seconds(2), "shorter"},
      {"retry period with jitter past the deadline", absl::Seconds(15), absl::Seconds(2), absl::Seconds(2), "1.2"},
      {"a lease the Lease cannot hold in seconds", absl::Milliseconds(1500), absl::Seconds(1),
       absl::Milliseconds(100), "whole number"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      LeaderElectionConfig config = ConfigFor("a");
      config.lease_duration = row.lease;
      config.renew_deadline = row.renew;
      config.retry_period = row.retry;
      CHECK_STATUS(LeaderElector::Create(*rest, config), absl::StatusCode::kInvalidArgument, row.message);
    }
  }
  SECTION("no identity") {
    CHECK_STATUS(LeaderElector::Create(*rest, ConfigFor("")), absl::StatusCode::kInvalidArgument, "identity");
  }
}

TEST_CASE("The first candidate creates the Lease and leads, the second follows", "[leader_election]") {
  Fixture f;
  auto a = f.Stepped("a");
  auto b = f.Stepped("b");

  REQUIRE_OK((*a)->Round());
  CHECK((*a)->IsLeader());
  CHECK(a->started == 1);
  const json lease = f.server.StoredObject(kLeasePath);
  CHECK(lease["apiVersion"] == "coordination.k8s.io/v1");
  CHECK(lease["kind"] == "Lease");
  CHECK(lease["spec"] == json{{"holderIdentity", "a"},
                              {"leaseDurationSeconds", 15},
                              {"acquireTime", "2026-11-30T09:00:00.000000Z"},
                              {"renewTime", "2026-11-30T09:00:00.000000Z"},
                              {"leaseTransitions", 0}});

  CHECK_STATUS((*b)->Round(), absl::StatusCode::kFailedPrecondition, "held by a");
  CHECK_FALSE((*b)->IsLeader());
  CHECK((*b)->holder() == "a");
  CHECK(b->started == 0);

  SECTION("renewing moves renewTime only, with the Lease's resourceVersion as the precondition") {
    f.clock.Advance(absl::Seconds(2));
    REQUIRE_OK((*a)->Round());
    CHECK(f.Spec()["acquireTime"] == "2026-11-30T09:00:00.000000Z");
    CHECK(f.Spec()["renewTime"] == "2026-11-30T09:00:02.000000Z");
    CHECK(f.Spec()["leaseTransitions"] == 0);
    const testing::RecordedRequest put = f.server.requests().back();
    REQUIRE(put.method == "PUT");
    CHECK(put.target == kLeasePath);
    CHECK(json::parse(put.body)["metadata"]["resourceVersion"] == lease["metadata"]["resourceVersion"]);
    CHECK(a->started == 1);  // still the same term
  }
}

TEST_CASE("A released Lease is taken over in the next round", "[leader_election]") {
  Fixture f;
  auto a = f.Stepped("a");
  auto b = f.Stepped("b");
  REQUIRE_OK((*a)->Round());
  CHECK_FALSE((*b)->Round().ok());

  f.clock.Advance(absl::Seconds(1));
  REQUIRE_OK((*a)->Release());
  CHECK_FALSE((*a)->IsLeader());
  CHECK(a->stopped == 1);
  // client-go's ReleaseOnCancel: nobody holds it, and a 1 s duration for readers that ignore the holder.
  CHECK(f.Spec()["holderIdentity"] == "");
  CHECK(f.Spec()["leaseDurationSeconds"] == 1);

  REQUIRE_OK((*b)->Round());  // no waiting for the lease duration
  CHECK((*b)->IsLeader());
  CHECK(f.Spec()["holderIdentity"] == "b");
  CHECK(f.Spec()["leaseTransitions"] == 1);
  CHECK(f.Spec()["acquireTime"] == "2026-11-30T09:00:01.000000Z");
}

TEST_CASE("A leader that stops renewing loses the Lease after the lease duration the follower observed",
          "[leader_election]") {
  Fixture f;
  auto a = f.Stepped("a");
  auto b = f.Stepped("b");
  REQUIRE_OK((*a)->Round());

  f.clock.Advance(absl::Seconds(5));
  CHECK_FALSE((*b)->Round().ok());  // b sees a's record for the first time now: t = 5 s
  f.clock.Advance(absl::Seconds(5));
  CHECK_FALSE((*a)->IsLeader());  // a last renewed at 0 s; its renew deadline of 10 s has passed
  f.clock.Advance(absl::Seconds(9));
  // 19 s: a's renewTime (0 s) plus 15 s is past, but b has watched the record for 14 s only.
  CHECK_STATUS((*b)->Round(), absl::StatusCode::kFailedPrecondition, "held by a");
  f.clock.Advance(absl::Seconds(1));
  REQUIRE_OK((*b)->Round());  // 20 s: 15 s since b saw it change
  CHECK((*b)->IsLeader());
  CHECK(f.Spec()["leaseTransitions"] == 1);
  CHECK(a->stopped == 0);  // a's callbacks run only in a's rounds
  CHECK_STATUS((*a)->Round(), absl::StatusCode::kFailedPrecondition, "held by b");
  CHECK(a->stopped == 1);
}

TEST_CASE("A renewTime from a skewed clock neither expires a Lease early nor keeps it late", "[leader_election]") {
  Fixture f;
  auto b = f.Stepped("b");
  // The holder's clock is years behind: its renewTime says the Lease expired long ago.
  const json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                      {"kind", "Lease"},
                      {"metadata", {{"name", "topofit"}, {"namespace", "kube-system"}, {"resourceVersion", "7"}}},
                      {"spec",
                       {{"holderIdentity", "skewed"},
                        {"leaseDurationSeconds", 15},
                        {"acquireTime", "2001-01-01T00:00:00.000000Z"},
                        {"renewTime", "2001-01-01T00:00:00.000000Z"},
                        {"leaseTransitions", 3}}}};
  f.server.PutStoredObject(kLeasePath, lease);
  CHECK_STATUS((*b)->Round(), absl::StatusCode::kFailedPrecondition, "held by skewed");
  f.clock.Advance(absl::Seconds(14));
  CHECK_FALSE((*b)->Round().ok());
  f.clock.Advance(absl::Seconds(1));
  REQUIRE_OK((*b)->Round());
  CHECK(f.Spec()["leaseTransitions"] == 4);
}

TEST_CASE("A step of this replica's wall clock neither expires a Lease early nor keeps a leader late",
          "[leader_election]") {
  Fixture f;
  auto a = f.Stepped("a");
  auto b = f.Stepped("b");
  REQUIRE_OK((*a)->Round());
  CHECK_FALSE((*b)->Round().ok());  // b sees a's record now
  // NTP steps the wall clock an hour on: the Lease's 15 s have not passed, and a still leads.
  f.clock.Step(absl::Hours(1));
  CHECK_STATUS((*b)->Round(), absl::StatusCode::kFailedPrecondition, "held by a");
  CHECK((*a)->IsLeader());
  // And an hour back: a's renew deadline still passes on time.
  f.clock.Step(-absl::Hours(2));
  f.clock.Advance(absl::Seconds(10));
  CHECK_FALSE((*a)->IsLeader());
  f.clock.Advance(absl::Seconds(5));
  REQUIRE_OK((*b)->Round());
  CHECK((*b)->IsLeader());
}

TEST_CASE("A leader steps down when renewals fail for the renew deadline (5xx, 429)", "[leader_election]") {
  Fixture f;
  auto a = f.Stepped("a");
  auto b = f.Stepped("b");
  REQUIRE_OK((*a)->Round());
  CHECK_FALSE((*b)->Round().ok());

  for (int second = 2; second <= 10; second += 2) {
    f.clock.Advance(absl::Seconds(2));
    if (second % 4 == 0) {
      f.server.Script(429, StatusJson(429, "TooManyRequests", "too many requests"), {{"Retry-After", "1"}});
    } else {
      f.server.Script(503, StatusJson(503, "ServiceUnavailable", "etcd leader changed"));
    }
    CHECK_FALSE((*a)->Round().ok());
    INFO("at " << second << " s");
    CHECK((*a)->IsLeader() == (second < 10));  // renewed at 0 s; leads while now < 0 s + 10 s
  }
  CHECK(a->stopped == 1);

  // The API answers again. At 14 s b has not yet watched the record for 15 s; at 15 s it takes over,
  // while a, which last renewed at 0 s, has not led since 10 s.
  f.clock.Advance(absl::Seconds(4));
  CHECK_FALSE((*b)->Round().ok());
  f.clock.Advance(absl::Seconds(1));
  REQUIRE_OK((*b)->Round());
  CHECK((*b)->IsLeader());
  CHECK_FALSE((*a)->IsLeader());
  CHECK_FALSE((*a)->Round().ok());
  CHECK(a->started == 1);
}

TEST_CASE("A write that conflicts loses the round, the next round reads the winner", "[leader_election]") {
  Fixture f;
  auto a = f.Stepped("a");
  auto b = f.Stepped("b");

  SECTION("update: a renews between b's read of the released Lease and b's write (409 Conflict)") {
    REQUIRE_OK((*a)->Round());
    REQUIRE_OK((*a)->Release());
    f.clock.Advance(absl::Seconds(1));
    f.server.BeforeNext("PUT", [&] { REQUIRE_OK((*a)->Round()); });
    CHECK_STATUS((*b)->Round(), absl::StatusCode::kAborted, "the object has been modified");
    CHECK((*a)->IsLeader());
    CHECK_FALSE((*b)->IsLeader());
  }
  SECTION("create: a creates the Lease between b's 404 and b's POST (409 AlreadyExists)") {
    f.server.BeforeNext("POST", [&] { REQUIRE_OK((*a)->Round()); });
    CHECK_STATUS((*b)->Round(), absl::StatusCode::kAlreadyExists, "already exists");
    CHECK((*a)->IsLeader());
    CHECK_FALSE((*b)->IsLeader());
  }
  CHECK(b->started == 0);
  CHECK_STATUS((*b)->Round(), absl::StatusCode::kFailedPrecondition, "held by a");
  CHECK(f.Spec()["holderIdentity"] == "a");
}

TEST_CASE("A restarted replica with the same identity renews its own Lease at once", "[leader_election]") {
  Fixture f;
  auto a = f.Stepped("a", /*release_on_stop=*/false);
  REQUIRE_OK((*a)->Round());
  a.reset();  // a crash: nothing released

  f.clock.Advance(absl::Seconds(3));
  auto restarted = f.Stepped("a");
  REQUIRE_OK((*restarted)->Round());
  CHECK((*restarted)->IsLeader());
  CHECK(f.Spec()["acquireTime"] == "2026-11-30T09:00:00.000000Z");  // the same term goes on
  CHECK(f.Spec()["renewTime"] == "2026-11-30T09:00:03.000000Z");
  CHECK(f.Spec()["leaseTransitions"] == 0);
}

TEST_CASE("Never two leaders, whatever the order of rounds, pauses, errors, conflicts and releases",
          "[leader_election]") {
  Fixture f;
  std::vector<std::unique_ptr<Replica>> replicas;
  for (const char* identity : {"a", "b", "c"}) replicas.push_back(f.Stepped(identity));
  std::mt19937 random(6);  // fixed seed: the same schedule every run
  const auto pick = [&random](int n) { return std::uniform_int_distribution<int>(0, n - 1)(random); };
  int takeovers = 0;
  std::string last_leader;
  for (int step = 0; step < 600; ++step) {
    Replica& replica = *replicas[pick(3)];
    switch (pick(16)) {
      case 0:
      case 1:
      case 2:
        f.clock.Advance(absl::Milliseconds(100 * pick(80)));  // up to 8 s: replicas miss rounds
        break;
      case 3:
        if (pick(2) == 0) {
          f.server.Script(500, StatusJson(500, "InternalError", "scripted"));
        } else {
          f.server.Script(429, StatusJson(429, "TooManyRequests", "scripted"));
        }
        break;
      case 4:
        replica->Release().IgnoreError();
        break;
      case 5:
      case 6: {  // another replica's round between this one's read and write
        Replica& other = *replicas[pick(3)];
        if (&other == &replica) break;
        f.server.BeforeNext("PUT", [&other] { other->Round().IgnoreError(); });
        replica->Round().IgnoreError();
        f.server.BeforeNext("PUT", nullptr);  // unused when this round wrote nothing
        break;
      }
      default:
        replica->Round().IgnoreError();
    }
    int leaders = 0;
    for (const auto& r : replicas) {
      if ((*r)->IsLeader()) {
        ++leaders;
        if ((*r)->identity() != last_leader) ++takeovers;
        last_leader = (*r)->identity();
      }
    }
    INFO("step " << step);
    REQUIRE(leaders <= 1);
  }
  CHECK(takeovers >= 10);  // the schedule did move leadership around
}

TEST_CASE("Running electors: one leads, and when it stops (releasing) another takes over promptly",
          "[leader_election]") {
  Fixture f;
  auto a = f.Running("a");
  auto b = f.Running("b");
  (*a)->Start();
  (*b)->Start();
  REQUIRE(Eventually([&] { return (*a)->IsLeader() || (*b)->IsLeader(); }));
  Replica& leader = (*a)->IsLeader() ? *a : *b;
  Replica& follower = &leader == a.get() ? *b : *a;
  CHECK_FALSE(follower->IsLeader());

  leader->Stop();
  CHECK_FALSE(leader->IsLeader());
  CHECK(leader.started >= 1);  // more than once only if a loaded machine stalled it past its deadline
  CHECK(leader.stopped == leader.started);
  // Released: the follower needs a round or two (50 to 110 ms each), not the 1 s lease.
  REQUIRE(Eventually([&] { return follower->IsLeader(); }));
  CHECK(f.Spec()["holderIdentity"] == follower->identity());
  follower->Stop();
  CHECK(f.Spec()["holderIdentity"] == "");
}

TEST_CASE("Running electors: a leader that stops without releasing is replaced after the lease duration",
          "[leader_election]") {
  Fixture f;
  auto a = f.Running("a", /*release_on_stop=*/false);
  (*a)->Start();
  REQUIRE(Eventually([&] { return (*a)->IsLeader(); }));
  auto b = f.Running("b");
  (*b)->Start();
  REQUIRE(Eventually([&] { return !(*b)->holder().empty(); }));  // b has read a's Lease

  const absl::Time stopped_at = absl::Now();
  (*a)->Stop();
  CHECK(f.Spec()["holderIdentity"] == "a");  // not released
  const absl::Time deadline = stopped_at + absl::Seconds(10);
  while (!(*b)->IsLeader() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  REQUIRE((*b)->IsLeader());
  // b waits a full second from when it saw a's last renewal, which was a retry period (plus a round trip,
  // plus whatever a loaded machine adds, below the 500 ms renew deadline) before the stop; a released
  // Lease would have gone within about 100 ms.
  CHECK(absl::Now() - stopped_at >= absl::Milliseconds(400));
}

TEST_CASE("Stop is prompt: it cuts the retry sleep short", "[leader_election]") {
  Fixture f;
  LeaderElectionConfig config = ConfigFor("a");
  config.lease_duration = absl::Seconds(60);
  config.renew_deadline = absl::Seconds(50);
  config.retry_period = absl::Seconds(30);
  auto a = f.Make(std::move(config));
  (*a)->Start();
  REQUIRE(Eventually([&] { return (*a)->IsLeader(); }));  // the first round runs at once
  const absl::Time before = absl::Now();
  (*a)->Stop();
  CHECK(absl::Now() - before < absl::Seconds(10));  // not the 30 s retry period
  CHECK(f.Spec()["holderIdentity"] == "");
}

}  // namespace
}  // namespace topofit::kubeclient
