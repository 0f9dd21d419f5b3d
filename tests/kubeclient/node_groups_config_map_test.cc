#include "kubeclient/node_groups_config_map.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/codec/hostile_json.h"
#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using testing::DirectClientFor;
using testing::FakeApiServer;

constexpr int64_t kStartSeconds = 1'800'000'000;
const std::string kConfigMapPath = "/api/v1/namespaces/topofit/configmaps/topofit-node-groups";

// A p4d group's template as CA builds it for a group at size zero: labels, a taint, GPUs.
kube::Node P4dTemplate(const std::string& instance_type = "p4d.24xlarge") {
  kube::Node node = kube::testing::MakeNode().name("template-node-for-p4d").label("node.kubernetes.io/instance-type", instance_type)
                        .gpus(8).taint("nvidia.com/gpu", "present", kube::TaintEffect::kNoSchedule);
  node.metadata.annotations["topofit.io/price-per-node-hour"] = "32.77";
  node.status.capacity = node.status.allocatable;
  return node;
}

struct Fixture {
  Fixture() : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {
    rest = DirectClientFor(server, *certs);
    kube = std::make_unique<KubeApi>(*rest);
  }

  // One process's view (an expander's or an extender's), its reader not started: tests Refresh by hand.
  std::unique_ptr<NodeGroupsConfigMap> NewProcess(size_t max_bytes = NodeGroupsConfigMapOptions{}.max_bytes) const {
    NodeGroupsConfigMapOptions options;
    options.namespace_name = "topofit";
    options.max_bytes = max_bytes;
    options.ttl = absl::Hours(24);
    options.publishing.initial_backoff = absl::Milliseconds(1);
    options.publishing.max_backoff = absl::Milliseconds(2);
    options.publishing.uniform_random = [] { return 0.5; };
    return std::make_unique<NodeGroupsConfigMap>(*kube, clock, log, options);
  }
  // PATCHes of the ConfigMap and POSTs creating it.
  size_t Writes() const {
    size_t writes = 0;
    for (const testing::RecordedRequest& request : server.requests()) {
      writes += request.method != "GET" && absl::StartsWith(request.target, "/api/v1/namespaces/topofit/configmaps");
    }
    return writes;
  }
  nlohmann::json Document() const {
    const nlohmann::json config_map = server.StoredObject(kConfigMapPath);
    REQUIRE(config_map.is_object());
    return nlohmann::json::parse(config_map["data"][kNodeGroupsKey].get<std::string>());
  }

  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
  std::unique_ptr<KubeApi> kube;
  server::FakeClock clock{absl::FromUnixSeconds(kStartSeconds)};
  mutable spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
};

TEST_CASE("NodeGroupsConfigMap: what the expander learns of a group at size zero reaches the extender",
          "[node-groups]") {
  Fixture f;
  std::unique_ptr<NodeGroupsConfigMap> expander = f.NewProcess();
  std::unique_ptr<NodeGroupsConfigMap> extender = f.NewProcess();
  REQUIRE_OK(extender->Refresh());  // no ConfigMap yet: nothing, no error
  CHECK(extender->Live().empty());

  // A GCE instance group's URL is no ConfigMap key: every group is one entry of one key.
  const std::string group = "https://www.googleapis.com/compute/v1/projects/p/zones/z/instanceGroups/a2-ultra";
  expander->Record({{group, P4dTemplate()}}, /*trusted=*/true);
  REQUIRE(expander->WaitPublished(testing::kPatience));
  const nlohmann::json document = f.Document();
  REQUIRE(document.size() == 1);
  CHECK(document[0]["nodeGroup"] == group);
  CHECK(document[0]["seen"] == "2027-01-15T08:00:00Z");
  CHECK(document[0]["trusted"] == true);

  REQUIRE_OK(extender->Refresh());
  const std::map<std::string, ledger::NodeGroupTemplate> live = extender->Live();
  REQUIRE(live.size() == 1);
  CHECK(live.at(group).trusted);
  const kube::Node& read = live.at(group).template_node;
  const kube::Node written = P4dTemplate();
  CHECK(read.metadata.labels == written.metadata.labels);
  CHECK(read.metadata.annotations == written.metadata.annotations);
  CHECK(read.status.allocatable == written.status.allocatable);
  CHECK(read.status.capacity == written.status.capacity);
  REQUIRE(read.spec.taints.size() == 1);
  CHECK(read.spec.taints[0].key == "nvidia.com/gpu");
  CHECK(read.spec.taints[0].effect == kube::TaintEffect::kNoSchedule);

  // A day after CA last offered it, readers drop it.
  f.clock.Advance(absl::Hours(24) + absl::Seconds(1));
  CHECK(extender->Live().empty());
  REQUIRE_OK(extender->Refresh());
  CHECK(extender->Live().empty());
}

