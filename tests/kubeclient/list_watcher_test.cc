#include "kubeclient/list_watcher.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/codec/hostile_json.h"
#include "tests/kube/dra_fixtures.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using testing::DirectClientFor;
using testing::Eventually;
using testing::FakeApiServer;
using testing::kPatience;
using testing::Match;
using testing::NodeJson;
using testing::PodJson;
using testing::Resource;
using testing::StatusJson;

// What a consumer of pods sees: the set it holds (replaced on every sync, edited by events) and a log.
class PodConsumer {
 public:
  WatchHandler<kube::Pod> Handler() {
    WatchHandler<kube::Pod> handler;
    handler.on_sync = [this](std::vector<kube::Pod> pods) {
      absl::MutexLock lock(&mu_);
      pods_.clear();
      std::vector<std::string> names;
      for (kube::Pod& pod : pods) {
        names.push_back(pod.metadata.name);
        pods_[pod.metadata.name] = std::move(pod);
      }
      log_.push_back(absl::StrCat("SYNC ", absl::StrJoin(names, ",")));
    };
    handler.on_event = [this](WatchEventType type, kube::Pod pod) {
      absl::MutexLock lock(&mu_);
      log_.push_back(absl::StrCat(WatchEventTypeName(type), " ", pod.metadata.name));
      if (type == WatchEventType::kDeleted) {
        pods_.erase(pod.metadata.name);
      } else {
        pods_[pod.metadata.name] = std::move(pod);
      }
    };
    return handler;
  }

  // Waits until the log has `n` entries and returns them.
  std::vector<std::string> Log(size_t n) {
    absl::MutexLock lock(&mu_);
    const auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return log_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kPatience);
    return log_;
  }
  std::vector<std::string> names() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& [name, pod] : pods_) out.push_back(name);
    return out;
  }
  std::string node_of(const std::string& name) {
    absl::MutexLock lock(&mu_);
    return pods_.at(name).spec.node_name;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, kube::Pod> pods_ ABSL_GUARDED_BY(mu_);
};

// Backoff sleeps return at once and are recorded; randomness is scripted.
class FakeTime {
 public:
  void Apply(ListWatchOptions& options) {
    options.clock = &clock_;
    options.sleep = [this](absl::Duration d) {
      absl::MutexLock lock(&mu_);
      sleeps_.push_back(d);
      clock_.Advance(d);
    };
    options.uniform_random = [this] {
      absl::MutexLock lock(&mu_);
      return random_;
    };
  }
  void set_random(double r) {
    absl::MutexLock lock(&mu_);
    random_ = r;
  }
  std::vector<absl::Duration> sleeps() {
    absl::MutexLock lock(&mu_);
    return sleeps_;
  }

 private:
  server::FakeClock clock_;
  absl::Mutex mu_;
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(mu_);
  double random_ ABSL_GUARDED_BY(mu_) = 0.5;
};

struct Fixture {
  Fixture() : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {
    rest = DirectClientFor(server, *certs);
    options.watch_timeout = absl::Seconds(60);
    options.min_watch_duration = absl::ZeroDuration();
    time.Apply(options);
  }
  std::unique_ptr<ListWatcher> WatchPods() { return ListWatcher::ForPods(*rest, options, consumer.Handler()); }
  // Started, with its watch open on the server.
  std::unique_ptr<ListWatcher> StartWatchingPods() {
    std::unique_ptr<ListWatcher> watcher = WatchPods();
    watcher->Start();
    REQUIRE(server.WaitForOpenWatches(1, kPatience));
    return watcher;
  }

  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
  ListWatchOptions options;
  FakeTime time;
  PodConsumer consumer;
};

