#include "codec/bounded_json.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace topofit::codec {
namespace {

// Whether the quote at `quote` is escaped: preceded, after `open`, by an odd run of backslashes. The runs
// before successive quotes do not overlap, so a string's checks together read it once.
bool Escaped(const char* open, const char* quote) {
  size_t backslashes = 0;
  for (const char* p = quote - 1; p > open && *p == '\\'; --p) ++backslashes;
  return backslashes % 2 == 1;
}

}  // namespace

absl::Status CheckJsonLimits(absl::string_view text, const JsonLimits& limits, absl::string_view what) {
  const auto refuse = [what](const auto&... why) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": JSON ", why...));
  };
  if (text.size() > limits.max_bytes) return refuse("of ", text.size(), " bytes, over the limit of ", limits.max_bytes);
  const auto too_many = [&] { return refuse("of more than ", limits.max_values, " values"); };
  int depth = 0;
  size_t values = 0;
  bool in_scalar = false;  // a number or literal counts once, at its first byte
  const char* const end = text.data() + text.size();
  for (const char* p = text.data(); p < end; ++p) {
    switch (*p) {
      case '"': {
        // memchr finds the next quote fast whatever the string's length; an escaped one searches on.
        const char* close = p;
        do {
          close = static_cast<const char*>(std::memchr(close + 1, '"', static_cast<size_t>(end - close - 1)));
        } while (close != nullptr && Escaped(p, close));
        if (static_cast<size_t>((close == nullptr ? end : close) - p - 1) > limits.max_string_bytes) {
          return refuse("string longer than ", limits.max_string_bytes, " bytes");
        }
        if (close == nullptr) return absl::OkStatus();  // unterminated: the parser's to refuse
        if (++values > limits.max_values) return too_many();
        in_scalar = false;
        p = close;
        break;
      }
      case '[':
      case '{':
        if (++depth > limits.max_depth) return refuse("nested deeper than ", limits.max_depth, " levels");
        if (++values > limits.max_values) return too_many();
        in_scalar = false;
        break;
      case ']':
      case '}':
        --depth;  // unbalanced text is the parser's to refuse
        in_scalar = false;
        break;
      case ',':
      case ':':
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        in_scalar = false;
        break;
      default:
        if (!in_scalar && ++values > limits.max_values) return too_many();
        in_scalar = true;
        break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> ParseBoundedJson(absl::string_view text, const JsonLimits& limits,
                                                absl::string_view what) {
  if (absl::Status within = CheckJsonLimits(text, limits, what); !within.ok()) return within;
  nlohmann::json json = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(what, ": malformed JSON"));
  return json;
}

}  // namespace topofit::codec