TEST_CASE("NodeGroupsConfigMap: CA's loop every 10 s is not a write each, a changed or aging template is",
          "[node-groups]") {
  Fixture f;
  std::unique_ptr<NodeGroupsConfigMap> expander = f.NewProcess();
  expander->Record({{"p4d", P4dTemplate()}}, /*trusted=*/true);
  REQUIRE(expander->WaitPublished(testing::kPatience));
  const size_t first = f.Writes();
  CHECK(first == 2);  // the PATCH found no ConfigMap (404), the POST created it

  for (int loop = 0; loop < 6; ++loop) {
    f.clock.Advance(absl::Seconds(10));
    expander->Record({{"p4d", P4dTemplate()}}, /*trusted=*/true);
  }
  REQUIRE(expander->WaitPublished(testing::kPatience));
  CHECK(f.Writes() == first);

  expander->Record({{"p4d", P4dTemplate("p4de.24xlarge")}}, /*trusted=*/true);  // the template changed
  REQUIRE(expander->WaitPublished(testing::kPatience));
  CHECK(f.Writes() == first + 1);
  CHECK(f.Document()[0]["template"]["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "p4de.24xlarge");

  // Its published `seen` older than a quarter of the TTL: written again, so readers never see it expire.
  f.clock.Advance(absl::Hours(6) + absl::Seconds(1));
  expander->Record({{"p4d", P4dTemplate("p4de.24xlarge")}}, /*trusted=*/true);
  REQUIRE(expander->WaitPublished(testing::kPatience));
  CHECK(f.Writes() == first + 2);
}

TEST_CASE("NodeGroupsConfigMap: two writers converge, the entry seen last wins, a bad entry is skipped",
          "[node-groups]") {
  Fixture f;
  std::unique_ptr<NodeGroupsConfigMap> first = f.NewProcess();
  std::unique_ptr<NodeGroupsConfigMap> second = f.NewProcess();
  first->Record({{"p4d", P4dTemplate()}, {"g5", P4dTemplate("g5.48xlarge")}}, /*trusted=*/true);
  REQUIRE(first->WaitPublished(testing::kPatience));
  f.clock.Advance(absl::Minutes(1));
  second->Record({{"p4d", P4dTemplate("p4de.24xlarge")}}, /*trusted=*/true);  // newer, for the same group
  REQUIRE_OK(second->Refresh());  // the first's g5 joins; its own p4d entry is newer and stays
  CHECK(second->Live().at("p4d").template_node.metadata.labels.at("node.kubernetes.io/instance-type") == "p4de.24xlarge");
  REQUIRE(second->WaitPublished(testing::kPatience));
  REQUIRE_OK(first->Refresh());
  for (const auto* process : {first.get(), second.get()}) {
    const std::map<std::string, ledger::NodeGroupTemplate> live = process->Live();
    REQUIRE(live.size() == 2);
    CHECK(live.at("p4d").template_node.metadata.labels.at("node.kubernetes.io/instance-type") == "p4de.24xlarge");
    CHECK(live.at("g5").template_node.metadata.labels.at("node.kubernetes.io/instance-type") == "g5.48xlarge");
  }

  // A writer that raced replaced the key without p4d: the next read notices, and p4d is written again.
  nlohmann::json config_map = f.server.StoredObject(kConfigMapPath);
  nlohmann::json without_p4d = nlohmann::json::array();
  for (const nlohmann::json& entry : f.Document()) {
    if (entry["nodeGroup"] != "p4d") without_p4d.push_back(entry);
  }
  config_map["data"][kNodeGroupsKey] = without_p4d.dump();
  f.server.PutStoredObject(kConfigMapPath, config_map);
  REQUIRE_OK(second->Refresh());
  REQUIRE(second->WaitPublished(testing::kPatience));
  CHECK(f.Document().size() == 2);

  // Someone edits the ConfigMap by hand: an entry that does not decode is skipped, the others are read;
  // one without `trusted` (as releases before it wrote) is untrusted.
  nlohmann::json document = f.Document();
  document.push_back({{"nodeGroup", "broken"}, {"seen", "yesterday"}, {"template", {}}});
  document.push_back({{"nodeGroup", "trust-unsaid"}, {"seen", "2027-01-15T08:01:00Z"}, {"trusted", "yes"},
                      {"template", {{"metadata", {{"name", "t"}}}, {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}}}});
  document.push_back({{"nodeGroup", "a100"}, {"seen", "2027-01-15T08:01:00Z"},
                      {"template", {{"metadata", {{"name", "t"}}}, {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}}}});
  config_map = f.server.StoredObject(kConfigMapPath);
  config_map["data"][kNodeGroupsKey] = document.dump();
  f.server.PutStoredObject(kConfigMapPath, config_map);
  std::unique_ptr<NodeGroupsConfigMap> reader = f.NewProcess();
  REQUIRE_OK(reader->Refresh());
  CHECK(reader->Live().size() == 3);
  CHECK(reader->Live().count("broken") == 0);
  CHECK(reader->Live().count("trust-unsaid") == 0);
  CHECK_FALSE(reader->Live().at("a100").trusted);
  CHECK(reader->Live().at("g5").trusted);

  // A key that is not a JSON array is an error, and changes nothing.
  config_map["data"][kNodeGroupsKey] = "{not json";
  f.server.PutStoredObject(kConfigMapPath, config_map);
  CHECK_STATUS(reader->Refresh(), absl::StatusCode::kInvalidArgument,
               "configmap topofit-node-groups: node-groups.json: malformed JSON");
  config_map["data"][kNodeGroupsKey] = "{}";
  f.server.PutStoredObject(kConfigMapPath, config_map);
  CHECK_STATUS(reader->Refresh(), absl::StatusCode::kInvalidArgument, "is not a JSON array");
  CHECK(reader->Live().size() == 3);

  // Nor is a document beyond the limits built: one more group, whose entry holds 100,000 nested arrays
  // beside its fields, is refused whole before anything is read from it.
  const nlohmann::json deep_entry = {
      {"nodeGroup", "h100"}, {"seen", "2027-01-15T08:01:00Z"},
      {"template", {{"metadata", {{"name", "t"}}}, {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}}}};
  std::string deep_text = document.dump();
  deep_text.back() = ',';  // the array goes on with the entry
  config_map["data"][kNodeGroupsKey] =
      absl::StrCat(deep_text,
                   topofit::testing::WithRawMember(deep_entry, "x", topofit::testing::NestedArrays(100'000)), "]");
  f.server.PutStoredObject(kConfigMapPath, config_map);
  CHECK_STATUS(reader->Refresh(), absl::StatusCode::kInvalidArgument,
               "configmap topofit-node-groups: node-groups.json: JSON nested deeper than 64 levels");
  CHECK(reader->Live().size() == 3);
  CHECK(reader->Live().count("h100") == 0);
}

TEST_CASE("NodeGroupsConfigMap: groups past the size budget are left out, those CA offered longest ago first",
          "[node-groups]") {
  Fixture f;
  // One entry's size, as written.
  {
    std::unique_ptr<NodeGroupsConfigMap> probe = f.NewProcess();
    probe->Record({{"p4d-a", P4dTemplate()}}, /*trusted=*/true);
    REQUIRE(probe->WaitPublished(testing::kPatience));
  }
  const size_t entry = f.Document()[0].dump().size();

  // Room for two: the group seen first is left out, the others are written and reach a reader.
  std::unique_ptr<NodeGroupsConfigMap> expander = f.NewProcess(2 * entry + 3);
  for (const char* group : {"p4d-c", "p4d-b", "p4d-d"}) {
    f.clock.Advance(absl::Minutes(1));
    expander->Record({{group, P4dTemplate()}}, /*trusted=*/true);
    REQUIRE(expander->WaitPublished(testing::kPatience));
  }
  nlohmann::json document = f.Document();
  CHECK(document.dump().size() <= 2 * entry + 3);
  REQUIRE(document.size() == 2);
  CHECK(document[0]["nodeGroup"] == "p4d-d");  // seen last, first
  CHECK(document[1]["nodeGroup"] == "p4d-b");
  std::unique_ptr<NodeGroupsConfigMap> extender = f.NewProcess();
  REQUIRE_OK(extender->Refresh());
  CHECK(extender->Live().size() == 2);
  CHECK(extender->Live().count("p4d-c") == 0);
  CHECK(extender->Live().count("p4d-a") == 0);  // the probe's, read in and seen before all
  CHECK(expander->Live().size() == 4);  // the expander itself still knows them

  // Left out for room is not "missing": neither its own read nor CA's next loop writes again.
  const size_t writes = f.Writes();
  REQUIRE_OK(expander->Refresh());
  f.clock.Advance(absl::Seconds(10));
  expander->Record({{"p4d-b", P4dTemplate()}, {"p4d-c", P4dTemplate()}, {"p4d-d", P4dTemplate()}}, /*trusted=*/true);
  REQUIRE(expander->WaitPublished(testing::kPatience));
  CHECK(f.Writes() == writes);
  // A quarter of the TTL on, all three are written again as any aging group is; still room for two.
  f.clock.Advance(absl::Hours(6) + absl::Seconds(1));
  expander->Record({{"p4d-b", P4dTemplate()}, {"p4d-c", P4dTemplate()}, {"p4d-d", P4dTemplate()}}, /*trusted=*/true);
  REQUIRE(expander->WaitPublished(testing::kPatience));
  CHECK(f.Writes() == writes + 1);
  CHECK(f.Document().size() == 2);
}

}  // namespace
}  // namespace topofit::kubeclient
