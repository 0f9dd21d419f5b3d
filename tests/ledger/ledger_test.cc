#include "ledger/ledger.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "tests/server/fake_clock.h"

namespace topofit::ledger {
namespace {

using decision::Intent;
using decision::Preference;

kube::Node Template(const std::string& instance_type) {
  kube::Node node;
  node.metadata.name = "template-" + instance_type;
  node.metadata.labels["node.kubernetes.io/instance-type"] = instance_type;
  return node;
}

Preference For(const std::string& uid, int gpus) {
  Preference p;
  p.pod_uid = uid;
  p.pod_key = "default/" + uid;
  p.gpus = gpus;
  return p;
}

TEST_CASE("preferences keep first_seen, order by age, expire unrefreshed", "[ledger]") {
  server::FakeClock clock;
  const absl::Time start = clock.Now();
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock);
  ledger->RecordPreference(For("b", 4));
  clock.Advance(absl::Minutes(1));
  ledger->RecordPreference(For("a", 8));
  clock.Advance(absl::Minutes(1));
  ledger->RecordPreference(For("b", 4));  // refresh: still the oldest

  std::vector<Preference> all = ledger->Preferences();
  REQUIRE(all.size() == 2);
  CHECK(all[0].pod_uid == "b");
  CHECK(all[0].first_seen == start);
  CHECK(all[0].last_seen == start + absl::Minutes(2));
  CHECK(all[1].pod_uid == "a");

  // a was last seen at +1 min; at +11.5 min it has gone unrefreshed for 10.5 min
  clock.Advance(absl::Minutes(9) + absl::Seconds(30));
  all = ledger->Preferences();
  REQUIRE(all.size() == 1);
  CHECK(all[0].pod_uid == "b");

  ledger->ForgetPod("b");
  CHECK(ledger->Preferences().empty());
}

TEST_CASE("intents lose forgotten pods and expire", "[ledger]") {
  server::FakeClock clock;
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock);
  ledger->RecordIntent(Intent{"p5-group", {"x", "y"}, {{"x", 8}, {"y", 1}}, 1, {}, {}});
  clock.Advance(absl::Minutes(5));
  ledger->RecordIntent(Intent{"p4d-group", {"z"}, {}, 2, {}, {}});
  ledger->ForgetPod("x");
  std::vector<Intent> intents = ledger->Intents();
  REQUIRE(intents.size() == 2);
  CHECK(intents[0].node_group == "p5-group");
  CHECK(intents[0].pod_uids == std::vector<std::string>{"y"});
  CHECK(intents[0].pod_gpus == std::map<std::string, int>{{"y", 1}});
  ledger->ForgetPod("z");  // its intent has no pods left
  REQUIRE(ledger->Intents().size() == 1);
  clock.Advance(absl::Minutes(11));  // p5-group recorded 16 min ago
  CHECK(ledger->Intents().empty());
}

TEST_CASE("preferences and intents are capped, the least recently seen and the oldest make room, reported",
          "[ledger][hostile]") {
  // 20,000 preferences and 15,000 intents, all creatable without authentication, slowed filter from
  // 0.35 ms to 48 ms p50 (issue 15).
  server::FakeClock clock;
  std::vector<std::pair<std::string, std::string>> evicted;
  LedgerLimits limits;
  limits.max_preferences = 3;
  limits.max_intents = 2;
  limits.on_evicted = [&](absl::string_view kind, const std::string& key) { evicted.emplace_back(kind, key); };
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock, {}, limits);
  for (const char* uid : {"a", "b", "c"}) {
    ledger->RecordPreference(For(uid, 1));
    clock.Advance(absl::Seconds(1));
  }
  ledger->RecordPreference(For("a", 1));  // refreshed: b is now the least recently seen
  clock.Advance(absl::Seconds(1));
  ledger->RecordPreference(For("d", 1));
  std::vector<Preference> all = ledger->Preferences();
  REQUIRE(all.size() == 3);
  // Oldest first by first_seen: a kept its first_seen through the refresh.
  CHECK(all[0].pod_uid == "a");
  CHECK(all[1].pod_uid == "c");
  CHECK(all[2].pod_uid == "d");
  CHECK(evicted == std::vector<std::pair<std::string, std::string>>{{"preference", "b"}});

  for (const char* group : {"g1", "g2", "g3"}) ledger->RecordIntent(Intent{group, {"x"}, {}, 1, {}, {}});
  std::vector<Intent> intents = ledger->Intents();
  REQUIRE(intents.size() == 2);
  CHECK(intents[0].node_group == "g2");
  CHECK(intents[1].node_group == "g3");
  CHECK(evicted.back() == std::pair<std::string, std::string>{"intent", "g1"});

  // Expiry still frees room without evicting: c and d expire, e and f fit.
  clock.Advance(absl::Minutes(11));
  ledger->RecordPreference(For("e", 1));
  ledger->RecordPreference(For("f", 1));
  CHECK(ledger->Preferences().size() == 2);
  CHECK(evicted.size() == 2);
}