TEST_CASE("ListWatcher: one LIST delivered as the synced set, then the watch's events in order", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1", "topofit"));
  f.server.Upsert(Resource::kPods, PodJson("ml", "b", "", "topofit"));
  f.server.Upsert(Resource::kPods, PodJson("ml", "other", "", "default-scheduler"));
  const std::string listed_rv = f.server.resource_version();
  f.options.field_selector = "spec.schedulerName=topofit";
  auto watcher = f.WatchPods();
  watcher->Start();
  REQUIRE(watcher->WaitForSync(kPatience));
  REQUIRE(f.server.WaitForOpenWatches(1, kPatience));

  f.server.Upsert(Resource::kPods, PodJson("ml", "c", "", "topofit"));
  f.server.Upsert(Resource::kPods, PodJson("ml", "b", "n2", "topofit"));  // bound
  const std::string deleted_at = f.server.Delete(Resource::kPods, "ml", "a");
  f.server.Upsert(Resource::kPods, PodJson("ml", "other-2", "", "default-scheduler"));  // not ours
  CHECK(f.consumer.Log(4) == std::vector<std::string>{"SYNC a,b", "ADDED c", "MODIFIED b", "DELETED a"});
  CHECK(f.consumer.names() == std::vector<std::string>{"b", "c"});
  CHECK(f.consumer.node_of("b") == "n2");
  // The other scheduler's pod moved the store's revision but is not this watch's event.
  CHECK(Eventually([&] { return watcher->resource_version() == deleted_at; }));
  watcher->Stop();

  const auto requests = f.server.requests();
  REQUIRE(requests.size() >= 2);
  CHECK(requests[0].target == "/api/v1/pods?fieldSelector=spec.schedulerName%3Dtopofit&limit=500");
  CHECK_FALSE(requests[0].IsWatch());
  CHECK(requests[1].IsWatch());
  CHECK(requests[1].Param("resourceVersion") == listed_rv);
  CHECK(requests[1].Param("allowWatchBookmarks") == "true");
  CHECK(requests[1].Param("timeoutSeconds") == "60");
  CHECK(requests[1].Param("fieldSelector") == "spec.schedulerName=topofit");
  CHECK(requests[1].Header("Authorization") == "Bearer test-token");
  const ListWatchStats stats = watcher->stats();
  CHECK(stats.lists == 1);
  CHECK(stats.events == 3);
  CHECK(stats.failures == 0);
}

TEST_CASE("ListWatcher: a selector's transitions arrive as ADDED and DELETED, a LIST is paged", "[watch]") {
  Fixture f;
  for (const char* name : {"p1", "p2", "p3", "p4", "p5"}) f.server.Upsert(Resource::kPods, PodJson("ml", name, "n1"));
  f.server.Upsert(Resource::kPods, PodJson("ml", "pending", ""));
  f.options.field_selector = "spec.nodeName!=";  // pods bound to a node: what holds GPUs
  f.options.page_size = 2;
  auto watcher = f.WatchPods();
  watcher->Start();
  REQUIRE(watcher->WaitForSync(kPatience));
  REQUIRE(f.server.WaitForOpenWatches(1, kPatience));
  f.server.Upsert(Resource::kPods, PodJson("ml", "pending", "n3"));  // bound: now matches
  f.server.Upsert(Resource::kPods, PodJson("ml", "p1", ""));         // (not real, but) stops matching
  CHECK(f.consumer.Log(3) == std::vector<std::string>{"SYNC p1,p2,p3,p4,p5", "ADDED pending", "DELETED p1"});
  watcher->Stop();

  int lists = 0;
  for (const auto& request : f.server.requests()) lists += request.IsWatch() ? 0 : 1;
  CHECK(lists == 3);  // 2 + 2 + 1
  CHECK_FALSE(f.server.requests().at(1).Param("continue").empty());
  CHECK(f.server.requests().at(1).Param("limit") == "2");
}

TEST_CASE("ListWatcher: a BOOKMARK advances the resourceVersion and the next watch starts there", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  auto watcher = f.StartWatchingPods();
  // Writes elsewhere (a node) move the revision without an event for this watch; a bookmark says so.
  f.server.Upsert(Resource::kNodes, NodeJson("n9"));
  const std::string bookmark_rv = f.server.resource_version();
  CHECK(watcher->resource_version() != bookmark_rv);
  f.server.Bookmark();
  REQUIRE(Eventually([&] { return watcher->resource_version() == bookmark_rv; }));
  f.server.CloseWatches();  // as when timeoutSeconds runs out
  REQUIRE(Eventually([&] { return f.server.watch_requests().size() == 2; }));
  watcher->Stop();

  CHECK(f.server.watch_requests().at(1).Param("resourceVersion") == bookmark_rv);
  CHECK(watcher->stats().bookmarks == 1);
  CHECK(watcher->stats().lists == 1);
  CHECK(f.time.sleeps().empty());  // a watch the server ended after progress is reopened at once
}

