#include "codec/best_options_wire.h"

#include <google/protobuf/stubs/common.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codec/proto_wire.h"

namespace topofit::codec {
namespace {

// grpcplugin's field numbers (proto/expander.proto).
constexpr uint32_t kOptions = 1, kNodeMap = 2, kNodeBytesMap = 3;
constexpr uint32_t kNodeGroupId = 1, kNodeCount = 2, kDebug = 3, kPod = 4, kPodBytes = 5;
constexpr uint32_t kEntryKey = 1, kEntryValue = 2;

bool Utf8(absl::string_view text) {
  return google::protobuf::internal::IsStructurallyValidUTF8(text.data(), static_cast<int>(text.size()));
}

absl::Status Malformed(absl::string_view what) { return absl::InvalidArgumentError(std::string(what)); }

absl::StatusOr<OptionWire> ReadOption(absl::string_view in, size_t index) {
  OptionWire option;
  WireField field;
  while (!in.empty()) {
    if (!ReadWireField(in, field)) return Malformed(absl::StrCat("options[", index, "] is malformed protobuf"));
    if (field.number == kNodeCount && field.type == kVarint) {
      option.node_count = static_cast<int32_t>(static_cast<uint32_t>(field.varint));  // int32 as the wire truncates it
      continue;
    }
    if (field.type != kLengthDelimited) continue;
    switch (field.number) {
      case kNodeGroupId:
      case kDebug:
        if (!Utf8(field.payload)) {
          return Malformed(absl::StrCat("options[", index, "].", field.number == kDebug ? "debug" : "nodeGroupId",
                                        " is not UTF-8"));
        }
        (field.number == kDebug ? option.debug : option.node_group_id) = field.payload;
        break;
      case kPod: option.pods.push_back(field.payload); break;
      case kPodBytes: option.pod_bytes.push_back(field.payload); break;
      default: break;
    }
  }
  return option;
}

// One map entry into `map`; a message value given in parts is merged (its parts concatenated) into
// `merged`, where the map's view points.
absl::Status ReadEntry(absl::string_view in, absl::string_view map_name, bool message_value,
                       std::map<absl::string_view, absl::string_view>& map, std::deque<std::string>& merged) {
  absl::string_view key, value;
  std::string* parts = nullptr;
  WireField field;
  while (!in.empty()) {
    if (!ReadWireField(in, field)) return Malformed(absl::StrCat("a ", map_name, " entry is malformed protobuf"));
    if (field.type != kLengthDelimited) continue;
    if (field.number == kEntryKey) {
      key = field.payload;
    } else if (field.number == kEntryValue) {
      if (message_value && !value.empty()) {
        if (parts == nullptr) parts = &merged.emplace_back(value.data(), value.size());
        parts->append(field.payload.data(), field.payload.size());
        value = *parts;
      } else {
        value = field.payload;
      }
    }
  }
  if (!Utf8(key)) return Malformed(absl::StrCat("a ", map_name, " key is not UTF-8"));
  map.insert_or_assign(key, value);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BestOptionsWire> ReadBestOptions(absl::string_view request) {
  BestOptionsWire out;
  WireField field;
  while (!request.empty()) {
    if (!ReadWireField(request, field)) return Malformed("malformed protobuf");
    if (field.type != kLengthDelimited) continue;
    if (field.number == kOptions) {
      absl::StatusOr<OptionWire> option = ReadOption(field.payload, out.options.size());
      if (!option.ok()) return option.status();
      out.options.push_back(*std::move(option));
    } else if (field.number == kNodeMap || field.number == kNodeBytesMap) {
      const bool nodes = field.number == kNodeMap;
      const absl::Status read = ReadEntry(field.payload, nodes ? "nodeMap" : "nodeBytesMap", nodes,
                                          nodes ? out.node_map : out.node_bytes_map, out.merged);
      if (!read.ok()) return read;
    }
  }
  return out;
}

}  // namespace topofit::codec
