#include "codec/extender_json.h"

#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/str_join.h"
#include "tests/codec/hostile_json.h"
#include "tests/kube/status_matchers.h"

namespace topofit::codec {
namespace {

using nlohmann::json;

constexpr char kPod[] = R"({"metadata": {"name": "p", "namespace": "ml", "uid": "u1"},
  "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "2"}}}]}})";

std::string Node(const std::string& name, const std::string& version) {
  return json{{"metadata", {{"name", name}, {"resourceVersion", version}, {"labels", {{"a", "b"}}}}},
              {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}}
      .dump();
}

TEST_CASE("ParseExtenderArgs calls malformed exactly what a JSON parser rejects", "[extender_json]") {
  // Each body as a whole; the verdict must be nlohmann's (json::accept), wherever the fault is: in the
  // Pod, in a node that is only located, in a field nobody reads.
  const std::string node = Node("n1", "7");
  const std::vector<std::string> bodies = {
      "",
      "   ",
      "{",
      "}",
      "{}",
      "{} {}",
      "{}x",
      "[1,2]",
      "[1,]",
      "5",
      "5x",
      "\"s\"",
      "nul",
      "null",
      "true",
      "tru",
      R"({"Pod": {}, "x": 01})",
      R"({"Pod": {}, "x": 1.})",
      R"({"Pod": {}, "x": -})",
      R"({"Pod": {}, "x": 1e})",
      R"({"Pod": {}, "x": 123456789012345678901234567890})",
      R"({"Pod": {}, "x": 1.5e300})",
      R"({"Pod": {}, "x": [1 2]})",
      R"({"Pod": {}, "x": {"a" 1}})",
      R"({"Pod": {}, "x": {"a": 1,}})",
      R"({"Pod": {}, "x": {"a": 1 "b": 2}})",
      R"({"Pod": {}, "x": "\q"})",
      R"({"Pod": {}, "x": "\u12"})",
      R"({"Pod": {}, "x": "\ud83d\ude00"})",
      R"({"Pod": {}, "x": "tab	inside"})",
      "{\"Pod\": {}, \"x\": \"\xff\"}",
      R"({"Pod": {}, "x": nulll})",
      R"({"Pod": {}, "x": falsey})",
      R"({"Pod": {}, "x": [true, false, null]})",
      R"({"Pod": {"metadata": {"name": tru}}})",
      R"({"Pod": {}, "Nodes": {"items": [)" + node + R"(, {"metadata": {"name": "n2", "x": [1,,2]}}]}})",
      R"({"Pod": {}, "Nodes": {"items": [)" + node + R"(, {"spec": {"taints": [{]}}}]}})",
      R"({"Pod": {}, "Nodes": {"items": [)" + node + R"(]}})",
      R"({"Pod": {}, "Nodes": {"items": [)" + node + R"(], "metadata": {"x": 1e5}}})",
      R"({"Pod": {}, "NodeNames": ["a", "b"]})",
      R"({"Pod": {}, "NodeNames": ["a" "b"]})",
      R"({"Pod": {}, "NodeNames": ["a", ]})",
  };
  for (const std::string& body : bodies) {
    INFO(body);
    // Every node is "current", so none is decoded: only the check of the whole body can find faults.
    const absl::StatusOr<ExtenderArgs> args =
        ParseExtenderArgs(body, [](absl::string_view, absl::string_view) { return true; });
    const bool malformed = !args.ok() && args.status().message() == "ExtenderArgs: malformed JSON";
    CHECK(malformed == !json::accept(body));
  }
}

TEST_CASE("A node's bytes checked once are taken as checked, other bytes at the same resourceVersion are not",
          "[extender_json]") {
  const auto current = [](absl::string_view, absl::string_view) { return true; };
  const auto body = [](const std::string& node) {
    return std::string(R"({"Pod": )") + kPod + R"(, "Nodes": {"items": [)" + node + "]}}";
  };
  const std::string good = R"({"metadata": {"name": "memo-1", "resourceVersion": "9"}, "spec": {"x": [1, 2]}})";
  const std::string bad = R"({"metadata": {"name": "memo-1", "resourceVersion": "9"}, "spec": {"x": [1,, 2]}})";
  for (int round = 0; round < 2; ++round) {  // the second round finds `good` checked before
    CAPTURE(round);
    REQUIRE_OK(ParseExtenderArgs(body(good), current));
    CHECK_STATUS(ParseExtenderArgs(body(bad), current), absl::StatusCode::kInvalidArgument,
                 "ExtenderArgs: malformed JSON");
  }
}

TEST_CASE("ParseExtenderArgs locates each node's bytes and decodes only the nodes not current",
          "[extender_json]") {
  const std::string n1 = Node("n1", "7"), n2 = Node("n2", "3");
  const std::string body = std::string(R"({"Pod": )") + kPod + R"(, "Nodes": {"items": [ )" + n1 + " ,\n" + n2 +
                           R"(]}, "NodeNames": null})";
  SECTION("nothing current: every node decoded") {
    const absl::StatusOr<ExtenderArgs> args = ParseExtenderArgs(body);
    REQUIRE_OK(args);
    CHECK(args->pod.metadata.name == "p");
    REQUIRE(args->nodes);
    REQUIRE(args->nodes->size() == 2);
    CHECK((*args->nodes)[0].raw == n1);
    CHECK((*args->nodes)[1].raw == n2);
    REQUIRE((*args->nodes)[1].node);
    CHECK((*args->nodes)[1].node->metadata.labels.at("a") == "b");
    CHECK((*args->nodes)[1].node->status.allocatable.at("nvidia.com/gpu") == 8000);
    CHECK((*args->nodes)[1].name == "n2");
    CHECK((*args->nodes)[1].resource_version == "3");
    CHECK_FALSE(args->node_names);
  }
  SECTION("a node current at its resourceVersion is located, not decoded") {
    std::vector<std::string> asked;
    const absl::StatusOr<ExtenderArgs> args =
        ParseExtenderArgs(body, [&](absl::string_view name, absl::string_view version) {
          asked.push_back(std::string(name) + "@" + std::string(version));
          return name == "n1";
        });
    REQUIRE_OK(args);
    CHECK(asked == std::vector<std::string>{"n1@7", "n2@3"});
    CHECK_FALSE((*args->nodes)[0].node);
    CHECK((*args->nodes)[0].name == "n1");
    CHECK((*args->nodes)[0].resource_version == "7");
    CHECK((*args->nodes)[0].raw == n1);
    CHECK((*args->nodes)[1].node);
    const absl::StatusOr<kube::Node> late = DecodeNodeArg((*args->nodes)[0], 0);
    REQUIRE_OK(late);
    CHECK(late->metadata.labels.at("a") == "b");
  }
  SECTION("the filter reply copies the passing nodes' bytes") {
    const absl::StatusOr<ExtenderArgs> args = ParseExtenderArgs(body);
    REQUIRE_OK(args);
    ExtenderFilterResult result;
    result.nodes.emplace({(*args->nodes)[1].raw});
    result.failed_nodes["n1"] = "why";
    const std::string reply = SerializeFilterResult(result);
    CHECK(reply == R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{"n1":"why"},"NodeNames":null,)"
                   R"("Nodes":{"items":[)" + n2 + R"(],"metadata":{}}})");
    CHECK(json::parse(reply)["Nodes"]["items"][0] == json::parse(n2));
  }
}

TEST_CASE("EncodeFilterResult splices runs of adjacent passing nodes, joined, it is SerializeFilterResult",
          "[extender_json]") {
  const std::string a = Node("a", "1"), b = Node("b", "1"), c = Node("c", "1"), d = Node("d", "1"), e = Node("e", "1");
  // a,b,c one comma apart; d after ", " and e after ",\n": only a comma alone joins two nodes into one run.
  const std::string body =
      std::string(R"({"Pod": )") + kPod + R"(, "Nodes": {"items": [)" + a + "," + b + "," + c + ", " + d + ",\n" + e +
      R"(]}})";
  const absl::StatusOr<ExtenderArgs> args = ParseExtenderArgs(body);
  REQUIRE_OK(args);
  const auto raw = [&](size_t i) { return (*args->nodes)[i].raw; };
  struct Row {
    const char* name;
    std::vector<size_t> passing;
    std::vector<std::string> pieces;  // what EncodedFilterResult::nodes should hold
  };
  const std::vector<Row> rows = {
      {"all pass: a..c is one run", {0, 1, 2, 3, 4}, {a + "," + b + "," + c, ",", d, ",", e}},
      {"b fails: runs a and c", {0, 2, 3}, {a, ",", c, ",", d}},
      {"only adjacent b, c", {1, 2}, {b + "," + c}},
      {"one node", {4}, {e}},
      {"none pass", {}, {}},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      ExtenderFilterResult result;
      result.nodes.emplace();
      std::vector<std::string> items;
      for (size_t i : row.passing) {
        result.nodes->push_back(raw(i));
        items.emplace_back(raw(i));
      }
      result.failed_nodes["x"] = "why \"quoted\"";
      const EncodedFilterResult encoded = EncodeFilterResult(result);
      CHECK(std::vector<std::string>(encoded.nodes.begin(), encoded.nodes.end()) == row.pieces);
      // The encoder before splicing: the other keys as nlohmann dumps them, then each node's bytes joined by ",".
      const std::string expected = R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{"x":"why \"quoted\""},)"
                                   R"("NodeNames":null,"Nodes":{"items":[)" + absl::StrJoin(items, ",") +
                                   R"(],"metadata":{}}})";
      CHECK(SerializeFilterResult(result) == expected);
      CHECK(encoded.text.substr(0, encoded.nodes_at) + absl::StrJoin(encoded.nodes, "") +
                encoded.text.substr(encoded.nodes_at) == expected);
    }
  }
  SECTION("NodeNames replies have nothing to splice") {
    ExtenderFilterResult result;
    result.node_names = std::vector<std::string>{"a"};
    const EncodedFilterResult encoded = EncodeFilterResult(result);
    CHECK(encoded.nodes.empty());
    CHECK(encoded.text == SerializeFilterResult(result));
    CHECK(encoded.text == R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{},"NodeNames":["a"],"Nodes":null})");
  }
}

