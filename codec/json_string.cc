#include "codec/json_string.h"

#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

namespace topofit::codec {
namespace {

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;

// Whether any byte of `word` is zero (exact for "any", as bit tricks go: a borrow only starts at a zero).
constexpr bool AnyZeroByte(uint64_t word) { return ((word - kOnes) & ~word & kHighs) != 0; }

constexpr bool Plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

// Whether every byte is printable ASCII other than '"' and '\\', eight bytes a step: the replies of a
// 5,000-node filter carry half a megabyte of names and reasons, and a byte-at-a-time check of them was a
// fifth of the reply's encoding.
bool AllPlain(absl::string_view s) {
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= s.size(); i += sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, sizeof(word));
    const bool control = ((word - 0x20 * kOnes) & ~word & kHighs) != 0;  // a byte below 0x20
    if (control || (word & kHighs) != 0 || AnyZeroByte(word ^ (0x7f * kOnes)) ||
        AnyZeroByte(word ^ ('"' * kOnes)) || AnyZeroByte(word ^ ('\\' * kOnes))) {
      return false;
    }
  }
  for (; i < s.size(); ++i) {
    if (!Plain(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

}  // namespace

void AppendJsonString(std::string& out, absl::string_view s) {
  if (!AllPlain(s)) {
    out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  out.append(s.data(), s.size());
  out += '"';
}

}  // namespace topofit::codec
