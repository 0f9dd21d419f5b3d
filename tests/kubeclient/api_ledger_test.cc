#include "kubeclient/api_ledger.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codec/kube_json.h"
#include "decision/capacity_hold.h"
#include "scheduler/gpu_state.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"
#include "kube/topofit_annotations.h"
#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

const std::string kPreferenceKey(kube::kPlacementPreferenceAnnotation);
const std::string kIntentKey(kube::kScaleUpIntentAnnotation);

using testing::DirectClientFor;
using testing::Eventually;
using testing::FakeApiServer;
using testing::kPatience;
using testing::PodJson;
using testing::Resource;
using testing::StatusJson;

constexpr int64_t kStartSeconds = 1'800'000'000;
const absl::Duration kPreferenceTtl = ledger::Lifetimes().preference;
const absl::Duration kIntentTtl = ledger::Lifetimes().intent;
constexpr char kP4dType[] = "p4d.24xlarge";

// A pending pod of topofit's scheduler in the API server's shape, asking for `gpus`.
nlohmann::json PendingPodJson(const std::string& name, int gpus) {
  nlohmann::json pod = PodJson("ml", name, "", "topofit");
  pod["metadata"]["uid"] = absl::StrCat("uid-", name);
  const std::string count = std::to_string(gpus);
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", count}}},
                                               {"requests", {{"nvidia.com/gpu", count}}}};
  pod["metadata"]["annotations"] = {{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "required"}};
  return pod;
}

// What the extender records for a pod no node could serve.
decision::Preference PreferenceOf(const kube::Pod& pod, std::vector<std::string> refused = {"old-1"}) {
  return decision::PreferenceFor(pod, decision::DemandOf(pod).value(), std::move(refused));
}

decision::Intent P4dIntentFor(std::vector<std::string> pod_uids) {
  decision::Intent intent;
  intent.node_group = "p4d-group";
  intent.pod_uids = std::move(pod_uids);
  for (const std::string& uid : intent.pod_uids) intent.pod_gpus[uid] = 8;  // each an 8-GPU NVLink pod
  intent.node_count = 1;
  intent.node_labels = {{"node.kubernetes.io/instance-type", kP4dType}};
  return intent;
}

