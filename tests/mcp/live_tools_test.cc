#include "mcp/live_tools.h"

#include <memory>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "codec/topology_json.h"
#include "ledger/ledger.h"
#include "mcp/json_rpc.h"
#include "mcp/server.h"
#include "mcp/tool_parts.h"
#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"
#include "tests/mcp/seed_records.h"
#include "tests/server/fake_clock.h"

namespace topofit::mcp {
namespace {

using kube::testing::MakeNode;
using nlohmann::json;
using topology::GpuSet;

constexpr int64_t kStart = 1'700'000'000;  // FakeClock's start
constexpr char kGroupLabel[] = "eks.amazonaws.com/nodegroup";
// Two GPUs joined by NVLink, as `nvidia-smi topo -m` prints them.
constexpr char kNvidiaSmiPair[] = "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n";

kube::testing::NodeBuilder P4d(const std::string& name, const std::string& group, int64_t created = kStart - 3600) {
  return MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").label(kGroupLabel, group)
      .created(created).gpus(8);
}

// A real GPU state and ledger, as the extender has them, and MCP servers over them: `live` as /mcp has
// it, `history_only` as a `topofit mcp --db` session has it (no history either: these tools do not read it).
struct Fixture {
  Fixture()
      : gpus(scheduler::NewInMemoryGpuState()),
        ledger(ledger::NewInMemoryLedger(clock)),
        live(nullptr, "test", "", LiveState{gpus.get(), ledger.get()}),
        history_only(nullptr, "test") {
    // p4d-a: two old nodes (one running a 2-GPU pod topofit placed) and one its scale-up brought for ml/big.
    REQUIRE(gpus->UpsertNode(P4d("p4d-a-1", "p4d-a")).ok());
    REQUIRE(gpus->UpsertNode(P4d("p4d-a-2", "p4d-a")).ok());
    REQUIRE(gpus->UpsertNode(P4d("p4d-a-3", "p4d-a", kStart + 60)).ok());
    REQUIRE(gpus->Assume(scheduler::PodRef{"uid-small", "ml", "small"}, "p4d-a-1", GpuSet::FromMask(0b11)).ok());
    REQUIRE(gpus->UpsertNode(
        MakeNode().name("pair-1").gpus(2).annotation("topofit.io/gpu-topology", kNvidiaSmiPair)).ok());
    decision::Preference big;
    big.pod_uid = "uid-big";
    big.pod_key = "ml/big";
    big.gpus = 8;
    big.min_link = topology::LinkClass::kNvLink;
    big.refused_nodes = {"p4d-a-1: 6 GPUs free"};
    ledger->RecordPreference(big);
    ledger->RecordIntent(history::OneNodeIntent("p4d-a", kGroupLabel, "uid-big", 8));
    // A group at size zero, known from the templates CA sent the expander.
    ledger->RecordNodeGroups({{"p5-a", MakeNode().name("template-p5").label("node.kubernetes.io/instance-type", "p5.48xlarge")
                                           .gpus(8).taint("nvidia.com/gpu", "present", kube::TaintEffect::kNoSchedule)}},
                             /*trusted=*/false);
  }
  json Request(const McpServer& server, const std::string& method, json params) const {
    return server.Handle(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", std::move(params)}}.dump())
        .value();
  }
  json Tool(const std::string& name, json arguments) const {
    return Request(live, "tools/call", {{"name", name}, {"arguments", std::move(arguments)}})["result"];
  }
  // A tool error's text; fails the test for an answer that is not one.
  static std::string ToolError(const json& result) {
    CHECK(result.value("isError", false));
    return result["content"][0]["text"].get<std::string>();
  }

  server::FakeClock clock;
  std::unique_ptr<scheduler::GpuState> gpus;
  std::unique_ptr<ledger::Ledger> ledger;
  McpServer live;
  McpServer history_only;
};

std::set<std::string> Names(const json& list, const char* key) {
  std::set<std::string> names;
  for (const json& entry : list) names.insert(entry[key].get<std::string>());
  return names;
}

TEST_CASE("the live tools and topology resources are listed only where the live state is", "[mcp][live]") {
  Fixture f;
  const json tools = f.Request(f.live, "tools/list", json::object())["result"]["tools"];
  CHECK(Names(tools, "name") == std::set<std::string>{"diagnose_pod", "explain_pending_pod", "explain_scale_up", "list_idle_gpus",
                                                      "explain_restart", "explain_headroom", "list_decisions", "get_decision",
                                                      "get_topology", "get_ledger"});
  for (const json& tool : tools) {
    CAPTURE(tool["name"]);
    CHECK(tool["annotations"]["readOnlyHint"] == true);
    CHECK(tool["outputSchema"]["type"] == "object");
  }
  CHECK(f.Request(f.history_only, "tools/list", json::object())["result"]["tools"].size() == 8);
  const auto instructions = [&f](const McpServer& server) {
    return f.Request(server, "initialize", {{"protocolVersion", "2025-11-25"}})["result"]["instructions"].get<std::string>();
  };
  CHECK_THAT(instructions(f.live), Catch::Contains("get_topology"));
  CHECK_THAT(instructions(f.history_only), !Catch::Contains("get_topology"));
  // The diagnose prompt sends the client to get_topology only where it is served.
  const auto prompt = [&f](const McpServer& server) {
    return f.Request(server, "prompts/get", {{"name", "diagnose-pending-gpu-pod"}, {"arguments", {{"pod", "ml/a"}}}})
        ["result"]["messages"][0]["content"]["text"].get<std::string>();
  };
  CHECK_THAT(prompt(f.live), Catch::Contains("4. Call get_topology on a node that refused it"));
  CHECK_THAT(prompt(f.live), Catch::Contains("6. Call list_idle_gpus"));
  CHECK_THAT(prompt(f.history_only), !Catch::Contains("get_topology"));
  CHECK_THAT(prompt(f.history_only), Catch::Contains("5. Call list_idle_gpus"));
  CHECK(Names(f.Request(f.live, "resources/templates/list", json::object())["result"]["resourceTemplates"],
              "uriTemplate")
            .contains("topofit://topology/node/{name}"));
  CHECK(f.Request(f.history_only, "resources/templates/list", json::object())["result"]["resourceTemplates"].size() == 2);

  // Without the live state: an unknown tool (-32602), saying where it is served; the URIs are not found.
  const json call = f.Request(f.history_only, "tools/call", {{"name", "get_topology"}, {"arguments", {{"node", "p4d-a-1"}}}});
  CHECK(call["error"]["code"] == kInvalidParams);
  CHECK_THAT(call["error"]["message"].get<std::string>(), Catch::Contains("served on /mcp of a running topofit extender"));
  CHECK(f.Request(f.history_only, "resources/read", {{"uri", "topofit://topology/node/p4d-a-1"}})["error"]["code"] ==
        kResourceNotFound);
}

TEST_CASE("get_topology: a node's topology through the descriptor codec, where it came from, its free GPUs",
          "[mcp][live]") {
  Fixture f;
  const json result = f.Tool("get_topology", {{"node", "p4d-a-1"}});
  REQUIRE_FALSE(result.value("isError", false));
  CHECK(json::parse(result["content"][0]["text"].get<std::string>()) == result["structuredContent"]);
  const json node = result["structuredContent"]["nodes"].at(0);
  CHECK(node["node"] == "p4d-a-1");
  CHECK(node["nodeGroup"] == "p4d-a");
  CHECK(node["source"]["origin"] == "catalog:dgx-a100");
  CHECK(node["source"]["model"] == "catalog:dgx-a100");
  CHECK(node["source"]["reason"] == "instance type p4d.24xlarge is catalog shape dgx-a100");
  CHECK(node["topology"] == codec::TopologyToJson(*f.gpus->Snapshot("p4d-a-1")->topology));
  CHECK(node["nvlinkIslands"] == json::parse("[[0,1,2,3,4,5,6,7]]"));  // one NVSwitch
  CHECK(node["weakestLink"] == "NV");
  CHECK(node["gpus"]["free"] == json::parse("[2,3,4,5,6,7]"));
  CHECK(node["gpus"]["byTopofit"] == json::parse("[0,1]"));
  CHECK(node["gpus"]["byPod"] == json::parse(R"({"uid-small":[0,1]})"));
  CHECK(node["gpus"]["freeWeakestLink"] == "NV");

  const json pair = f.Tool("get_topology", {{"node", "pair-1"}})["structuredContent"]["nodes"].at(0);
  CHECK(pair["source"]["origin"] == "annotation");
  CHECK(pair["source"]["model"] == "nvidia-smi");
  CHECK(pair["source"]["reason"] == "annotation topofit.io/gpu-topology: nvidia-smi topo -m output");
  CHECK(pair["nodeGroup"] == "");

  const json resource = f.Request(f.live, "resources/read", {{"uri", "topofit://topology/node/p4d-a-1"}});
  CHECK(json::parse(resource["result"]["contents"][0]["text"].get<std::string>())["nodes"][0] == node);
}

TEST_CASE("get_topology: a node group's nodes in name order, paged by a cursor", "[mcp][live]") {
  Fixture f;
  const json first = f.Tool("get_topology", {{"group", "p4d-a"}, {"limit", 2}})["structuredContent"];
  CHECK(first["group"] == "p4d-a");
  CHECK(Names(first["nodes"], "node") == std::set<std::string>{"p4d-a-1", "p4d-a-2"});
  REQUIRE(first.contains("nextCursor"));
  const json second = f.Tool("get_topology", {{"group", "p4d-a"}, {"limit", 2}, {"cursor", first["nextCursor"]}});
  CHECK(Names(second["structuredContent"]["nodes"], "node") == std::set<std::string>{"p4d-a-3"});
  CHECK_FALSE(second["structuredContent"].contains("nextCursor"));
  const json resource = f.Request(f.live, "resources/read", {{"uri", "topofit://topology/group/p4d-a"}});
  CHECK(json::parse(resource["result"]["contents"][0]["text"].get<std::string>())["nodes"].size() == 3);
}

TEST_CASE("get_topology: unknown nodes and groups, and bad arguments, are tool errors", "[mcp][live]") {
  Fixture f;
  CHECK_THAT(Fixture::ToolError(f.Tool("get_topology", {{"node", "nope"}})),
             Catch::Contains("no node 'nope' in the GPU state (topofit knows 4 node(s)"));
  CHECK_THAT(Fixture::ToolError(f.Tool("get_topology", {{"group", "nope"}})),
             Catch::Contains("no node of group 'nope' in the GPU state (groups known: p4d-a)"));
  for (const json& args : {json::object(), json{{"node", "p4d-a-1"}, {"group", "p4d-a"}}, json{{"node", 7}},
                           json{{"node", "p4d-a-1"}, {"limit", 2}}, json{{"group", "p4d-a"}, {"limit", 101}},
                           json{{"group", "p4d-a"}, {"cursor", "p4d-a-1"}}, json{{"group", "p4d-a"}, {"cursor", "ledger-offset:1"}},
                           json{{"group", "p4d-a"}, {"color", "red"}}}) {
    CAPTURE(args);
    CHECK_FALSE(Fixture::ToolError(f.Tool("get_topology", args)).empty());
  }
  CHECK(f.Request(f.live, "resources/read", {{"uri", "topofit://topology/node/nope"}})["error"]["code"] ==
        kResourceNotFound);
  CHECK(f.Request(f.live, "resources/read", {{"uri", "topofit://topology/group/"}})["error"]["code"] ==
        kResourceNotFound);
  // Still answering.
  CHECK_FALSE(f.Tool("get_topology", {{"node", "p4d-a-1"}}).value("isError", false));
}

TEST_CASE("get_topology: a group's page stays under the byte cap and the cursor goes through every node",
          "[mcp][live]") {
  Fixture f;
  // 16 GPUs, every pair NVLink: the descriptor lists all 120 pairs, so 100 such nodes pass 256 KiB.
  json descriptor = {{"gpus", json::array()}, {"defaultLink", "NV2"}};
  for (int g = 0; g < 16; ++g) descriptor["gpus"].push_back({{"product", "NVIDIA-H100-80GB-HBM3"}});
  for (int i = 0; i < 150; ++i) {
    REQUIRE(f.gpus->UpsertNode(MakeNode().name(absl::StrCat("big-", 1000 + i)).label(kGroupLabel, "big").gpus(16)
                                   .annotation("topofit.io/gpu-topology", descriptor.dump())).ok());
  }
  const size_t one = f.Tool("get_topology", {{"node", "big-1000"}})["structuredContent"]["nodes"][0].dump().size();
  std::set<std::string> seen;
  json args = {{"group", "big"}, {"limit", 100}};
  int pages = 0;
  for (;; ++pages) {
    REQUIRE(pages < 10);
    const json page = f.Tool("get_topology", args)["structuredContent"];
    CHECK(page.dump().size() <= kMaxToolBytes);
    if (pages == 0) {
      REQUIRE(100 * one > kMaxToolBytes);
      CHECK(page.value("truncated", false));
    }
    for (const json& node : page["nodes"]) CHECK(seen.insert(node["node"].get<std::string>()).second);
    if (!page.contains("nextCursor")) break;
    args["cursor"] = page["nextCursor"];
  }
  CHECK(seen.size() == 150);
}

TEST_CASE("get_ledger: preferences, intents and the GPUs the intents hold, paged as one sequence", "[mcp][live]") {
  Fixture f;
  const json all = f.Tool("get_ledger", json::object())["structuredContent"];
  REQUIRE(all["preferences"].size() == 1);
  CHECK(all["preferences"][0]["pod"] == "ml/big");
  CHECK(all["preferences"][0]["minLink"] == "NV");
  REQUIRE(all["intents"].size() == 1);
  CHECK(all["intents"][0]["nodeGroup"] == "p4d-a");
  // The scale-up brought p4d-a-3 (created after the intent, with the group's label): its 8 GPUs are held.
  REQUIRE(all["holds"].size() == 1);
  CHECK(all["holds"][0]["nodes"] == json::array({"p4d-a-3"}));
  CHECK(all["holds"][0]["gpusHeld"] == json{{"p4d-a-3", 8}});
  CHECK(all["holds"][0]["pods"] == json::array({"ml/big"}));
  REQUIRE(all["nodeGroups"].size() == 1);
  CHECK(all["nodeGroups"][0]["nodeGroup"] == "p5-a");
  CHECK(all["nodeGroups"][0]["gpus"] == 8);
  CHECK(all["nodeGroups"][0]["labels"]["node.kubernetes.io/instance-type"] == "p5.48xlarge");
  CHECK(all["nodeGroups"][0]["taints"] == json::array({"nvidia.com/gpu=present:NoSchedule"}));
  CHECK(all["nodeGroups"][0]["trusted"] == false);  // recorded as from a caller without a client certificate
  CHECK(all["total"] == json{{"preferences", 1}, {"intents", 1}, {"holds", 1}, {"nodeGroups", 1}});
  CHECK_FALSE(all.contains("nextCursor"));

  json args = {{"limit", 1}};
  std::vector<std::string> order;
  for (int page = 0;; ++page) {
    REQUIRE(page < 5);
    const json one = f.Tool("get_ledger", args)["structuredContent"];
    for (const char* list : {"preferences", "intents", "holds", "nodeGroups"}) {
      if (!one[list].empty()) order.push_back(list);
    }
    if (!one.contains("nextCursor")) break;
    args["cursor"] = one["nextCursor"];
  }
  CHECK(order == std::vector<std::string>{"preferences", "intents", "holds", "nodeGroups"});

  for (const json& bad : {json{{"cursor", "ledger-offset:5"}}, json{{"cursor", "after-node:x"}}, json{{"cursor", "1"}},
                          json{{"limit", 0}}, json{{"limit", "all"}}, json{{"pod", "ml/big"}}}) {
    CAPTURE(bad);
    CHECK_FALSE(Fixture::ToolError(f.Tool("get_ledger", bad)).empty());
  }
}

}  // namespace
}  // namespace topofit::mcp
