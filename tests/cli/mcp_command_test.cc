#include "cli/mcp_command.h"

#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/str_split.h"
#include "history/from_decisions.h"
#include "history/store.h"
#include "tests/cli/scratch_dir.h"

namespace topofit::cli {
namespace {

using nlohmann::json;

// `topofit mcp --db` over a database holding one bind, fed `lines` on stdin; its stdout, one reply a line.
std::vector<json> Session(const std::vector<json>& lines) {
  testing::ScratchDir dir("topofit-mcp-command-test");
  {
    auto store = history::DecisionStore::Open(dir.path("decisions.db")).value();
    REQUIRE(store->Append({history::BindRecord(absl::FromUnixSeconds(1'750'000'000), {"uid-1", "ml/p"}, "node-1", 8,
                                               "0,1,2,3,4,5,6,7", true)})
                .ok());
  }
  std::string input;
  for (const json& line : lines) input += line.dump() + "\n";
  std::istringstream in(input);
  std::ostringstream out, err;
  McpOptions options;
  options.db = dir.path("decisions.db");
  REQUIRE(RunMcp(options, in, out, err) == 0);
  std::vector<json> replies;
  for (absl::string_view line : absl::StrSplit(out.str(), '\n', absl::SkipEmpty())) replies.push_back(json::parse(line));
  return replies;
}

json Request(int id, const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json Envelope(const std::string& version) {
  return {{"io.modelcontextprotocol/protocolVersion", version},
          {"io.modelcontextprotocol/clientCapabilities", json::object()}};
}

// On stdio the body is the only signal (no headers): the envelope makes a request 2026-07-28's, its absence
// 2025's, and one process serves both, as a dual-era server may (basic/versioning).
TEST_CASE("topofit mcp serves a 2025 and a 2026 client on one stdio", "[cli][mcp]") {
  const std::vector<json> replies = Session({
      Request(1, "server/discover", {{"_meta", Envelope("2026-07-28")}}),
      Request(2, "initialize", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}}),
      {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
      Request(3, "tools/call", {{"name", "list_decisions"}, {"arguments", json::object()}, {"_meta", Envelope("2026-07-28")}}),
      Request(4, "tools/call", {{"name", "list_decisions"}, {"arguments", json::object()}}),
      Request(5, "tools/list", {{"_meta", Envelope("2099-01-01")}}),
      Request(6, "ping", {{"_meta", Envelope("2026-07-28")}}),
  });
  REQUIRE(replies.size() == 6);  // the notification has none
  CHECK(replies[0]["id"] == 1);
  CHECK(replies[0]["result"]["supportedVersions"] == json::array({"2026-07-28"}));
  CHECK(replies[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "topofit");
  CHECK(replies[1]["result"]["protocolVersion"] == "2025-11-25");
  CHECK(replies[2]["result"]["resultType"] == "complete");
  CHECK(replies[2]["result"]["structuredContent"]["decisions"][0]["node"] == "node-1");
  // The same call without the envelope: the 2025 answer, which has no resultType.
  CHECK(replies[3]["result"]["structuredContent"] == replies[2]["result"]["structuredContent"]);
  CHECK_FALSE(replies[3]["result"].contains("resultType"));
  CHECK(replies[4]["error"]["code"] == -32022);
  CHECK(replies[4]["error"]["data"] == json{{"supported", {"2026-07-28"}}, {"requested", "2099-01-01"}});
  CHECK(replies[5]["error"]["code"] == -32601);
}

}  // namespace
}  // namespace topofit::cli