TEST_CASE("a flood of pods refused once each pushes out its own preferences, not those real pods renew",
          "[ledger][hostile]") {
  // 15,000 invented pods that every node refuses, sent within 30 s, evicted a real pod's preference when
  // the least recently seen made room (issue 38).
  server::FakeClock clock;
  int evicted = 0;
  LedgerLimits limits;  // the defaults: 10,000 preferences
  limits.on_evicted = [&](absl::string_view kind, const std::string& key) {
    CHECK(kind == "preference");
    CHECK(key.rfind("flood-", 0) == 0);
    ++evicted;
  };
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock, {}, limits);
  // The real pod, refused, and refused again on kube-scheduler's retry 10 s later.
  ledger->RecordPreference(For("trainer", 8));
  clock.Advance(absl::Seconds(10));
  ledger->RecordPreference(For("trainer", 8));
  constexpr int kFlood = 15'000;
  for (int i = 0; i < kFlood; ++i) {
    ledger->RecordPreference(For(absl::StrCat("flood-", i), 1));
    if (i % 500 == 0) clock.Advance(absl::Seconds(1));
  }
  CHECK(evicted == kFlood + 1 - 10'000);
  CHECK(ledger->PreferenceCount() == 10'000);
  const std::vector<Preference> kept = ledger->PreferencesOf({"trainer", "flood-0", "flood-14999"});
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].pod_uid == "trainer");
  CHECK(kept[1].pod_uid == "flood-14999");  // the flood's first ones made room for its later ones
}

TEST_CASE("a flood of intents for pods without preferences pushes out its own, not a real scale-up's",
          "[ledger][hostile]") {
  // Anyone who reaches the expander can send BestOptions, each recording an intent for the pods it names.
  server::FakeClock clock;
  std::vector<std::string> evicted;
  LedgerLimits limits;
  limits.max_intents = 3;
  limits.on_evicted = [&](absl::string_view, const std::string& key) { evicted.push_back(key); };
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock, {}, limits);
  ledger->RecordPreference(For("trainer", 8));  // refused by the extender, then a scale-up for it
  ledger->RecordIntent(Intent{"p4d-group", {"trainer"}, {{"trainer", 8}}, 1, {}, {}});
  for (int i = 0; i < 5; ++i) {
    clock.Advance(absl::Seconds(1));
    ledger->RecordIntent(Intent{absl::StrCat("forged-", i), {absl::StrCat("invented-", i)}, {}, 1, {}, {}});
  }
  CHECK(evicted == std::vector<std::string>{"forged-0", "forged-1", "forged-2"});
  const std::vector<Intent> intents = ledger->Intents();
  REQUIRE(intents.size() == 3);
  CHECK(intents[0].node_group == "p4d-group");
}

TEST_CASE("when every preference has been renewed, the least recently seen makes room", "[ledger][hostile]") {
  server::FakeClock clock;
  std::vector<std::string> evicted;
  LedgerLimits limits;
  limits.max_preferences = 2;
  limits.on_evicted = [&](absl::string_view, const std::string& key) { evicted.push_back(key); };
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock, {}, limits);
  for (const char* uid : {"a", "b", "b", "a"}) {  // each renewed; b is then the least recently seen
    ledger->RecordPreference(For(uid, 1));
    clock.Advance(absl::Seconds(1));
  }
  ledger->RecordPreference(For("c", 1));
  CHECK(evicted == std::vector<std::string>{"b"});
}

TEST_CASE("a filter reads the intents as one shared view and only the preferences of their pods", "[ledger]") {
  server::FakeClock clock;
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock);
  ledger->RecordPreference(For("b", 4));
  clock.Advance(absl::Seconds(1));
  ledger->RecordPreference(For("a", 8));
  ledger->RecordIntent(Intent{"p5-group", {"a"}, {{"a", 8}}, 1, {}, {}});
  const std::shared_ptr<const std::vector<Intent>> first = ledger->IntentsView();
  REQUIRE(first->size() == 1);
  CHECK(ledger->IntentsView() == first);  // nothing changed: the same snapshot, no copy
  CHECK(ledger->PreferenceCount() == 2);
  std::vector<Preference> named = ledger->PreferencesOf({"a", "gone", "b", "a"});
  REQUIRE(named.size() == 2);
  CHECK(named[0].pod_uid == "b");  // oldest first, each once
  CHECK(named[1].pod_uid == "a");

  clock.Advance(absl::Minutes(5));
  ledger->RecordIntent(Intent{"p4d-group", {"b"}, {}, 1, {}, {}});
  const std::shared_ptr<const std::vector<Intent>> second = ledger->IntentsView();
  CHECK(second->size() == 2);
  CHECK(first->size() == 1);  // a reader's snapshot never changes under it
  ledger->ForgetPod("a");
  CHECK(ledger->IntentsView()->size() == 1);
  clock.Advance(absl::Minutes(16));  // p4d-group recorded 16 min ago: expired without any write
  CHECK(ledger->IntentsView()->empty());
}