std::string TimeText(absl::Time t) { return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", t, absl::UTCTimeZone()); }

// Every field a reader uses, so "the same entries" is one string comparison with a readable diff.
std::string Describe(const std::vector<decision::Preference>& preferences) {
  std::string out;
  for (const decision::Preference& p : preferences) {
    absl::StrAppend(&out, p.pod_uid, " ", p.pod_key, " gpus=", p.gpus, " link=", topology::LinkClassName(p.min_link),
                    " mbps=", p.min_bandwidth_mbps, " selector=", p.node_selector.size(),
                    " affinity=", p.required_node_affinity.has_value(), " refused=", absl::StrJoin(p.refused_nodes, ","),
                    " first=", TimeText(p.first_seen), " last=", TimeText(p.last_seen), "\n");
  }
  return out;
}

std::string Describe(const std::vector<decision::Intent>& intents) {
  std::string out;
  for (const decision::Intent& i : intents) {
    absl::StrAppend(&out, i.node_group, " x", i.node_count, " for ", absl::StrJoin(i.pod_uids, ","), " held=",
                    absl::StrJoin(i.pod_gpus, ",", absl::PairFormatter(":")), " labels=",
                    absl::StrJoin(i.node_labels, ",", absl::PairFormatter("=")), " at ", TimeText(i.recorded), "\n");
  }
  return out;
}

struct Fixture {
  Fixture() : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {
    rest = DirectClientFor(server, *certs);
    kube = std::make_unique<KubeApi>(*rest);
  }

  ApiLedgerOptions Options() const {
    ApiLedgerOptions options;
    options.publishing.initial_backoff = absl::Milliseconds(1);
    options.publishing.max_backoff = absl::Milliseconds(2);
    options.publishing.uniform_random = [] { return 0.5; };
    return options;
  }
  std::unique_ptr<ApiLedger> NewLedger() const { return std::make_unique<ApiLedger>(*kube, clock, log, Options()); }

  // The pod as the API server holds it now, in its JSON and decoded.
  nlohmann::json StoredPodJson(const std::string& name) const { return rest->Get(PodPath("ml", name)).value(); }
  kube::Pod StoredPod(const std::string& name) const { return codec::PodFromJson(StoredPodJson(name)).value(); }
  size_t Patches() const {
    size_t patches = 0;
    for (const testing::RecordedRequest& request : server.requests()) patches += request.method == "PATCH" ? 1 : 0;
    return patches;
  }

  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
  std::unique_ptr<KubeApi> kube;
  server::FakeClock clock{absl::FromUnixSeconds(kStartSeconds)};
  mutable spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
};

// One process's ledger fed by a watch of pending pods, as `topofit extender --ledger=api` runs it.
struct Process {
  explicit Process(Fixture& f) : ledger(f.NewLedger()) {
    ListWatchOptions options;
    options.field_selector = "spec.nodeName=";
    options.watch_timeout = absl::Seconds(60);
    options.min_watch_duration = absl::ZeroDuration();
    options.initial_backoff = absl::Milliseconds(1);
    watch = ListWatcher::ForPods(*f.rest, options, ledger->PodHandler());
    watch->Start();
  }
  bool Synced() const { return watch->WaitForSync(kPatience); }

  std::unique_ptr<ApiLedger> ledger;
  std::unique_ptr<ListWatcher> watch;  // after the ledger: stopped before it goes
};

TEST_CASE("ApiLedger: an extender and an expander on one API server agree on preferences and intents",
          "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  f.server.Upsert(Resource::kPods, PendingPodJson("web", 1));
  Process extender(f), expander(f);
  REQUIRE(extender.Synced());
  REQUIRE(expander.Synced());

  extender.ledger->RecordPreference(PreferenceOf(f.StoredPod("trainer")));
  f.clock.Advance(absl::Seconds(1));
  expander.ledger->RecordIntent(P4dIntentFor({"uid-trainer"}));
  REQUIRE(extender.ledger->WaitPublished(kPatience));
  REQUIRE(expander.ledger->WaitPublished(kPatience));

  const std::string preferences = Describe(extender.ledger->Preferences());
  const std::string intents = Describe(expander.ledger->Intents());
  CHECK(preferences ==
        "uid-trainer ml/trainer gpus=8 link=NV mbps=0 selector=0 affinity=0 refused=old-1 "
        "first=2027-01-15T08:00:00Z last=2027-01-15T08:00:00Z\n");
  CHECK(intents ==
        "p4d-group x1 for uid-trainer held=uid-trainer:8 labels=node.kubernetes.io/instance-type=p4d.24xlarge at 2027-01-15T08:00:01Z\n");
  CHECK(Eventually([&] {
    return Describe(expander.ledger->Preferences()) == preferences && Describe(extender.ledger->Intents()) == intents;
  }));
  CHECK(Describe(expander.ledger->Preferences()) == preferences);
  CHECK(Describe(extender.ledger->Intents()) == intents);

  SECTION("the extender holds the node the expander's intent brought for the pod it was bought for") {
    std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
    REQUIRE_OK(state->UpsertNode(kube::testing::MakeNode()
                                     .name("p4d-new")
                                     .label("node.kubernetes.io/instance-type", kP4dType)
                                     .gpus(8)
                                     .created(kStartSeconds + 300)));
    const decision::NodeGpuSnapshot& fresh = *state->Snapshot("p4d-new");
    const decision::CapacityHolds holds(extender.ledger->Intents(), extender.ledger->Preferences(), {&fresh});
    CHECK(holds.HeldOn(fresh) == 8);
    CHECK(holds.MayTake({"uid-trainer"}, fresh, 8));
  }
  SECTION("the node groups the expander was offered reach the extender through their ConfigMap, trust and all") {
    const kube::Node p4d_template =
        kube::testing::MakeNode().label("node.kubernetes.io/instance-type", kP4dType).gpus(8);
    const kube::Node g5_template = kube::testing::MakeNode().label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8);
    expander.ledger->RecordNodeGroups({{"p4d-group", p4d_template}}, /*trusted=*/true);
    expander.ledger->RecordNodeGroups({{"g5-group", g5_template}}, /*trusted=*/false);
    REQUIRE(expander.ledger->WaitPublished(kPatience));
    CHECK(extender.ledger->NodeGroups().empty());  // until its reader looks
    REQUIRE_OK(extender.ledger->node_groups().Refresh());
    const std::map<std::string, ledger::NodeGroupTemplate> groups = extender.ledger->NodeGroups();
    REQUIRE(groups.size() == 2);
    CHECK(groups.at("p4d-group").template_node == p4d_template);
    CHECK(groups.at("p4d-group").trusted);
    CHECK(groups.at("g5-group").template_node == g5_template);
    CHECK_FALSE(groups.at("g5-group").trusted);
  }
}