TEST_CASE("ParseExtenderArgs errors name their path", "[extender_json]") {
  struct Row {
    const char* name;
    std::string body;
    const char* message;
  };
  const Row rows[] = {
      {"not an object", "[1]", "ExtenderArgs: expected a JSON object, found array"},
      {"no pod", R"({"NodeNames": []})", "Pod: missing"},
      {"null pod", R"({"Pod": null, "NodeNames": []})", "Pod: missing"},
      {"pod of the wrong type", R"({"Pod": 5})", "Pod: expected an object, found number"},
      {"pod field of the wrong type", R"({"Pod": {"spec": {"nodeName": 3}}})",
       "Pod.spec.nodeName: expected a string, found number"},
      {"nodes not a list", R"({"Pod": {}, "Nodes": []})", "Nodes: expected a NodeList object, found array"},
      {"items not an array", R"({"Pod": {}, "Nodes": {"items": {}}})", "Nodes.items: expected an array, found object"},
      {"item not an object", R"({"Pod": {}, "Nodes": {"items": [)" + Node("n1", "1") + R"(, "n2"]}})",
       "Nodes.items[1]: expected an object, found string"},
      {"node without a name", R"({"Pod": {}, "Nodes": {"items": [{"metadata": {"resourceVersion": "1"}}]}})",
       "Nodes.items[0].metadata.name: missing"},
      {"node field of the wrong type", R"({"Pod": {}, "Nodes": {"items": [{"metadata": {"name": 1}}]}})",
       "Nodes.items[0].metadata.name: expected a string, found number"},
      {"bad allocatable",
       R"({"Pod": {}, "Nodes": {"items": [{"metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/gpu": "x"}}}]}})",
       R"(Nodes.items[0].status.allocatable["nvidia.com/gpu"]: )"},
      {"names not an array", R"({"Pod": {}, "NodeNames": "n1"})", "NodeNames: expected an array, found string"},
      {"name not a string", R"({"Pod": {}, "NodeNames": ["a", 2, null]})", "NodeNames[1]: expected a string, found number"},
      {"the pod's error first", R"({"Nodes": [], "Pod": 1})", "Pod: expected an object"},
      {"the nodes' error before the names'", R"({"NodeNames": 1, "Nodes": 1, "Pod": {}})", "Nodes: expected"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      CHECK_STATUS(ParseExtenderArgs(row.body), absl::StatusCode::kInvalidArgument, row.message);
    }
  }
  SECTION("keys are matched case-insensitively, the last occurrence wins, null is absent") {
    const absl::StatusOr<ExtenderArgs> args =
        ParseExtenderArgs(R"({"pod": {"metadata": {"name": "a"}}, "POD": {"metadata": {"name": "b"}},
                              "nodenames": ["x"], "Nodes": null})");
    REQUIRE_OK(args);
    CHECK(args->pod.metadata.name == "b");
    CHECK(args->node_names == std::vector<std::string>{"x"});
    CHECK_FALSE(args->nodes);
  }
}

