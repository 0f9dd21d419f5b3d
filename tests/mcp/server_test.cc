#include "mcp/server.h"

#include <algorithm>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "history/store.h"
#include "mcp/json_rpc.h"
#include "mcp/modern_result.h"
#include "mcp/request_meta.h"
#include "tests/mcp/seed_records.h"
#include "mcp/tools.h"
#include "tests/kube/status_matchers.h"

namespace topofit::mcp {
namespace {

using nlohmann::json;

history::Record Refusal(int i, const std::string& pod) {
  history::Record r;
  r.time = absl::FromUnixSeconds(1'750'000'000 + i);
  r.reason = history::Reason::kNoNodeFits;
  r.correlation_id = absl::StrCat("uid-", pod);
  r.pods = {{r.correlation_id, pod}};
  r.gpus = 4;
  r.candidates = {history::Candidate{.name = "g5-1", .reason = history::Reason::kMinLink, .unresolvable = true}};
  return r;
}

// An MCP server over an in-memory store holding `records`.
struct Fixture {
  explicit Fixture(std::vector<history::Record> records = {Refusal(0, "ml/a"), Refusal(1, "ml/b"), Refusal(2, "ml/a")})
      : store(history::DecisionStore::Open("").value()),
        server([s = store.get()](const history::DecisionQuery& q) { return s->Query(q); }, "test") {
    REQUIRE_OK(store->Append(records));
  }
  json Call(const json& message) const { return server.Handle(message.dump()).value(); }
  json Request(const std::string& method, json params = json::object()) const {
    return Call({{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", std::move(params)}});
  }
  json Tool(const std::string& name, json arguments) const {
    return Request("tools/call", {{"name", name}, {"arguments", std::move(arguments)}});
  }
  std::unique_ptr<history::DecisionStore> store;
  McpServer server;
};

int ErrorCode(const json& reply) { return reply.contains("error") ? reply["error"]["code"].get<int>() : 0; }

// A 2026-07-28 client's per-request envelope, naming `version`.
json Envelope(const std::string& version = "2026-07-28") {
  return {{kProtocolVersionKey, version},
          {kClientCapabilitiesKey, json::object()},
          {kClientInfoKey, {{"name", "test-client"}, {"version", "1.0"}}}};
}

// `params` with the envelope added, as a 2026-07-28 client sends every request.
json Modern(json params = json::object(), const std::string& version = "2026-07-28") {
  params["_meta"] = Envelope(version);
  return params;
}

TEST_CASE("initialize negotiates the protocol revision", "[mcp]") {
  Fixture f;
  CHECK(f.Request("initialize", {{"protocolVersion", "2025-06-18"}})["result"]["protocolVersion"] == "2025-06-18");
  CHECK(f.Request("initialize", {{"protocolVersion", "2025-11-25"}})["result"]["protocolVersion"] == "2025-11-25");
  // One it does not speak: the newest it does, for the client to decide.
  const json init = f.Request("initialize", {{"protocolVersion", "1999-01-01"}, {"capabilities", json::object()}});
  CHECK(init["result"]["protocolVersion"] == "2025-11-25");
  CHECK(init["result"]["serverInfo"]["name"] == "topofit");
  CHECK(init["result"]["capabilities"].contains("tools"));
  CHECK(init["result"]["capabilities"].contains("resources"));
  CHECK(init["result"]["capabilities"].contains("prompts"));
  CHECK(ErrorCode(f.Request("initialize")) == kInvalidParams);
  CHECK(ErrorCode(f.Request("initialize", {{"protocolVersion", 20251125}})) == kInvalidParams);
}

TEST_CASE("a 2025 client is answered by the 2025 rules, word for word", "[mcp]") {
  Fixture f;
  // The same answers as before revision 2026-07-28 was served: no resultType, no _meta, no cache hints.
  CHECK(f.Request("tools/list")["result"].size() == 1);
  CHECK(f.Request("resources/read", {{"uri", "topofit://decisions/99"}}) ==
        json::parse(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found",)"
                    R"("data":{"uri":"topofit://decisions/99"}}})"));
  CHECK(ErrorCode(f.Request("server/discover")) == kMethodNotFound);  // not a 2025 method
  // _meta without the protocol version is a 2025 client's own business (a progress token, say).
  CHECK_FALSE(f.Request("tools/list", {{"_meta", {{"progressToken", 1}}}})["result"].contains("resultType"));
  // An initialize asking for 2026-07-28 is a 2025 handshake: it cannot lead to the stateless revision.
  CHECK(f.Request("initialize", {{"protocolVersion", "2026-07-28"}})["result"]["protocolVersion"] == "2025-11-25");
  const Answer answer = f.server.Serve(f.Request("ping").dump());
  CHECK_FALSE(answer.modern);
}

TEST_CASE("a 2026 client discovers the server and names the revision on every request", "[mcp]") {
  Fixture f;
  const json discover = f.Request("server/discover", Modern());
  REQUIRE(ErrorCode(discover) == 0);
  const json& found = discover["result"];
  CHECK(found["supportedVersions"] == json::array({"2026-07-28"}));
  // What initialize tells a 2025 client, without the negotiation.
  const json init = f.Request("initialize", {{"protocolVersion", "2025-11-25"}})["result"];
  CHECK(found["capabilities"] == init["capabilities"]);
  CHECK(found["instructions"] == init["instructions"]);
  CHECK(found["_meta"][kServerInfoKey] == init["serverInfo"]);
  CHECK(found["resultType"] == "complete");
  CHECK(found["ttlMs"] == kListTtlMs);
  CHECK(found["cacheScope"] == "private");

  const json tools = f.Request("tools/list", Modern())["result"];
  CHECK(tools["tools"] == f.Request("tools/list")["result"]["tools"]);
  CHECK(tools["resultType"] == "complete");
  CHECK(tools["ttlMs"] == kListTtlMs);
  const json call = f.Request("tools/call", Modern({{"name", "list_decisions"}, {"arguments", {{"limit", 1}}}}))["result"];
  CHECK(call["structuredContent"]["decisions"][0]["id"] == 3);
  CHECK(call["resultType"] == "complete");
  CHECK(call["_meta"][kServerInfoKey]["name"] == "topofit");
  CHECK_FALSE(call.contains("ttlMs"));
  const json read = f.Request("resources/read", Modern({{"uri", "topofit://decisions/2"}}))["result"];
  CHECK(read["ttlMs"] == 0);
  // 2026-07-28 has no -32002: a resource that does not exist is invalid params, the uri in its data.
  const json missing = f.Request("resources/read", Modern({{"uri", "topofit://decisions/99"}}));
  CHECK(ErrorCode(missing) == kInvalidParams);
  CHECK(missing["error"]["data"]["uri"] == "topofit://decisions/99");
  CHECK(ErrorCode(f.Request("tools/call", Modern({{"name", "delete_everything"}}))) == kInvalidParams);

  const Answer answer = f.server.Serve(f.Request("ping").dump());  // the era is each request's own
  CHECK_FALSE(answer.modern);
  const Answer modern = f.server.Serve(
      json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}, {"params", Modern()}}.dump());
  CHECK(modern.modern);
  CHECK_FALSE(modern.refused);
}

TEST_CASE("a 2026 request for the removed handshake or ping, or an unknown method, is method not found", "[mcp]") {
  Fixture f;
  for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe", "unknown/method"}) {
    CAPTURE(method);
    const json reply = f.Call({{"jsonrpc", "2.0"}, {"id", "r"}, {"method", method},
                               {"params", Modern({{"protocolVersion", "2025-11-25"}, {"uri", "topofit://decisions"}})}});
    CHECK(ErrorCode(reply) == kMethodNotFound);
    CHECK(reply["id"] == "r");
  }
}

TEST_CASE("a 2026 request naming a revision this server does not speak gets the versions it does", "[mcp]") {
  Fixture f;
  // The spec's example asks for 1900-01-01 (basic/versioning); a later one, or 2025-11-25 named per request
  // (2025 is reached through initialize), is unsupported the same way.
  for (const char* version : {"1900-01-01", "2025-11-25", "2027-01-01", "v999.0.0"}) {
    CAPTURE(version);
    const json request = {{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/list"}, {"params", Modern({}, version)}};
    const Answer answer = f.server.Serve(request.dump());
    CHECK(answer.modern);
    CHECK(answer.refused);
    CHECK(*answer.reply == json::parse(absl::StrCat(
                               R"({"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version",)",
                               R"("data":{"supported":["2026-07-28"],"requested":")", version, R"("}}})")));
  }
}

TEST_CASE("a 2026 request whose envelope is not whole is invalid params, refused before its method", "[mcp]") {
  Fixture f;
  json no_capabilities = Modern();
  no_capabilities["_meta"].erase(kClientCapabilitiesKey);
  const Answer answer = f.server.Serve(
      json{{"jsonrpc", "2.0"}, {"id", 8}, {"method", "server/discover"}, {"params", no_capabilities}}.dump());
  CHECK(answer.refused);
  CHECK(ErrorCode(*answer.reply) == kInvalidParams);
  CHECK(answer.reply->at("id") == 8);
  CHECK_THAT((*answer.reply)["error"]["message"].get<std::string>(), Catch::Contains(kClientCapabilitiesKey));
  // clientInfo is a SHOULD: a request without it is served.
  json no_info = Modern();
  no_info["_meta"].erase(kClientInfoKey);
  CHECK(ErrorCode(f.Request("server/discover", no_info)) == 0);
  // A notification needs no answer in either era.
  CHECK_FALSE(f.server.Serve(json{{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
                                  {"params", Modern({{"requestId", 1}})}}.dump()).reply);
}

TEST_CASE("over HTTP a 2026 request's headers must fit its body", "[mcp]") {
  Fixture f;
  const json call = {{"jsonrpc", "2.0"},
                     {"id", 9},
                     {"method", "tools/call"},
                     {"params", Modern({{"name", "list_decisions"}, {"arguments", json::object()}})}};
  const Answer fits = f.server.Serve(call.dump(), MirroredHeaders{"2026-07-28", "tools/call", "list_decisions"});
  CHECK_FALSE(fits.refused);
  CHECK(ErrorCode(*fits.reply) == 0);
  const Answer other = f.server.Serve(call.dump(), MirroredHeaders{"2026-07-28", "tools/call", "get_decision"});
  CHECK(other.refused);
  CHECK(ErrorCode(*other.reply) == kHeaderMismatch);
  CHECK(other.reply->at("id") == 9);
  // The header names 2026, the body names nothing: the missing envelope is the error, not a 2025 request.
  const json bare = {{"jsonrpc", "2.0"}, {"id", 10}, {"method", "tools/list"}};
  const Answer headed = f.server.Serve(bare.dump(), MirroredHeaders{"2026-07-28", "tools/list", std::nullopt});
  CHECK(headed.refused);
  CHECK(ErrorCode(*headed.reply) == kInvalidParams);
  // A 2025 header (or none) keeps a request without the envelope a 2025 one.
  CHECK_FALSE(f.server.Serve(bare.dump(), MirroredHeaders{"2025-11-25", std::nullopt, std::nullopt}).modern);
  CHECK_FALSE(f.server.Serve(bare.dump(), MirroredHeaders{}).modern);
  // Header and body disagree on the revision: a mismatch before the revision is looked at.
  const json unsupported = {{"jsonrpc", "2.0"}, {"id", 11}, {"method", "server/discover"}, {"params", Modern({}, "v999.0.0")}};
  CHECK(ErrorCode(*f.server.Serve(unsupported.dump(), MirroredHeaders{"2026-07-28", "server/discover", std::nullopt}).reply) ==
        kHeaderMismatch);
  CHECK(ErrorCode(*f.server.Serve(unsupported.dump(), MirroredHeaders{"v999.0.0", "server/discover", std::nullopt}).reply) ==
        kUnsupportedProtocolVersion);
}

TEST_CASE("the lifecycle's small messages", "[mcp]") {
  Fixture f;
  CHECK(f.Request("ping") == json::parse(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  CHECK_FALSE(f.server.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").has_value());
  CHECK_FALSE(f.server.Handle(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})"));
  CHECK_FALSE(f.server.Handle(R"({"jsonrpc":"2.0","id":9,"result":{}})").has_value());
  CHECK(ErrorCode(f.Request("logging/setLevel", {{"level", "debug"}})) == kMethodNotFound);
  CHECK(ErrorCode(f.Request("resources/subscribe", {{"uri", "topofit://decisions"}})) == kMethodNotFound);
  CHECK(f.Call({{"jsonrpc", "2.0"}, {"id", "s"}, {"method", "nope"}})["id"] == "s");
}

TEST_CASE("tools answer with structured content, bad arguments are tool errors, an unknown tool a protocol error",
          "[mcp]") {
  Fixture f;
  const json tools = f.Request("tools/list")["result"]["tools"];
  CHECK(tools.size() == 8);
  for (const json& tool : tools) CHECK(tool["annotations"]["readOnlyHint"] == true);

  const json page = f.Tool("list_decisions", {{"pod", "ml/a"}, {"limit", 1}})["result"];
  CHECK_FALSE(page.contains("isError"));
  REQUIRE(page["structuredContent"]["decisions"].size() == 1);
  CHECK(page["structuredContent"]["decisions"][0]["id"] == 3);
  CHECK(page["structuredContent"]["nextCursor"] == "3");
  CHECK(json::parse(page["content"][0]["text"].get<std::string>()) == page["structuredContent"]);
  const json next = f.Tool("list_decisions", {{"pod", "ml/a"}, {"cursor", "3"}, {"limit", 3.0}})["result"];
  CHECK(next["structuredContent"]["decisions"][0]["id"] == 1);
  CHECK_FALSE(next["structuredContent"].contains("nextCursor"));

  struct Row {
    const char* name;
    json arguments;
    const char* says;
  };
  const Row rows[] = {
      {"limit a string", {{"limit", "10"}}, "'limit' must be an integer"},
      {"limit huge", {{"limit", 1'000'000}}, "'limit' must be an integer in 1..100"},
      {"limit past int64", json::parse(R"({"limit": 99999999999999999999})"), "in 1..100"},
      {"limit 1e300", json::parse(R"({"limit": 1e300})"), "in 1..100"},
      {"limit fractional", {{"limit", 2.5}}, "in 1..100"},
      {"limit zero", {{"limit", 0}}, "in 1..100"},
      {"limit negative", {{"limit", -5}}, "in 1..100"},
      {"cursor not ours", {{"cursor", "abc"}}, "cursor 'abc' is not one this endpoint gave"},
      {"cursor a number", {{"cursor", 5}}, "'cursor' must be a string"},
      {"unknown kind", {{"kind", "delete"}}, "unknown decision kind 'delete'"},
      {"bad since", {{"since", "yesterday"}}, "since:"},
      {"unknown argument", {{"color", "red"}}, "unknown argument 'color'"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const json result = f.Tool("list_decisions", row.arguments)["result"];
      CHECK(result["isError"] == true);
      CHECK_THAT(result["content"][0]["text"].get<std::string>(), Catch::Contains(row.says));
    }
  }
  CHECK(f.Tool("explain_pending_pod", json::object())["result"]["isError"] == true);
  CHECK(f.Tool("explain_pending_pod", {{"pod", "no-namespace"}})["result"]["isError"] == true);
  CHECK(f.Tool("explain_pending_pod", {{"pod", 42}})["result"]["isError"] == true);
  CHECK(f.Tool("get_decision", {{"id", 999}})["result"]["isError"] == true);
  CHECK(f.Tool("get_decision", {{"id", "1"}})["result"]["isError"] == true);
  CHECK(ErrorCode(f.Tool("delete_everything", json::object())) == kInvalidParams);
  CHECK(ErrorCode(f.Request("tools/call", {{"name", 5}})) == kInvalidParams);
  CHECK(ErrorCode(f.Request("tools/call", {{"name", "list_decisions"}, {"arguments", json::array()}})) == kInvalidParams);
  CHECK(ErrorCode(f.Request("tools/list", {{"cursor", "anything"}})) == kInvalidParams);

  // Nothing above changed what it answers.
  CHECK(f.Tool("list_decisions", {{"pod", "ml/a"}, {"limit", 1}})["result"] == page);
}

TEST_CASE("explain_pending_pod tells the pod's chain", "[mcp]") {
  Fixture f;
  const json pod = f.Tool("explain_pending_pod", {{"pod", "ml/a"}})["result"]["structuredContent"];
  CHECK(pod["pod"] == "ml/a");
  CHECK(pod["correlationId"] == "uid-ml/a");
  CHECK(pod["decisions"].size() == 2);
  CHECK_THAT(pod["text"].get<std::string>(), Catch::StartsWith("ml/a pending"));
  const json none = f.Tool("explain_pending_pod", {{"pod", "ml/zzz"}})["result"]["structuredContent"];
  CHECK(none["decisions"].empty());
  CHECK(none["text"] == "nothing recorded");
}

TEST_CASE("diagnose_pod answers a pod's state and first cause in a few hundred bytes", "[mcp]") {
  Fixture f(history::SeedRecords());
  const json restarted = f.Tool("diagnose_pod", {{"pod", "ml/infer-1"}})["result"];
  REQUIRE_FALSE(restarted.contains("isError"));
  CHECK(restarted["structuredContent"]["state"] == "restarting");
  CHECK(restarted["structuredContent"]["cause"] == "gpu-fault");
  CHECK(restarted["structuredContent"]["more"] == "explain_restart");
  CHECK(restarted["content"][0]["text"].get<std::string>().size() < 2048);
  const json none = f.Tool("diagnose_pod", {{"pod", "ml/zzz"}})["result"]["structuredContent"];
  CHECK(none["cause"] == "no-record");
  CHECK_FALSE(none.contains("correlationId"));
  CHECK(f.Tool("diagnose_pod", {{"pod", "no-namespace"}})["result"]["isError"] == true);
  CHECK(f.Tool("diagnose_pod", {{"pod", "ml/a"}, {"limit", 3}})["result"]["isError"] == true);
}

TEST_CASE("explain_restart tells a pod's restarts with their cause and evidence, and where it was bound", "[mcp]") {
  Fixture f(history::SeedRecords());
  const json told = f.Tool("explain_restart", {{"pod", "ml/infer-1"}})["result"];
  REQUIRE_FALSE(told.contains("isError"));
  const json& content = told["structuredContent"];
  CHECK(content["restart"] == "ml/infer-1");
  REQUIRE(content["decisions"].size() == 2);
  CHECK(content["decisions"][0]["kind"] == "restart");
  CHECK(content["decisions"][0]["reason"] == "gpu-fault");
  CHECK(content["decisions"][0]["restart"]["xids"] == json::array({79}));
  CHECK(content["decisions"][1]["kind"] == "bind");
  const std::string text = content["text"];
  CHECK_THAT(text, Catch::Contains("is gpu-fault"));
  CHECK_THAT(text, Catch::Contains("RuntimeError: CUDA error: unknown error"));
  CHECK(told["content"][0]["text"].get<std::string>().size() < 2048);  // an answer a model reads whole
  CHECK(f.Tool("explain_restart", {{"pod", "infer-1"}})["result"]["isError"] == true);
  CHECK(f.Tool("explain_restart", json::object())["result"]["isError"] == true);
  CHECK(f.Tool("explain_restart", {{"pod", "ml/never-restarted"}})["result"]["structuredContent"]["text"] ==
        "nothing recorded");
  const json restarts = f.Tool("list_decisions", {{"kind", "restart"}})["result"]["structuredContent"];
  CHECK(restarts["decisions"].size() == 1);
}

// Issue 34: the headroom controller's changes reach an agent as they reach `topofit explain headroom`.
TEST_CASE("explain_headroom tells each shape's warm capacity and why it changed, and list_decisions takes its kind",
          "[mcp][headroom]") {
  const auto changed = [](const std::string& shape, int was, int replicas, int seconds) {
    history::Record r;
    r.time = absl::FromUnixSeconds(1'750'000'000 + seconds);
    r.component = history::Component::kHeadroom;
    r.kind = history::Kind::kHeadroom;
    r.reason = replicas > was ? history::Reason::kHeadroomGrew : history::Reason::kHeadroomShrank;
    r.headroom = history::HeadroomDetail{.shape = shape, .replicas = replicas, .was = was, .target = replicas,
                                         .fill_rate = 0.8, .boot_seconds = 600, .rises = 60, .largest_rise = 3,
                                         .mechanism = "capacity-buffers"};
    return r;
  };
  Fixture f({Refusal(0, "ml/a"), changed("topofit-headroom-1gpu", 0, 4, 10), changed("topofit-headroom-4gpu-nv", 0, 2, 20),
             changed("topofit-headroom-1gpu", 4, 2, 1800)});
  const json every = f.Tool("explain_headroom", json::object())["result"];
  REQUIRE_FALSE(every.contains("isError"));
  CHECK(every["structuredContent"]["decisions"].size() == 3);
  const json one = f.Tool("explain_headroom", {{"shape", "topofit-headroom-1gpu"}})["result"]["structuredContent"];
  CHECK(one["headroom"] == "topofit-headroom-1gpu");
  REQUIRE(one["decisions"].size() == 2);
  CHECK(one["decisions"][0]["reason"] == "headroom-shrank");
  CHECK(one["decisions"][0]["headroom"]["was"] == 4);
  CHECK(f.Tool("explain_headroom", {{"shape", "x"}, {"pod", "ml/a"}})["result"]["isError"] == true);

  const json tools = f.Request("tools/list")["result"]["tools"];
  const auto list = std::find_if(tools.begin(), tools.end(), [](const json& t) { return t["name"] == "list_decisions"; });
  REQUIRE(list != tools.end());
  const json kinds = (*list)["inputSchema"]["properties"]["kind"]["enum"];
  CHECK(std::find(kinds.begin(), kinds.end(), "headroom") != kinds.end());
  CHECK(f.Tool("list_decisions", {{"kind", "headroom"}})["result"]["structuredContent"]["decisions"].size() == 3);
}

TEST_CASE("an answer is capped in bytes, and the cursor goes on from the last record kept", "[mcp]") {
  std::vector<history::Record> records;
  for (int i = 0; i < 100; ++i) {
    history::Record r = Refusal(i, "ml/big");
    r.candidates.assign(60, history::Candidate{.name = std::string(40, 'n'), .reason = history::Reason::kGpuCount,
                                               .topology = history::TopologyDetail{"0,1,2,3,4,5,6,7", "SYS", 1}});
    records.push_back(r);
  }
  Fixture f(records);
  const json page = f.Tool("list_decisions", {{"limit", 100}})["result"]["structuredContent"];
  CHECK(page["truncated"] == true);
  CHECK(page.dump().size() <= kMaxToolBytes);
  const size_t kept = page["decisions"].size();
  REQUIRE(kept > 0);
  REQUIRE(kept < 100);
  CHECK(page["nextCursor"] == std::to_string(page["decisions"].back()["id"].get<int64_t>()));
  const json rest = f.Tool("list_decisions", {{"limit", 100}, {"cursor", page["nextCursor"]}})["result"]["structuredContent"];
  CHECK(rest["decisions"][0]["id"] == page["decisions"].back()["id"].get<int64_t>() - 1);
  const json told = f.Tool("explain_pending_pod", {{"pod", "ml/big"}})["result"]["structuredContent"];
  CHECK(told["truncated"] == true);
  CHECK(told.dump().size() <= kMaxToolBytes);
}

TEST_CASE("resources and the prompt", "[mcp]") {
  Fixture f;
  CHECK(f.Request("resources/list")["result"]["resources"].size() == 2);
  CHECK(f.Request("resources/templates/list")["result"]["resourceTemplates"].size() == 2);
  const json read = f.Request("resources/read", {{"uri", "topofit://decisions/2"}})["result"];
  CHECK(json::parse(read["contents"][0]["text"].get<std::string>())["id"] == 2);
  CHECK(read["contents"][0]["uri"] == "topofit://decisions/2");
  const json pod = f.Request("resources/read", {{"uri", "topofit://pods/ml/b"}})["result"];
  CHECK(json::parse(pod["contents"][0]["text"].get<std::string>())["decisions"].size() == 1);
  for (const char* uri : {"topofit://decisions/99", "topofit://decisions/x", "topofit://decisions/-1",
                          "topofit://pods/ml", "topofit://pods/a/b/c", "file:///etc/passwd", ""}) {
    CAPTURE(uri);
    const json missing = f.Request("resources/read", {{"uri", uri}});
    CHECK(ErrorCode(missing) == kResourceNotFound);
  }
  CHECK(ErrorCode(f.Request("resources/read")) == kInvalidParams);

  CHECK(f.Request("prompts/list")["result"]["prompts"][0]["name"] == "diagnose-pending-gpu-pod");
  const json prompt = f.Request("prompts/get", {{"name", "diagnose-pending-gpu-pod"}, {"arguments", {{"pod", "ml/a"}}}});
  CHECK_THAT(prompt["result"]["messages"][0]["content"]["text"].get<std::string>(), Catch::Contains("\"ml/a\""));
  CHECK(ErrorCode(f.Request("prompts/get", {{"name", "diagnose-pending-gpu-pod"}})) == kInvalidParams);
  CHECK(ErrorCode(f.Request("prompts/get", {{"name", "other"}, {"arguments", {{"pod", "ml/a"}}}})) == kInvalidParams);
}

TEST_CASE("without a history the tools say why, as tool errors", "[mcp]") {
  const McpServer server(nullptr, "test", "decision database x.db: file is not a database");
  const json reply = server.Handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/call",)"
                                   R"("params":{"name":"list_decisions","arguments":{}}})").value();
  CHECK(reply["result"]["isError"] == true);
  CHECK_THAT(reply["result"]["content"][0]["text"].get<std::string>(), Catch::Contains("file is not a database"));
}

TEST_CASE("tool arguments nested 150,000 deep are a parse error, not a crash", "[mcp]") {
  // 300 KB: the message parsed, then copied into the tool's arguments, overflowed the stack (SIGSEGV).
  const Fixture f;
  std::string deep = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"explain_pending_pod","arguments":{"pod":)";
  deep += std::string(150'000, '[') + std::string(150'000, ']') + "}}}";
  const json reply = f.server.Handle(deep).value();
  CHECK(ErrorCode(reply) == kParseError);
  CHECK_THAT(reply["error"]["message"].get<std::string>(), Catch::Contains("nested deeper than 64 levels"));
  // A string full of brackets is text, not nesting.
  const json fine = f.Tool("explain_pending_pod", {{"pod", std::string(150'000, '[')}});
  CHECK(ErrorCode(fine) == 0);
}

}  // namespace
}  // namespace topofit::mcp