TEST_CASE("ApiLedger: after a restart, a fresh ledger rebuilt from the API has the same entries", "[api-ledger]") {
  Fixture f;
  for (const char* name : {"trainer", "infer", "web"}) f.server.Upsert(Resource::kPods, PendingPodJson(name, 4));
  std::string preferences, intents;
  {
    Process before(f);
    REQUIRE(before.Synced());
    before.ledger->RecordPreference(PreferenceOf(f.StoredPod("trainer"), {"n1", "n2"}));
    f.clock.Advance(absl::Milliseconds(1500));
    before.ledger->RecordPreference(PreferenceOf(f.StoredPod("infer"), {}));
    before.ledger->RecordIntent(P4dIntentFor({"uid-trainer", "uid-infer"}));
    f.clock.Advance(absl::Seconds(2));
    before.ledger->RecordIntent(P4dIntentFor({"uid-web"}));
    REQUIRE(before.ledger->WaitPublished(kPatience));
    preferences = Describe(before.ledger->Preferences());
    intents = Describe(before.ledger->Intents());
  }
  CHECK(preferences.size() > 0);
  CHECK(intents ==
        "p4d-group x1 for uid-infer,uid-trainer held=uid-infer:8,uid-trainer:8 labels=node.kubernetes.io/instance-type=p4d.24xlarge "
        "at 2027-01-15T08:00:01.5Z\n"
        "p4d-group x1 for uid-web held=uid-web:8 labels=node.kubernetes.io/instance-type=p4d.24xlarge at 2027-01-15T08:00:03.5Z\n");

  Process after(f);
  REQUIRE(after.Synced());
  CHECK(Describe(after.ledger->Preferences()) == preferences);
  CHECK(Describe(after.ledger->Intents()) == intents);
}

TEST_CASE("ApiLedger: a pod that binds or goes leaves the ledger, here and in other processes", "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("a", 2));
  f.server.Upsert(Resource::kPods, PendingPodJson("b", 2));
  Process writer(f), reader(f);
  REQUIRE(writer.Synced());
  REQUIRE(reader.Synced());
  for (const char* name : {"a", "b"}) writer.ledger->RecordPreference(PreferenceOf(f.StoredPod(name)));
  writer.ledger->RecordIntent(P4dIntentFor({"uid-a", "uid-b"}));
  REQUIRE(writer.ledger->WaitPublished(kPatience));
  REQUIRE(Eventually([&] { return reader.ledger->Preferences().size() == 2; }));

  nlohmann::json bound = f.StoredPodJson("a");
  bound["spec"]["nodeName"] = "n1";  // with "spec.nodeName=", it arrives as DELETED
  f.server.Upsert(Resource::kPods, bound);
  for (const Process* process : {&writer, &reader}) {
    CHECK(Eventually([&] { return process->ledger->Preferences().size() == 1; }));
    CHECK(process->ledger->Preferences().at(0).pod_uid == "uid-b");
    CHECK(Describe(process->ledger->Intents()).find("for uid-b held=uid-b:8 labels") != std::string::npos);
  }

  f.server.Delete(Resource::kPods, "ml", "b");
  for (const Process* process : {&writer, &reader}) {
    CHECK(Eventually([&] { return process->ledger->Preferences().empty() && process->ledger->Intents().empty(); }));
  }
}

TEST_CASE("ApiLedger: a relist replaces what the ledger learned from the API", "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("a", 2));
  f.server.Upsert(Resource::kPods, PendingPodJson("b", 2));
  {
    Process writer(f);
    REQUIRE(writer.Synced());
    for (const char* name : {"a", "b"}) writer.ledger->RecordPreference(PreferenceOf(f.StoredPod(name)));
    REQUIRE(writer.ledger->WaitPublished(kPatience));
  }
  Process reader(f);
  REQUIRE(reader.Synced());
  REQUIRE(reader.ledger->Preferences().size() == 2);

  f.server.DeleteUnseen(Resource::kPods, "ml", "a");  // while the watch is not looking
  f.server.Compact();                                 // and then 410: a relist
  REQUIRE(Eventually([&] { return reader.ledger->stats().syncs == 2; }));
  REQUIRE(reader.ledger->Preferences().size() == 1);
  CHECK(reader.ledger->Preferences().at(0).pod_uid == "uid-b");
}

