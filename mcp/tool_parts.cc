#include "mcp/tool_parts.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace topofit::mcp {

using nlohmann::json;

json Tool(const std::string& name, const std::string& title, const std::string& description, json input, json output) {
  return {{"name", name},
          {"title", title},
          {"description", description},
          {"inputSchema", std::move(input)},
          {"outputSchema", std::move(output)},
          {"annotations",
           {{"title", title}, {"readOnlyHint", true}, {"destructiveHint", false}, {"idempotentHint", true},
            {"openWorldHint", false}}}};
}

json ObjectSchema(json properties, json required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)},
          {"additionalProperties", false}};
}

json Limit(int max, int default_value, absl::string_view what) {
  return {{"type", "integer"}, {"minimum", 1}, {"maximum", max}, {"default", default_value},
          {"description", absl::StrCat(what, " (1..", max, ", default ", default_value, ")")}};
}

absl::Status Arguments::CheckKnown() const {
  if (!args_.is_object()) return absl::InvalidArgumentError("arguments must be an object");
  for (const auto& [key, value] : args_.items()) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument '", key, "' (", absl::StrJoin(known_, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Arguments::String(const std::string& name, bool required) const {
  auto it = args_.find(name);
  if (it == args_.end()) {
    if (required) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is required"));
    return std::string();
  }
  if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' must be a string"));
  return it->get<std::string>();
}

absl::StatusOr<int64_t> Arguments::Integer(const std::string& name, int64_t min, int64_t max, int64_t default_value,
                                           bool required) const {
  auto it = args_.find(name);
  if (it == args_.end()) {
    if (required) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is required"));
    return default_value;
  }
  // A float with an integral value (3.0) is an integer in JSON Schema; 1e300 and 2.5 are not in range.
  std::optional<int64_t> value;
  if (it->is_number_integer() && !it->is_number_unsigned()) value = it->get<int64_t>();
  if (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    value = static_cast<int64_t>(it->get<uint64_t>());
  }
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (d >= static_cast<double>(min) && d <= static_cast<double>(max) && d == static_cast<double>(static_cast<int64_t>(d))) {
      value = static_cast<int64_t>(d);
    }
  }
  if (!it->is_number()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' must be an integer"));
  if (!value || *value < min || *value > max) {
    return absl::InvalidArgumentError(absl::StrCat("'", name, "' must be an integer in ", min, "..", max));
  }
  return *value;
}

bool CapBytes(json& doc, const char* list) {
  json& entries = doc[list];
  json rest = doc;
  rest[list] = json::array();
  size_t total = rest.dump(-1, ' ', false, json::error_handler_t::replace).size() + 32;  // room for "truncated" and a cursor
  size_t kept = 0;
  for (; kept < entries.size(); ++kept) {
    total += entries[kept].dump(-1, ' ', false, json::error_handler_t::replace).size() + 1;
    if (total > kMaxToolBytes) break;
  }
  if (kept == entries.size()) return false;
  entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(kept), entries.end());
  doc["truncated"] = true;
  return true;
}

json ToolError(absl::string_view message) {
  return {{"content", json::array({{{"type", "text"}, {"text", std::string(message)}}})}, {"isError", true}};
}

json ToolResult(json structured) {
  return {{"content", json::array({{{"type", "text"}, {"text", structured.dump(-1, ' ', false, json::error_handler_t::replace)}}})},
          {"structuredContent", std::move(structured)}};
}

}  // namespace topofit::mcp