using topofit::testing::NestedArrays;

TEST_CASE("JSON nested beyond kMaxJsonDepth is refused with a message, at any depth, without recursing as deep",
          "[extender_json][hostile]") {
  // ~45,000 levels in ~90 KB overflowed the stack of the recursive check (issue 15); a million levels would
  // too if the recursion followed the input.
  for (int depth : {kMaxJsonDepth + 1, 45'000, 1'000'000}) {
    CAPTURE(depth);
    const std::string nested = NestedArrays(depth);
    CHECK_STATUS(ParseExtenderArgs(R"({"Pod":)" + nested + R"(,"NodeNames":[]})"), absl::StatusCode::kInvalidArgument,
                 "ExtenderArgs: JSON nested deeper than 64 levels");
    CHECK_STATUS(ParseExtenderArgs(R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":"n"},"x":)" + nested + "}]}}"),
                 absl::StatusCode::kInvalidArgument, "nested deeper than 64 levels");
    CHECK_STATUS(ParseExtenderArgs(R"({"Pod":{},"Other":)" + nested + "}"), absl::StatusCode::kInvalidArgument,
                 "nested deeper than 64 levels");
    CHECK_STATUS(ParseExtenderArgs(nested), absl::StatusCode::kInvalidArgument, "nested deeper than 64 levels");
    CHECK_STATUS(ParseBindingArgs(R"({"PodName":)" + nested + "}"), absl::StatusCode::kInvalidArgument,
                 "ExtenderBindingArgs: JSON nested deeper than 64 levels");
    CHECK_STATUS(ParsePreemptionArgs(R"({"Pod":)" + nested + "}"), absl::StatusCode::kInvalidArgument,
                 "ExtenderPreemptionArgs: JSON nested deeper than 64 levels");
  }
  SECTION("nesting within the limit is read as before") {
    // Depth counts from the top of the body, as for every JSON entry point: the body is level 1, the Pod 2,
    // so an unknown field in the Pod may hold kMaxJsonDepth - 2 levels.
    const absl::StatusOr<ExtenderArgs> args =
        ParseExtenderArgs(R"({"Pod":{"x":)" + NestedArrays(kMaxJsonDepth - 2) + R"(},"NodeNames":["a"]})");
    REQUIRE_OK(args);
    CHECK(args->node_names == std::vector<std::string>{"a"});
    CHECK_STATUS(ParseExtenderArgs(R"({"Pod":{"x":)" + NestedArrays(kMaxJsonDepth - 1) + R"(},"NodeNames":["a"]})"),
                 absl::StatusCode::kInvalidArgument, "ExtenderArgs: JSON nested deeper than 64 levels");
  }
}

}  // namespace
}  // namespace topofit::codec