TEST_CASE("ApiLedger: an event older than a local write does not clobber it", "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  const kube::Pod before = f.StoredPod("trainer");  // as the API had it before the write: no preference
  // The watch's events are delivered by hand here, in the order a test needs.

  SECTION("while the write is not published") {
    ApiLedgerOptions options = f.Options();
    options.publishing.initial_backoff = options.publishing.max_backoff = absl::Hours(1);
    options.shutdown_grace = absl::ZeroDuration();
    ApiLedger ledger(*f.kube, f.clock, f.log, options);
    ledger.SyncPods({before});
    f.server.Script(503, StatusJson(503, "ServiceUnavailable", "etcd leader changed"));
    ledger.RecordPreference(PreferenceOf(before));
    REQUIRE(Eventually([&] { return ledger.stats().publish_failures == 1; }));  // retried in an hour

    ledger.PodChanged(WatchEventType::kModified, before);
    CHECK(ledger.Preferences().size() == 1);
    ledger.SyncPods({before});
    CHECK(ledger.Preferences().size() == 1);
  }
  SECTION("once published, until the watch shows the write back") {
    std::unique_ptr<ApiLedger> ledger = f.NewLedger();
    ledger->SyncPods({before});
    ledger->RecordPreference(PreferenceOf(before));
    REQUIRE(ledger->WaitPublished(kPatience));
    const kube::Pod echo = f.StoredPod("trainer");  // the patched pod, the watch's next event
    REQUIRE(echo.metadata.annotations.contains(kPreferenceKey));

    ledger->PodChanged(WatchEventType::kModified, before);  // delivered late, but older than the write
    CHECK(ledger->Preferences().size() == 1);
    ledger->PodChanged(WatchEventType::kModified, echo);
    CHECK(ledger->Preferences().size() == 1);

    kube::Pod cleared = echo;  // from here on the watch rules: someone removed the annotation
    cleared.metadata.annotations.erase(kPreferenceKey);
    cleared.metadata.resource_version = absl::StrCat(std::stoi(echo.metadata.resource_version) + 1);
    ledger->PodChanged(WatchEventType::kModified, cleared);
    CHECK(ledger->Preferences().empty());
  }
  SECTION("after ForgetPod, until the pod's DELETED") {
    std::unique_ptr<ApiLedger> ledger = f.NewLedger();
    ledger->SyncPods({before});
    ledger->RecordPreference(PreferenceOf(before));
    REQUIRE(ledger->WaitPublished(kPatience));
    kube::Pod annotated = f.StoredPod("trainer");
    ledger->PodChanged(WatchEventType::kModified, annotated);
    ledger->ForgetPod("uid-trainer");  // bound by this extender
    annotated.metadata.annotations["topofit.io/gpu-ids"] = "0,1,2,3,4,5,6,7";  // written just before binding
    ledger->PodChanged(WatchEventType::kModified, annotated);
    CHECK(ledger->Preferences().empty());
    ledger->PodChanged(WatchEventType::kDeleted, annotated);
    CHECK(ledger->Preferences().empty());
  }
}

TEST_CASE("ApiLedger: a failed patch is retried, a pod that is gone is dropped", "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  std::unique_ptr<ApiLedger> ledger = f.NewLedger();
  const decision::Preference preference = PreferenceOf(f.StoredPod("trainer"));
  f.server.Script(500, StatusJson(500, "InternalError", "boom"));
  f.server.Script(429, StatusJson(429, "TooManyRequests", "slow down"));
  ledger->RecordPreference(preference);
  REQUIRE(ledger->WaitPublished(kPatience));
  CHECK(ledger->stats().publish_failures == 2);
  CHECK(ledger->stats().published == 1);
  CHECK(f.Patches() == 3);
  const kube::Pod stored = f.StoredPod("trainer");
  REQUIRE(stored.metadata.annotations.contains(kPreferenceKey));
  REQUIRE_OK(ParsePreferenceAnnotation(stored.metadata.annotations.at(kPreferenceKey)));

  kube::Pod ghost = f.StoredPod("trainer");
  ghost.metadata.name = "ghost";
  ghost.metadata.uid = "uid-ghost";
  ledger->RecordPreference(PreferenceOf(ghost));
  REQUIRE(ledger->WaitPublished(kPatience));
  CHECK(ledger->stats().pods_gone == 1);
  REQUIRE(ledger->Preferences().size() == 1);
  CHECK(ledger->Preferences().at(0).pod_uid == "uid-trainer");
}

