#include "codec/proto_wire.h"

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

// The parser's own bound on nesting (io::CodedInputStream's default recursion limit).
constexpr int kMaxDepth = 100;

bool ReadField(absl::string_view& in, WireField& field, int depth);

// Skips the rest of group `number`, through its end tag.
bool SkipGroup(absl::string_view& in, uint32_t number, int depth) {
  if (depth >= kMaxDepth) return false;
  WireField inner;
  while (true) {
    if (in.empty()) return false;
    absl::string_view rest = in;
    uint64_t tag = 0;
    if (!ReadVarint(rest, tag)) return false;
    if ((tag & 7) == kEndGroup) {
      if ((tag >> 3) != number) return false;
      in = rest;
      return true;
    }
    if (!ReadField(in, inner, depth + 1)) return false;
  }
}

bool ReadField(absl::string_view& in, WireField& field, int depth) {
  const char* start = in.data();
  uint64_t tag = 0;
  if (!ReadVarint(in, tag) || tag > UINT32_MAX) return false;
  field.number = static_cast<uint32_t>(tag >> 3);
  field.type = static_cast<uint32_t>(tag & 7);
  field.payload = {};
  field.varint = 0;
  if (field.number == 0) return false;
  switch (field.type) {
    case kVarint:
      if (!ReadVarint(in, field.varint)) return false;
      break;
    case kFixed64:
    case kFixed32: {
      const size_t size = field.type == kFixed64 ? 8 : 4;
      if (in.size() < size) return false;
      in.remove_prefix(size);
      break;
    }
    case kLengthDelimited: {
      uint64_t length = 0;
      if (!ReadVarint(in, length) || length > in.size()) return false;
      field.payload = in.substr(0, length);
      in.remove_prefix(length);
      break;
    }
    case kStartGroup:
      if (!SkipGroup(in, field.number, depth)) return false;
      break;
    default:
      return false;  // an end of group outside one, and the unused wire types
  }
  field.raw = absl::string_view(start, static_cast<size_t>(in.data() - start));
  return true;
}

}  // namespace

bool ReadWireField(absl::string_view& in, WireField& field) { return ReadField(in, field, 0); }

}  // namespace topofit::codec