namespace topofit::codec {
namespace {

// The replies are written without a DOM; they must be byte for byte what nlohmann's dump of the DOM wrote.
TEST_CASE("Filter and prioritize replies are what nlohmann's dump writes, for every kind of string",
          "[codec][extender_json]") {
  const std::vector<std::string> strings = {
      "", "p4d-1", "needs 4 NVLink GPUs, 2 free", "quote \" and backslash \\", "tab\tnewline\ncr\r",
      std::string("nul\0byte", 8), "\x01\x1f control", "del \x7f", "caf\xc3\xa9 \xe2\x9c\x93 UTF-8", "bad \xff\xfe UTF-8",
      "/slash", "<html>&"};
  using nlohmann::json;
  for (const std::string& a : strings) {
    for (const std::string& b : strings) {
      ExtenderFilterResult result;
      result.node_names = std::vector<std::string>{a, b};
      result.failed_nodes = {{a, b}, {"n2", a}};
      result.failed_and_unresolvable_nodes = {{b, a}};
      result.error = a;
      json dom = json::object();
      dom["NodeNames"] = *result.node_names;
      dom["FailedNodes"] = result.failed_nodes;
      dom["FailedAndUnresolvableNodes"] = result.failed_and_unresolvable_nodes;
      dom["Error"] = result.error;
      std::string expected = dom.dump(-1, ' ', false, json::error_handler_t::replace);
      expected.pop_back();
      expected += ",\"Nodes\":null}";
      INFO(json(a).dump(-1, ' ', true, json::error_handler_t::replace) << " / "
                                                                         << json(b).dump(-1, ' ', true, json::error_handler_t::replace));
      CHECK(SerializeFilterResult(result) == expected);

      const std::vector<HostPriority> priorities = {{a, 10}, {b, -3}, {"n3", 0}};
      json list = json::array();
      for (const HostPriority& p : priorities) list.push_back({{"Host", p.host}, {"Score", p.score}});
      CHECK(SerializeHostPriorityList(priorities) == list.dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  ExtenderFilterResult no_names;
  CHECK(SerializeFilterResult(no_names) ==
        R"({"Error":"","FailedAndUnresolvableNodes":{},"FailedNodes":{},"NodeNames":null,"Nodes":null})");
  CHECK(SerializeHostPriorityList({}) == "[]");
}

TEST_CASE("NumPDBViolations beyond int64 is refused, not wrapped to a negative count", "[codec][preempt]") {
  const std::string pod = R"({"metadata":{"name":"p","namespace":"default","uid":"u"},"spec":{"containers":[{"name":"c"}]}})";
  auto args = [&](const std::string& count) {
    return ParsePreemptionArgs(R"({"Pod":)" + pod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"v"}],"NumPDBViolations":)" +
                               count + "}}}");
  };
  absl::StatusOr<ExtenderPreemptionArgs> max = args("9223372036854775807");
  REQUIRE_OK(max);
  CHECK(max->victims.at("n1").num_pdb_violations == std::numeric_limits<int64_t>::max());
  CHECK_STATUS(args("9223372036854775808"), absl::StatusCode::kInvalidArgument,
               "NumPDBViolations: 9223372036854775808 is out of int64 range");
}

}  // namespace
}  // namespace topofit::codec