TEST_CASE("ListWatcher: 410 Gone as an ERROR event relists, and the new set drops what vanished", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  f.server.Upsert(Resource::kPods, PodJson("ml", "b", "n1"));
  auto watcher = f.StartWatchingPods();
  // b goes while the watch is not told, and the history that held its deletion is compacted away.
  f.server.DeleteUnseen(Resource::kPods, "ml", "b");
  f.server.Upsert(Resource::kPods, PodJson("ml", "c", "n2"));
  f.server.Compact();
  CHECK(f.consumer.Log(3) == std::vector<std::string>{"SYNC a,b", "ADDED c", "SYNC a,c"});
  CHECK(f.consumer.names() == std::vector<std::string>{"a", "c"});
  REQUIRE(f.server.WaitForOpenWatches(1, kPatience));
  watcher->Stop();

  const ListWatchStats stats = watcher->stats();
  CHECK(stats.lists == 2);
  CHECK(stats.gone == 1);
  CHECK(watcher->resource_version() == f.server.resource_version());
  // The relist waited one backoff step: 800 ms, half fixed and half times 0.5 = 600 ms.
  CHECK(f.time.sleeps() == std::vector<absl::Duration>{absl::Milliseconds(600)});
}

TEST_CASE("ListWatcher: 410 Gone as the watch's HTTP status relists too", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  f.server.Script(410, StatusJson(410, "Expired", "too old resource version: 1 (5)"), {}, Match::kWatch);
  auto watcher = f.WatchPods();
  watcher->Start();
  CHECK(f.consumer.Log(2) == std::vector<std::string>{"SYNC a", "SYNC a"});
  REQUIRE(f.server.WaitForOpenWatches(1, kPatience));
  watcher->Stop();
  CHECK(watcher->stats().gone == 1);
  CHECK(watcher->stats().lists == 2);
}

TEST_CASE("ListWatcher: a dropped connection reconnects from the last resourceVersion, no relist", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  auto watcher = f.StartWatchingPods();
  f.server.Upsert(Resource::kPods, PodJson("ml", "b", "n1"));
  REQUIRE(f.consumer.Log(2).size() == 2);
  const std::string before_drop = f.server.resource_version();
  f.server.DropWatches();
  // Whether c is written before or after the reconnect, it arrives once: live, or replayed from history.
  f.server.Upsert(Resource::kPods, PodJson("ml", "c", "n1"));
  CHECK(f.consumer.Log(3) == std::vector<std::string>{"SYNC a", "ADDED b", "ADDED c"});
  watcher->Stop();

  const auto watches = f.server.watch_requests();
  REQUIRE(watches.size() == 2);
  CHECK(watches[1].Param("resourceVersion") == before_drop);
  const ListWatchStats stats = watcher->stats();
  CHECK(stats.lists == 1);
  CHECK(stats.failures == 1);
  CHECK(f.time.sleeps() == std::vector<absl::Duration>{absl::Milliseconds(600)});
}

TEST_CASE("ListWatcher: 429 and 503 honour Retry-After, 5xx without it backs off exponentially", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  f.server.Script(503, StatusJson(503, "ServiceUnavailable", "etcd leader changed"), {{"Retry-After", "2"}},
                  Match::kList);
  f.server.Script(429, StatusJson(429, "TooManyRequests", "too many requests"), {{"Retry-After", "7"}},
                  Match::kWatch);
  f.server.Script(500, StatusJson(500, "InternalError", "boom"), {}, Match::kWatch);
  f.server.Script(500, StatusJson(500, "InternalError", "boom"), {}, Match::kWatch);
  f.time.set_random(1.0);
  auto watcher = f.StartWatchingPods();
  f.server.Upsert(Resource::kPods, PodJson("ml", "b", "n1"));
  CHECK(f.consumer.Log(2) == std::vector<std::string>{"SYNC a", "ADDED b"});
  watcher->Stop();

  // LIST 503 -> 2 s (Retry-After). WATCH 429 -> 7 s (Retry-After). The successful LIST reset the count,
  // so the failures after it are 1, 2, 3: 429 (Retry-After wins), then 500s at steps 1.6 s and 3.2 s,
  // random 1 -> the whole step.
  CHECK(f.time.sleeps() == std::vector<absl::Duration>{absl::Seconds(2), absl::Seconds(7), absl::Milliseconds(1600),
                                                       absl::Milliseconds(3200)});
  CHECK(watcher->stats().failures == 4);
  CHECK(watcher->stats().lists == 1);
  const auto watches = f.server.watch_requests();
  REQUIRE(watches.size() == 4);
  for (const auto& watch : watches) CHECK(watch.Param("resourceVersion") == watches[0].Param("resourceVersion"));
}

