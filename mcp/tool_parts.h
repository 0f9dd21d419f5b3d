#pragma once

// What every MCP tool is built from, whichever state it reads (the decision history, mcp/tools.h; the
// live GPU state and ledger, mcp/live_tools.h): its definition with JSON Schemas, its arguments checked
// against the input schema, its result or tool error, and the byte cap of an answer.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::mcp {

// Bytes of structured content one answer carries at most; past it the rest of its list is left out and
// the answer says so (`truncated`, and a cursor where the tool pages).
inline constexpr size_t kMaxToolBytes = 256 << 10;

// A tools/list entry, annotated read-only, idempotent and closed-world.
nlohmann::json Tool(const std::string& name, const std::string& title, const std::string& description,
                    nlohmann::json input, nlohmann::json output);
// {type: object, properties, required, additionalProperties: false}
nlohmann::json ObjectSchema(nlohmann::json properties, nlohmann::json required);
// An integer argument in 1..max with its default, described.
nlohmann::json Limit(int max, int default_value, absl::string_view what);

// A tool's arguments, checked against its input schema by hand (the schemas are small and fixed). Errors
// name the argument, for the model to correct itself.
class Arguments {
 public:
  Arguments(const nlohmann::json& args, std::vector<std::string> known) : args_(args), known_(std::move(known)) {}

  // InvalidArgument for an argument the schema does not list.
  absl::Status CheckKnown() const;
  // "" when absent and not required.
  absl::StatusOr<std::string> String(const std::string& name, bool required) const;
  // An integer in min..max (an integral float counts, as in JSON Schema); `default_value` when absent.
  absl::StatusOr<int64_t> Integer(const std::string& name, int64_t min, int64_t max, int64_t default_value,
                                  bool required = false) const;

 private:
  const nlohmann::json& args_;
  std::vector<std::string> known_;
};

// Keeps the first entries of doc[list] that fit in kMaxToolBytes with the rest of `doc` (and room for
// `truncated` and a cursor); says whether some were left out (then doc["truncated"] is true).
bool CapBytes(nlohmann::json& doc, const char* list);

// A tools/call result: the structured content, and the same JSON as text.
nlohmann::json ToolResult(nlohmann::json structured);
// A tool error (isError) with its reason as text.
nlohmann::json ToolError(absl::string_view message);

}  // namespace topofit::mcp
