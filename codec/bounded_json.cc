#include "codec/bounded_json.h"

#include "absl/strings/str_cat.h"

namespace topofit::codec {

bool NestsDeeperThan(absl::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limit) return true;
        break;
      case ']':
      case '}':
        --depth;  // unbalanced text is the parser's to refuse
        break;
      default:
        break;
    }
  }
  return false;
}

absl::StatusOr<nlohmann::json> ParseBoundedJson(absl::string_view text, absl::string_view what) {
  if (NestsDeeperThan(text, kMaxJsonDepth)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": JSON nested deeper than ", kMaxJsonDepth, " levels"));
  }
  nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(what, ": malformed JSON"));
  return json;
}

}  // namespace topofit::codec