TEST_CASE("ListWatcher: several events in one chunk, the last without its newline", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  nlohmann::json b = PodJson("ml", "b", "n1");
  b["metadata"]["resourceVersion"] = "200";
  nlohmann::json c = PodJson("ml", "c", "n1");
  c["metadata"]["resourceVersion"] = "201";
  f.server.Script(200,
                  absl::StrCat(nlohmann::json{{"type", "ADDED"}, {"object", b}}.dump(), "\n",
                               nlohmann::json{{"type", "ADDED"}, {"object", c}}.dump()),
                  {}, Match::kWatch);
  auto watcher = f.WatchPods();
  watcher->Start();
  CHECK(f.consumer.Log(3) == std::vector<std::string>{"SYNC a", "ADDED b", "ADDED c"});
  REQUIRE(Eventually([&] { return f.server.watch_requests().size() >= 2; }));
  watcher->Stop();
  CHECK(f.server.watch_requests().at(1).Param("resourceVersion") == "201");
}

TEST_CASE("ListWatcher: an ERROR event other than 410 backs off and rewatches without a relist", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  f.server.Script(200,
                  absl::StrCat(nlohmann::json{{"type", "ERROR"},
                                              {"object", nlohmann::json::parse(StatusJson(
                                                             500, "InternalError", "watch channel closed"))}}
                                   .dump(),
                               "\n"),
                  {}, Match::kWatch);
  auto watcher = f.StartWatchingPods();
  watcher->Stop();
  CHECK(watcher->stats().lists == 1);
  CHECK(watcher->stats().failures == 1);
  CHECK(f.server.watch_requests().size() == 2);
}

// An event is one object, bounded before a document is built from it (codec/json_limits.h): a pod whose
// metadata holds 100,000 nested arrays beside its fields fails the watch, as a malformed line does, and
// reaches no consumer.
TEST_CASE("ListWatcher: an event beyond the JSON limits fails the watch and changes nothing", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  nlohmann::json b = PodJson("ml", "b", "n1");
  b["metadata"]["resourceVersion"] = "200";
  const std::string object = topofit::testing::WithRawMember(b, "x", topofit::testing::NestedArrays(100'000));
  f.server.Script(200, absl::StrCat(R"({"type":"ADDED","object":)", object, "}\n"), {}, Match::kWatch);
  auto watcher = f.StartWatchingPods();
  watcher->Stop();
  CHECK(watcher->stats().failures == 1);
  CHECK(watcher->stats().lists == 1);
  CHECK(f.consumer.names() == std::vector<std::string>{"a"});
  CHECK(f.consumer.Log(1) == std::vector<std::string>{"SYNC a"});
}

TEST_CASE("ListWatcher: nodes decode through the codec, an undecodable object is skipped and counted", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kNodes, NodeJson("n1", 8));
  nlohmann::json bad = NodeJson("n2");
  bad["status"]["allocatable"]["nvidia.com/gpu"] = "eight";
  f.server.Upsert(Resource::kNodes, bad);
  absl::Mutex mu;
  std::vector<std::string> seen;
  WatchHandler<kube::Node> handler;
  handler.on_sync = [&](std::vector<kube::Node> nodes) {
    absl::MutexLock lock(&mu);
    for (const kube::Node& node : nodes) {
      seen.push_back(absl::StrCat(node.metadata.name, "=", node.status.allocatable.at("nvidia.com/gpu") / 1000));
    }
  };
  handler.on_event = [&](WatchEventType type, kube::Node node) {
    absl::MutexLock lock(&mu);
    seen.push_back(absl::StrCat(WatchEventTypeName(type), " ", node.metadata.name));
  };
  auto watcher = ListWatcher::ForNodes(*f.rest, f.options, handler);
  watcher->Start();
  REQUIRE(f.server.WaitForOpenWatches(1, kPatience));
  f.server.Upsert(Resource::kNodes, NodeJson("n3", 4));
  REQUIRE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return seen.size() == 2;
  }));
  watcher->Stop();
  CHECK(seen == std::vector<std::string>{"n1=8", "ADDED n3"});
  CHECK(watcher->stats().undecodable == 1);
  CHECK(f.server.requests().at(0).target == "/api/v1/nodes?limit=500");
}

