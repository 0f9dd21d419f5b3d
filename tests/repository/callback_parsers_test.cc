// No product code parses JSON with nlohmann's callback parser. At every closing bracket that parser
// rescans the parent container for values its callback discarded, so a container's parse is quadratic in
// its size: issue 38's /preempt grew with the square of one node's victims (each victim's '}' rescanned the
// node's Pods array: 10,000, 20,000 and 40,000 victims took 0.15, 0.50 and 2.0 s) and a /bind member
// holding 200,000 empty objects took 13 s. The plain parser is linear, and nesting is bounded before it
// (codec/bounded_json.h). A check of the sources rather than of time: a timed test is flaky and slow, and
// this fails on the code that had the defect (codec/extender_json.cc before commit 02ee3cf).

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace topofit::testing {
namespace {

// `args` split at its top-level commas, each stripped of blanks and of /* */ comments.
std::vector<std::string> Arguments(absl::string_view args) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const char c = args[i];
    if (c == '/' && i + 1 < args.size() && args[i + 1] == '*') {
      const size_t end = args.find("*/", i + 2);
      i = end == absl::string_view::npos ? args.size() : end + 1;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  for (std::string& arg : out) arg = std::string(absl::StripAsciiWhitespace(arg));
  return out;
}

// The `::parse(` calls in `text` that pass nlohmann a callback: its argument after the input (a string, or
// an iterator pair ending in `end()`) is there and is not `nullptr`. Each as its argument list.
std::vector<std::string> CallbackParses(absl::string_view text) {
  std::vector<std::string> found;
  constexpr absl::string_view kCall = "::parse(";
  for (size_t at = text.find(kCall); at != absl::string_view::npos; at = text.find(kCall, at + 1)) {
    const size_t open = at + kCall.size();
    size_t close = open;
    for (int depth = 1; close < text.size() && depth > 0; ++close) {
      if (text[close] == '(') ++depth;
      if (text[close] == ')') --depth;
    }
    const absl::string_view args = text.substr(open, close - open - 1);
    const std::vector<std::string> parts = Arguments(args);
    const size_t callback = parts.size() >= 2 && absl::EndsWith(parts[1], "end()") ? 2 : 1;
    if (parts.size() > callback && parts[callback] != "nullptr") found.emplace_back(args);
  }
  return found;
}

TEST_CASE("CallbackParses finds a parse given a callback, not one given nullptr or none", "[repository]") {
  // What codec/extender_json.cc did before commit 02ee3cf, and what it does now.
  CHECK(CallbackParses("Json json = Json::parse(\n    body.begin(), body.end(),\n"
                       "    [&too_deep](int depth, Json::parse_event_t, Json&) {\n"
                       "      if (depth <= kMaxJsonDepth) return true;\n      return false;\n    },\n"
                       "    /*allow_exceptions=*/false);")
            .size() == 1);
  CHECK(CallbackParses("json::parse(text, keep, false); json::parse(a.begin(), a.end(), keep);").size() == 2);
  CHECK(CallbackParses("Json::parse(raw.begin(), raw.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);"
                       "nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);"
                       "Json::parse(text.begin(), text.end()); Json::parse(Text(f(1, 2)));")
            .empty());
}

TEST_CASE("no product code parses JSON with nlohmann's callback parser", "[repository]") {
  const std::filesystem::path root = TOPOFIT_SOURCE_DIR;
  std::vector<std::string> problems;
  int files = 0;
  // bench/ parses only its own servers' replies; tests/ parse what they wrote.
  for (const char* dir : {"agent", "cli", "codec", "decision", "expander", "history", "kube", "kubeclient", "ledger",
                          "mcp", "replay", "scheduler", "server", "topology", "webhook"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      std::ifstream file(entry.path());
      const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
      ++files;
      for (const std::string& call : CallbackParses(text)) {
        problems.push_back(absl::StrCat(std::filesystem::relative(entry.path(), root).string(), ": parse(", call, ")"));
      }
    }
  }
  CHECK(files > 100);  // the sources were read
  INFO(absl::StrJoin(problems, "\n"));
  CHECK(problems.empty());
}

}  // namespace
}  // namespace topofit::testing