TEST_CASE("ApiLedger: a refresh is published when it changes something or the API's copy is half a TTL old",
          "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  const kube::Pod trainer = f.StoredPod("trainer");
  std::unique_ptr<ApiLedger> ledger = f.NewLedger();
  const auto record = [&](std::vector<std::string> refused) {
    ledger->RecordPreference(PreferenceOf(trainer, std::move(refused)));
    REQUIRE(ledger->WaitPublished(kPatience));
  };
  record({"n1"});
  CHECK(f.Patches() == 1);
  f.clock.Advance(absl::Minutes(4));
  record({"n1"});  // kube-scheduler's retry: the API's lastSeen is 4 min old, under half the TTL
  CHECK(f.Patches() == 1);
  CHECK(ledger->Preferences().at(0).last_seen == absl::FromUnixSeconds(kStartSeconds) + absl::Minutes(4));
  f.clock.Advance(absl::Minutes(2));
  record({"n1"});  // 6 min: other readers would expire it at 10
  CHECK(f.Patches() == 2);
  record({"n1", "n2"});  // new content
  CHECK(f.Patches() == 3);
  const absl::StatusOr<PreferenceAnnotation> in_api = ParsePreferenceAnnotation(
      f.StoredPod("trainer").metadata.annotations.at(kPreferenceKey));
  REQUIRE_OK(in_api);
  CHECK(*in_api == PreferenceAnnotation{{"n1", "n2"}, absl::FromUnixSeconds(kStartSeconds),
                                        absl::FromUnixSeconds(kStartSeconds) + absl::Minutes(6)});
}

TEST_CASE("ApiLedger: entries read from the API expire by the same TTLs as in memory", "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  {
    std::unique_ptr<ApiLedger> writer = f.NewLedger();
    writer->RecordPreference(PreferenceOf(f.StoredPod("trainer")));
    writer->RecordIntent(P4dIntentFor({"uid-trainer"}));
    writer->SyncPods({f.StoredPod("trainer")});  // names the pod for the intent
    REQUIRE(writer->WaitPublished(kPatience));
  }
  std::unique_ptr<ApiLedger> reader = f.NewLedger();
  reader->SyncPods({f.StoredPod("trainer")});
  CHECK(reader->Preferences().size() == 1);
  CHECK(reader->Intents().size() == 1);
  f.clock.Advance(kPreferenceTtl);
  CHECK(reader->Preferences().size() == 1);
  f.clock.Advance(absl::Seconds(1));
  CHECK(reader->Preferences().empty());
  CHECK(reader->Intents().size() == 1);
  f.clock.Advance(kIntentTtl - kPreferenceTtl);
  CHECK(reader->Intents().empty());
}

TEST_CASE("ApiLedger: an intent for a pod it cannot name is kept, and published once the watch names it",
          "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  std::unique_ptr<ApiLedger> ledger = f.NewLedger();
  // "ml/pr-trainer": a ProvisioningRequest's pod as CA sees it, with no real pod behind the uid.
  ledger->RecordIntent(P4dIntentFor({"ml/pr-trainer", "uid-trainer"}));
  REQUIRE(ledger->WaitPublished(kPatience));
  CHECK(ledger->stats().unresolved == 2);
  CHECK(f.Patches() == 0);
  REQUIRE(ledger->Intents().size() == 1);
  CHECK(ledger->Intents().at(0).pod_uids == std::vector<std::string>{"ml/pr-trainer", "uid-trainer"});

  ledger->SyncPods({f.StoredPod("trainer")});
  REQUIRE(ledger->WaitPublished(kPatience));
  CHECK(f.Patches() == 1);
  CHECK(f.StoredPod("trainer").metadata.annotations.contains(kIntentKey));
}

