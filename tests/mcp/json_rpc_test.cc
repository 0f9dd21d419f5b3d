#include "mcp/json_rpc.h"

#include <catch2/catch.hpp>

namespace topofit::mcp {
namespace {

TEST_CASE("JSON-RPC messages are sorted into requests, notifications and responses", "[mcp][json-rpc]") {
  Message request = ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  CHECK(request.type == Message::Type::kRequest);
  CHECK(request.id == 7);
  CHECK(request.method == "ping");
  CHECK(request.params == nlohmann::json::object());

  Message named = ParseMessage(R"({"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{"cursor":"x"}})");
  CHECK(named.type == Message::Type::kRequest);
  CHECK(named.id == "a-1");
  CHECK(named.params["cursor"] == "x");

  CHECK(ParseMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").type == Message::Type::kNotification);
  CHECK(ParseMessage(R"({"jsonrpc":"2.0","id":3,"result":{}})").type == Message::Type::kResponse);
  CHECK(ParseMessage(R"({"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}})").type == Message::Type::kResponse);
}

TEST_CASE("what is not one JSON-RPC 2.0 message gets the spec's error code", "[mcp][json-rpc]") {
  struct Row {
    const char* name;
    const char* text;
    int code;
    bool keeps_id;
  };
  const Row rows[] = {
      {"not JSON", R"({"jsonrpc":"2.0","id":1,"method":)", kParseError, false},
      {"empty", "", kParseError, false},
      {"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", kParseError, false},
      {"a batch (gone since 2025-06-18)", R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", kInvalidRequest, false},
      {"a string", R"("ping")", kInvalidRequest, false},
      {"no jsonrpc", R"({"id":1,"method":"ping"})", kInvalidRequest, false},
      {"jsonrpc 1.0", R"({"jsonrpc":"1.0","id":1,"method":"ping"})", kInvalidRequest, false},
      {"null id (MCP forbids it)", R"({"jsonrpc":"2.0","id":null,"method":"ping"})", kInvalidRequest, false},
      {"fractional id", R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", kInvalidRequest, false},
      {"object id", R"({"jsonrpc":"2.0","id":{},"method":"ping"})", kInvalidRequest, false},
      {"no method", R"({"jsonrpc":"2.0","id":1})", kInvalidRequest, false},
      {"numeric method", R"({"jsonrpc":"2.0","id":1,"method":5})", kInvalidRequest, false},
      {"params an array", R"({"jsonrpc":"2.0","id":4,"method":"ping","params":[1]})", kInvalidParams, true},
      {"params a string", R"({"jsonrpc":"2.0","id":4,"method":"ping","params":"x"})", kInvalidParams, true},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const Message m = ParseMessage(row.text);
      CHECK(m.type == Message::Type::kInvalid);
      CHECK(m.error_code == row.code);
      CHECK(!m.error.empty());
      CHECK(m.id == (row.keeps_id ? nlohmann::json(4) : nlohmann::json(nullptr)));
    }
  }
}

TEST_CASE("results and errors are JSON-RPC 2.0 responses", "[mcp][json-rpc]") {
  CHECK(Result(1, {{"a", 1}}) == nlohmann::json::parse(R"({"jsonrpc":"2.0","id":1,"result":{"a":1}})"));
  CHECK(Error("x", kMethodNotFound, "Method not found: y") ==
        nlohmann::json::parse(R"({"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found: y"}})"));
  CHECK(Error(nullptr, kResourceNotFound, "Resource not found", nlohmann::json{{"uri", "u"}})["error"]["data"]["uri"] == "u");
}

}  // namespace
}  // namespace topofit::mcp