TEST_CASE("node group templates: the latest per group, kept a day after last offered, capped", "[ledger]") {
  server::FakeClock clock;
  std::vector<std::pair<std::string, std::string>> evicted;
  LedgerLimits limits;
  limits.max_node_groups = 2;
  limits.on_evicted = [&](absl::string_view kind, const std::string& key) { evicted.emplace_back(kind, key); };
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock, {}, limits);
  CHECK(ledger->NodeGroups().empty());

  ledger->RecordNodeGroups({{"p4d", Template("p4d.24xlarge")}, {"g5", Template("g5.48xlarge")}}, /*trusted=*/true);
  clock.Advance(absl::Hours(12));
  ledger->RecordNodeGroups({{"p4d", Template("p4de.24xlarge")}}, /*trusted=*/true);  // re-offered: its new template wins
  kube::NodeTemplates groups = TemplatesOf(ledger->NodeGroups(), TemplateTrust::kAny);
  REQUIRE(groups.size() == 2);
  CHECK(groups.at("p4d")->metadata.labels.at("node.kubernetes.io/instance-type") == "p4de.24xlarge");
  CHECK(groups.at("g5")->metadata.labels.at("node.kubernetes.io/instance-type") == "g5.48xlarge");

  // At the cap the group offered least recently (g5) makes room.
  clock.Advance(absl::Hours(1));
  ledger->RecordNodeGroups({{"a100", Template("a2-highgpu-8g")}}, /*trusted=*/true);
  CHECK(evicted == std::vector<std::pair<std::string, std::string>>{{"node-group", "g5"}});
  groups = TemplatesOf(ledger->NodeGroups(), TemplateTrust::kAny);
  CHECK(groups.size() == 2);
  CHECK(groups.count("g5") == 0);

  // A day after it was last offered a template is gone: p4d at +36 h (offered at +12 h), a100 still there.
  clock.Advance(absl::Hours(23) + absl::Minutes(1));
  groups = TemplatesOf(ledger->NodeGroups(), TemplateTrust::kAny);
  REQUIRE(groups.size() == 1);
  CHECK(groups.count("a100") == 1);
}

// Untrusted templates (from a caller the expander could not authenticate) are kept and shown, but read
// apart, never overwrite a trusted one, go first at the cap, and expire like any other.
TEST_CASE("node group templates: an untrusted caller cannot overwrite, crowd out or pass for a trusted one", "[ledger]") {
  server::FakeClock clock;
  std::vector<std::pair<std::string, std::string>> evicted;
  LedgerLimits limits;
  limits.max_node_groups = 3;
  limits.on_evicted = [&](absl::string_view kind, const std::string& key) { evicted.emplace_back(kind, key); };
  std::unique_ptr<Ledger> ledger = NewInMemoryLedger(clock, {}, limits);

  ledger->RecordNodeGroups({{"p4d", Template("p4d.24xlarge")}}, /*trusted=*/true);
  clock.Advance(absl::Minutes(1));
  ledger->RecordNodeGroups({{"p4d", Template("p5.48xlarge")}, {"forged-1", Template("p5.48xlarge")}}, /*trusted=*/false);
  std::map<std::string, NodeGroupTemplate> groups = ledger->NodeGroups();
  REQUIRE(groups.size() == 2);
  CHECK(groups.at("p4d").trusted);
  CHECK(groups.at("p4d").template_node.metadata.labels.at("node.kubernetes.io/instance-type") == "p4d.24xlarge");
  CHECK_FALSE(groups.at("forged-1").trusted);
  CHECK(TemplatesOf(groups, TemplateTrust::kTrustedOnly).size() == 1);
  CHECK(TemplatesOf(groups, TemplateTrust::kAny).size() == 2);

  // At the cap a flood of forged groups evicts its own, never the trusted p4d (offered before all of them).
  clock.Advance(absl::Minutes(1));
  ledger->RecordNodeGroups({{"forged-2", Template("p5.48xlarge")}}, /*trusted=*/false);
  clock.Advance(absl::Minutes(1));
  ledger->RecordNodeGroups({{"forged-3", Template("p5.48xlarge")}}, /*trusted=*/false);
  CHECK(evicted == std::vector<std::pair<std::string, std::string>>{{"node-group", "forged-1"}});
  CHECK(ledger->NodeGroups().count("p4d") == 1);

  // A trusted template replaces an untrusted one of its group; a day later the untrusted ones are gone.
  ledger->RecordNodeGroups({{"forged-3", Template("g5.48xlarge")}}, /*trusted=*/true);
  CHECK(ledger->NodeGroups().at("forged-3").trusted);
  clock.Advance(absl::Hours(24) - absl::Seconds(30));  // p4d and forged-2 are past a day, forged-3 is not
  groups = ledger->NodeGroups();
  CHECK(groups.size() == 1);
  CHECK(groups.count("forged-3") == 1);
  // Once the trusted p4d has expired, an untrusted template of the group is taken again.
  ledger->RecordNodeGroups({{"p4d", Template("p5.48xlarge")}}, /*trusted=*/false);
  CHECK_FALSE(ledger->NodeGroups().at("p4d").trusted);
}

}  // namespace
}  // namespace topofit::ledger
