#include "codec/proto_wire.h"

#include <vector>

namespace topofit::codec {

bool ReadVarint(absl::string_view& in, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

namespace {

// Groups nest at most this deep here, far deeper than the parser's own limit (100): what it reads, this
// reads. Skipped without recursion, so the depth costs no stack.
constexpr size_t kMaxGroupDepth = 10000;

// Reads a tag as the parser does: at most five bytes, the bits past 32 dropped.
bool ReadTag(absl::string_view& in, uint32_t& tag) {
  uint64_t value = 0;
  const size_t before = in.size();
  if (!ReadVarint(in, value) || before - in.size() > 5) return false;
  tag = static_cast<uint32_t>(value);
  return true;
}

// Reads a value of wire type `type` (not a group) off the front of `in`.
bool ReadValue(absl::string_view& in, uint32_t type, uint64_t& varint, absl::string_view& payload) {
  switch (type) {
    case kVarint:
      return ReadVarint(in, varint);
    case kFixed64:
    case kFixed32: {
      const size_t size = type == kFixed64 ? 8 : 4;
      if (in.size() < size) return false;
      in.remove_prefix(size);
      return true;
    }
    case kLengthDelimited: {
      uint64_t length = 0;
      if (!ReadVarint(in, length) || length > in.size()) return false;
      payload = in.substr(0, length);
      in.remove_prefix(length);
      return true;
    }
    default:
      return false;  // groups are the caller's; the unused wire types are errors
  }
}

// Skips the rest of group `number`, through its end tag, groups nested in it included.
bool SkipGroup(absl::string_view& in, uint32_t number) {
  std::vector<uint32_t> open = {number};
  uint64_t varint = 0;
  absl::string_view payload;
  while (!open.empty()) {
    uint32_t tag = 0;
    if (!ReadTag(in, tag) || (tag >> 3) == 0) return false;
    const uint32_t inner = tag >> 3;
    const uint32_t type = tag & 7;
    if (type == kEndGroup) {
      if (inner != open.back()) return false;
      open.pop_back();
    } else if (type == kStartGroup) {
      if (open.size() >= kMaxGroupDepth) return false;
      open.push_back(inner);
    } else if (!ReadValue(in, type, varint, payload)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool ReadWireField(absl::string_view& in, WireField& field) {
  const char* start = in.data();
  uint32_t tag = 0;
  if (!ReadTag(in, tag)) return false;
  field.number = tag >> 3;
  field.type = tag & 7;
  field.payload = {};
  field.varint = 0;
  if (field.number == 0) return false;
  const bool read = field.type == kStartGroup ? SkipGroup(in, field.number)
                                              : ReadValue(in, field.type, field.varint, field.payload);
  if (!read) return false;
  field.raw = absl::string_view(start, static_cast<size_t>(in.data() - start));
  return true;
}

}  // namespace topofit::codec