TEST_CASE("ApiLedger: a bad annotation is ignored with a log, the rest is read", "[api-ledger]") {
  Fixture f;
  nlohmann::json bad = PendingPodJson("bad", 8);
  bad["metadata"]["annotations"][kPreferenceKey] = "{not json";
  nlohmann::json good = PendingPodJson("good", 8);
  good["metadata"]["annotations"][kIntentKey] =
      R"({"nodeGroup":"g","nodeCount":1,"recorded":"2027-01-15T08:00:00Z"})";
  f.server.Upsert(Resource::kPods, bad);
  f.server.Upsert(Resource::kPods, good);
  Process reader(f);
  REQUIRE(reader.Synced());
  CHECK(reader.ledger->Preferences().empty());
  CHECK(reader.ledger->stats().bad_annotations == 1);
  REQUIRE(reader.ledger->Intents().size() == 1);
  CHECK(reader.ledger->Intents().at(0).pod_uids == std::vector<std::string>{"uid-good"});
}

TEST_CASE("ApiLedger: preferences and intents are capped as in memory, evictions counted and reported",
          "[api-ledger][hostile]") {
  // Without a cap, --ledger=api kept every preference and intent anyone could make up (issue 15).
  Fixture f;
  for (const char* name : {"a", "b", "c", "d", "e"}) f.server.Upsert(Resource::kPods, PendingPodJson(name, 1));
  std::vector<std::pair<std::string, std::string>> evicted;
  ApiLedgerOptions options = f.Options();
  options.limits.max_preferences = 3;
  options.limits.max_intents = 2;
  options.limits.on_evicted = [&](absl::string_view kind, const std::string& key) { evicted.emplace_back(kind, key); };
  ApiLedger ledger(*f.kube, f.clock, f.log, options);
  for (const char* name : {"a", "b", "c"}) {
    ledger.RecordPreference(PreferenceOf(f.StoredPod(name)));
    f.clock.Advance(absl::Seconds(1));
  }
  ledger.RecordPreference(PreferenceOf(f.StoredPod("a")));  // refreshed: b is now the least recently seen
  f.clock.Advance(absl::Seconds(1));
  ledger.RecordPreference(PreferenceOf(f.StoredPod("d")));
  REQUIRE(ledger.WaitPublished(kPatience));
  std::vector<decision::Preference> all = ledger.Preferences();
  REQUIRE(all.size() == 3);
  CHECK(all[0].pod_uid == "uid-a");  // oldest first by first_seen, kept through the refresh
  CHECK(all[1].pod_uid == "uid-c");
  CHECK(all[2].pod_uid == "uid-d");
  CHECK(ledger.PreferenceCount() == 3);
  CHECK(evicted == std::vector<std::pair<std::string, std::string>>{{"preference", "uid-b"}});

  for (const char* group : {"g1", "g2", "g3"}) {
    decision::Intent intent = P4dIntentFor({"uid-a"});
    intent.node_group = group;
    ledger.RecordIntent(intent);
    f.clock.Advance(absl::Seconds(1));
  }
  std::vector<decision::Intent> intents = ledger.Intents();
  REQUIRE(intents.size() == 1);  // one pod carries one intent: g3 replaced g1 and g2 on uid-a
  CHECK(intents[0].node_group == "g3");
  ledger.RecordIntent(P4dIntentFor({"uid-c"}));
  f.clock.Advance(absl::Seconds(1));
  ledger.RecordIntent(P4dIntentFor({"uid-d"}));
  intents = ledger.Intents();
  REQUIRE(intents.size() == 2);
  CHECK(intents[0].pod_uids == std::vector<std::string>{"uid-c"});
  CHECK(intents[1].pod_uids == std::vector<std::string>{"uid-d"});
  CHECK(evicted.back() == std::pair<std::string, std::string>{"intent", "g3"});
  CHECK(ledger.stats().evicted_preferences == 1);
  CHECK(ledger.stats().evicted_intents == 1);

  SECTION("what the watch brings is capped too") {
    std::vector<kube::Pod> pending;
    for (const char* name : {"a", "b", "c", "d", "e"}) {
      kube::Pod pod = f.StoredPod(name);
      decision::Preference preference = PreferenceOf(pod);
      preference.first_seen = preference.last_seen = f.clock.Now() - absl::Seconds(pending.size());
      pod.metadata.annotations[kPreferenceKey] = PreferenceAnnotationJson(PreferenceAnnotationOf(preference));
      pending.push_back(std::move(pod));
    }
    ApiLedger reader(*f.kube, f.clock, f.log, options);
    reader.SyncPods(pending);
    CHECK(reader.PreferenceCount() == 3);
    CHECK(reader.stats().evicted_preferences == 2);  // e and d, the least recently seen
    CHECK(Describe(reader.Preferences()).find("uid-e") == std::string::npos);
  }
}

