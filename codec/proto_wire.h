#pragma once

// The protobuf wire format, read without a schema: what codec/template_key.h and codec/best_options_wire.h
// walk. Every check the protobuf parser makes at this level is made here (tags, wire types, lengths), so
// bytes these readers accept as well-formed the parser does not refuse for their framing.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace topofit::codec {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

// One field as the wire has it.
struct WireField {
  uint32_t number = 0;
  uint32_t type = 0;
  absl::string_view raw;      // the whole field, tag included
  absl::string_view payload;  // a length-delimited field's content
  uint64_t varint = 0;        // a varint field's value
};

// Reads a varint off the front of `in`; false when it runs past the end or past ten bytes.
bool ReadVarint(absl::string_view& in, uint64_t& value);
void AppendVarint(std::string& out, uint64_t value);

// Reads the next field off the front of `in`; false on what the parser would refuse (field number 0, a
// length past the end, a truncated value, an end of group that ends none, a tag longer than five bytes;
// as the parser does, a tag's bits past 32 are dropped). A group (a proto2 relic, which
// the parser skips as an unknown field) is read whole, to its end, nested groups included: `raw` holds it.
bool ReadWireField(absl::string_view& in, WireField& field);

}  // namespace topofit::codec