TEST_CASE("ListWatcher: ResourceClaims of every namespace and ResourceSlices list and watch from resource.k8s.io",
          "[watch][dra]") {
  Fixture f;
  f.server.Upsert(Resource::kResourceSlices, topofit::testing::DraFixture("resourceslice-v1.json"));
  const nlohmann::json claim = topofit::testing::DraFixture("resourceclaim-v1-allocated.json");
  f.server.Upsert(Resource::kResourceClaims, claim);
  nlohmann::json serving_claim = claim;
  serving_claim["metadata"]["namespace"] = "serving";
  serving_claim["metadata"]["uid"] = "uid-serving-claim";
  absl::Mutex mu;
  std::vector<std::string> seen;
  WatchHandler<kube::ResourceClaim> claims;
  claims.on_sync = [&](std::vector<kube::ResourceClaim> listed) {
    absl::MutexLock lock(&mu);
    for (const kube::ResourceClaim& c : listed) {
      seen.push_back(absl::StrCat(c.metadata.namespace_name, "/", c.devices.size()));
    }
  };
  claims.on_event = [&](WatchEventType type, kube::ResourceClaim c) {
    absl::MutexLock lock(&mu);
    seen.push_back(absl::StrCat(WatchEventTypeName(type), " ", c.metadata.namespace_name));
  };
  WatchHandler<kube::ResourceSlice> slices;
  slices.on_sync = [&](std::vector<kube::ResourceSlice> listed) {
    absl::MutexLock lock(&mu);
    for (const kube::ResourceSlice& s : listed) seen.push_back(absl::StrCat(s.node_name, "=", s.devices.size()));
  };
  auto slice_watcher = ListWatcher::ForResourceSlices(*f.rest, "v1", f.options, slices);
  slice_watcher->Start();
  REQUIRE(slice_watcher->WaitForSync(kPatience));
  auto claim_watcher = ListWatcher::ForResourceClaims(*f.rest, "v1", f.options, claims);
  claim_watcher->Start();
  REQUIRE(f.server.WaitForOpenWatches(2, kPatience));
  f.server.Upsert(Resource::kResourceClaims, serving_claim);
  f.server.Delete(Resource::kResourceClaims, "ml", claim["metadata"]["name"].get<std::string>());
  REQUIRE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return seen.size() == 4;
  }));
  slice_watcher->Stop();
  claim_watcher->Stop();
  CHECK(seen == std::vector<std::string>{"a100-node-1=9", "ml/2", "ADDED serving", "DELETED ml"});
  CHECK(f.server.requests().at(0).target == "/apis/resource.k8s.io/v1/resourceslices?limit=500");

  // One namespace's claims, and one claim, as the API server serves them.
  const absl::StatusOr<nlohmann::json> listed =
      f.rest->Get("/apis/resource.k8s.io/v1/namespaces/serving/resourceclaims");
  REQUIRE_OK(listed);
  CHECK((*listed)["kind"] == "ResourceClaimList");
  CHECK((*listed)["apiVersion"] == "resource.k8s.io/v1");
  REQUIRE((*listed)["items"].size() == 1);
  const std::string name = claim["metadata"]["name"].get<std::string>();
  const absl::StatusOr<nlohmann::json> one =
      f.rest->Get(absl::StrCat("/apis/resource.k8s.io/v1/namespaces/serving/resourceclaims/", name));
  REQUIRE_OK(one);
  CHECK((*one)["metadata"]["uid"] == "uid-serving-claim");
  CHECK((*one)["kind"] == "ResourceClaim");
  const absl::StatusOr<nlohmann::json> gone =
      f.rest->Get(absl::StrCat("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/", name));
  CHECK_STATUS(gone, absl::StatusCode::kNotFound, "resourceclaims.resource.k8s.io");
}

TEST_CASE("ListWatcher: Stop() is prompt on an idle watch and in a long backoff", "[watch]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PodJson("ml", "a", "n1"));
  ListWatchOptions real;  // real clock and sleep
  real.watch_timeout = absl::Seconds(300);

  SECTION("idle watch") {
    auto watcher = ListWatcher::ForPods(*f.rest, real, f.consumer.Handler());
    watcher->Start();
    REQUIRE(f.server.WaitForOpenWatches(1, kPatience));
    const absl::Time start = absl::Now();
    watcher->Stop();
    CHECK(absl::Now() - start < absl::Seconds(5));  // the watch would run 300 s; 5 s leaves a loaded machine room
  }
  SECTION("waiting out a 30 s Retry-After") {
    f.server.Script(429, StatusJson(429, "TooManyRequests", "slow down"), {{"Retry-After", "30"}}, Match::kList);
    auto watcher = ListWatcher::ForPods(*f.rest, real, f.consumer.Handler());
    watcher->Start();
    REQUIRE(Eventually([&] { return watcher->stats().failures == 1; }));
    const absl::Time start = absl::Now();
    watcher->Stop();
    CHECK(absl::Now() - start < absl::Seconds(5));  // not the 30 s wait
    CHECK_FALSE(watcher->synced());
  }
  SECTION("stopped before it started, or twice") {
    auto watcher = ListWatcher::ForPods(*f.rest, real, f.consumer.Handler());
    watcher->Stop();
    watcher->Stop();
  }
}

}  // namespace
}  // namespace topofit::kubeclient