TEST_CASE("ApiLedger: a flood of pods refused once each evicts its own preferences, not a renewed one",
          "[api-ledger][hostile]") {
  Fixture f;
  const std::vector<std::string> flood = {"f1", "f2", "f3", "f4", "f5"};
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  for (const std::string& name : flood) f.server.Upsert(Resource::kPods, PendingPodJson(name, 1));
  ApiLedgerOptions options = f.Options();
  options.limits.max_preferences = 3;
  ApiLedger ledger(*f.kube, f.clock, f.log, options);
  ledger.RecordPreference(PreferenceOf(f.StoredPod("trainer")));
  f.clock.Advance(absl::Seconds(10));
  ledger.RecordPreference(PreferenceOf(f.StoredPod("trainer")));  // kube-scheduler's retry
  for (const std::string& name : flood) {
    f.clock.Advance(absl::Seconds(1));
    ledger.RecordPreference(PreferenceOf(f.StoredPod(name)));
  }
  REQUIRE(ledger.WaitPublished(kPatience));
  CHECK(Describe(ledger.Preferences()).find("uid-trainer") != std::string::npos);
  CHECK(ledger.PreferenceCount() == 3);
  CHECK(ledger.stats().evicted_preferences == 3);  // f1, f2, f3

  SECTION("and intents for pods without preferences push out their own, not the real pod's") {
    ApiLedgerOptions intent_options = f.Options();
    intent_options.limits.max_intents = 2;
    ApiLedger intents(*f.kube, f.clock, f.log, intent_options);
    intents.RecordPreference(PreferenceOf(f.StoredPod("trainer")));
    intents.RecordIntent(P4dIntentFor({"uid-trainer"}));
    for (const std::string& name : flood) {
      f.clock.Advance(absl::Seconds(1));
      decision::Intent forged = P4dIntentFor({"uid-" + name});
      forged.node_group = "forged-" + name;
      intents.RecordIntent(forged);
    }
    REQUIRE(intents.WaitPublished(kPatience));
    const std::vector<decision::Intent> kept = intents.Intents();
    REQUIRE(kept.size() == 2);
    CHECK(kept[0].pod_uids == std::vector<std::string>{"uid-trainer"});
    CHECK(kept[1].node_group == "forged-f5");
  }
}

TEST_CASE("ApiLedger: filters share one view of the intents, rebuilt only when they change or expire",
          "[api-ledger]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingPodJson("trainer", 8));
  f.server.Upsert(Resource::kPods, PendingPodJson("web", 1));
  std::unique_ptr<ApiLedger> ledger = f.NewLedger();
  ledger->RecordPreference(PreferenceOf(f.StoredPod("trainer")));
  ledger->RecordPreference(PreferenceOf(f.StoredPod("web")));
  ledger->RecordIntent(P4dIntentFor({"uid-trainer"}));
  const auto first = ledger->IntentsView();
  REQUIRE(first->size() == 1);
  CHECK(ledger->IntentsView() == first);  // the same snapshot: nothing regrouped, nothing copied
  CHECK(Describe(ledger->PreferencesOf({"uid-trainer", "uid-gone"})).starts_with("uid-trainer ml/trainer"));
  CHECK(ledger->PreferencesOf({"uid-trainer", "uid-gone"}).size() == 1);

  f.clock.Advance(absl::Minutes(1));
  ledger->RecordIntent(P4dIntentFor({"uid-web"}));
  const auto second = ledger->IntentsView();
  CHECK(second != first);
  CHECK(second->size() == 2);
  CHECK(first->size() == 1);  // a reader's snapshot never changes under it
  f.clock.Advance(kIntentTtl - absl::Seconds(30));  // the first intent expires
  const auto third = ledger->IntentsView();
  REQUIRE(third->size() == 1);
  CHECK(third->at(0).pod_uids == std::vector<std::string>{"uid-web"});
}

}  // namespace
}  // namespace topofit::kubeclient
