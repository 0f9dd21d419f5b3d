#include "codec/template_key.h"

#include <array>
#include <bitset>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include <google/protobuf/descriptor.h>

#include "proto/k8s_core_v1.pb.h"

namespace topofit::codec {
namespace {

constexpr absl::string_view kHostnameLabel = "kubernetes.io/hostname";

// Field numbers of the messages the key walks (upstream's, as proto/*.proto declares them).
constexpr uint32_t kNodeMetadata = 1;
constexpr uint32_t kMetaName = 1, kMetaUid = 5, kMetaResourceVersion = 6, kMetaLabels = 11;
constexpr uint32_t kEntryKey = 1, kEntryValue = 2;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// What one message type of the schema declares. Field numbers from kMaxField on are rare enough in
// Kubernetes' messages that a message declaring one is kept whole (`whole`) rather than walked.
struct Schema {
  static constexpr uint32_t kMaxField = 64;
  bool whole = false;
  std::bitset<kMaxField> declared;
  std::array<const Schema*, kMaxField> message{};  // the type of the declared fields that are messages
  bool Declares(uint32_t number) const { return number < kMaxField && declared[number]; }
};

class SchemaTable {
 public:
  const Schema* Of(const google::protobuf::Descriptor* type) {
    auto [it, inserted] = schemas_.try_emplace(type);
    if (!inserted) return it->second.get();  // built, or being built up the stack (a recursive type)
    it->second = std::make_unique<Schema>();
    Schema* schema = it->second.get();
    for (int i = 0; i < type->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* field = type->field(i);
      const auto number = static_cast<uint32_t>(field->number());
      if (number >= Schema::kMaxField) {
        schema->whole = true;
        continue;
      }
      schema->declared.set(number);
      if (field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) schema->message[number] = Of(field->message_type());
    }
    return schema;
  }

 private:
  std::map<const google::protobuf::Descriptor*, std::unique_ptr<Schema>> schemas_;
};

const Schema& NodeSchema() {
  static const Schema* const node = [] {
    static SchemaTable table;
    return table.Of(::k8s::io::api::core::v1::Node::descriptor());
  }();
  return *node;
}

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

// One field as the wire has it: `raw` is the whole field (tag included), `payload` a length-delimited
// field's content.
struct Field {
  uint32_t number = 0;
  uint32_t type = 0;
  absl::string_view raw;
  absl::string_view payload;
};

// Reads the next field of `in` and checks it as the protobuf parser does; false on groups and on what it
// would reject.
bool ReadField(absl::string_view& in, Field& field) {
  const char* start = in.data();
  uint64_t tag = 0;
  if (!ReadVarint(in, tag) || tag > UINT32_MAX) return false;
  field.number = static_cast<uint32_t>(tag >> 3);
  field.type = static_cast<uint32_t>(tag & 7);
  if (field.number == 0) return false;
  uint64_t value = 0;
  switch (field.type) {
    case kVarint:
      if (!ReadVarint(in, value)) return false;
      break;
    case kFixed64:
    case kFixed32: {
      const size_t size = field.type == kFixed64 ? 8 : 4;
      if (in.size() < size) return false;
      in.remove_prefix(size);
      break;
    }
    case kLengthDelimited:
      if (!ReadVarint(in, value) || value > in.size()) return false;
      field.payload = in.substr(0, value);
      in.remove_prefix(value);
      break;
    default:
      return false;  // groups (3, 4) and the unused wire types
  }
  field.raw = absl::string_view(start, static_cast<size_t>(in.data() - start));
  return true;
}

// Appends a length-delimited field whose content `write` appends; the length is written once known.
template <typename Write>
bool AppendNested(std::string& out, uint32_t number, Write write) {
  AppendVarint(out, (static_cast<uint64_t>(number) << 3) | kLengthDelimited);
  const size_t at = out.size();
  out.push_back('\0');  // one byte of length, the common case
  if (!write()) return false;
  std::string length;
  AppendVarint(length, out.size() - at - 1);
  out.replace(at, 1, length);
  return true;
}

bool AppendDeclared(absl::string_view in, const Schema& schema, std::string& out);

// Appends `field` of a message of `schema` when the schema declares it, a nested message walked alike.
bool AppendIfDeclared(const Field& field, const Schema& schema, std::string& out) {
  if (!schema.Declares(field.number)) return true;
  const Schema* nested = schema.message[field.number];
  if (nested == nullptr || field.type != kLengthDelimited) {
    out.append(field.raw.data(), field.raw.size());  // the same bytes decode the same
    return true;
  }
  return AppendNested(out, field.number, [&] { return AppendDeclared(field.payload, *nested, out); });
}

// Appends the fields of `in` (a message of `schema`) that the schema declares.
bool AppendDeclared(absl::string_view in, const Schema& schema, std::string& out) {
  if (schema.whole) {
    out.append(in.data(), in.size());
    return true;
  }
  Field field;
  while (!in.empty()) {
    if (!ReadField(in, field) || !AppendIfDeclared(field, schema, out)) return false;
  }
  return true;
}

// A labels entry's key (the last, as the map parser keeps it); false when the entry holds anything but a
// key and a value.
bool ReadEntryKey(absl::string_view entry, absl::string_view& key) {
  Field field;
  while (!entry.empty()) {
    if (!ReadField(entry, field) || field.type != kLengthDelimited) return false;
    if (field.number == kEntryKey) {
      key = field.payload;
    } else if (field.number != kEntryValue) {
      return false;
    }
  }
  return true;
}

// The node's ObjectMeta without its identity. Anything unusual where the identity is read (another wire
// type, a labels entry with more than a key and a value) leaves the template without a key: the key must
// not guess which of two readings the parser keeps.
bool AppendMetadata(absl::string_view in, const Schema& schema, std::string& out) {
  Field field;
  while (!in.empty()) {
    if (!ReadField(in, field)) return false;
    if (field.number == kMetaName || field.number == kMetaUid || field.number == kMetaResourceVersion) {
      if (field.type != kLengthDelimited) return false;
      continue;
    }
    if (field.number == kMetaLabels && field.type == kLengthDelimited) {
      absl::string_view key;
      if (!ReadEntryKey(field.payload, key)) return false;
      if (key == kHostnameLabel) continue;
    }
    if (!AppendIfDeclared(field, schema, out)) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> TemplateKeyOf(absl::string_view node_bytes) {
  const Schema& node = NodeSchema();
  const Schema* metadata = node.message[kNodeMetadata];
  if (node.whole || metadata == nullptr || metadata->whole) return std::nullopt;
  std::string key;
  key.reserve(node_bytes.size());
  Field field;
  while (!node_bytes.empty()) {
    if (!ReadField(node_bytes, field)) return std::nullopt;
    const bool ok = field.number == kNodeMetadata && field.type == kLengthDelimited
                        ? AppendNested(key, field.number, [&] { return AppendMetadata(field.payload, *metadata, key); })
                        : AppendIfDeclared(field, node, key);
    if (!ok) return std::nullopt;
  }
  return key;
}

kube::Node WithoutIdentity(kube::Node template_node) {
  template_node.metadata.name.clear();
  template_node.metadata.uid.clear();
  template_node.metadata.resource_version.clear();
  if (auto it = template_node.metadata.labels.find(kHostnameLabel); it != template_node.metadata.labels.end()) {
    template_node.metadata.labels.erase(it);
  }
  return template_node;
}

}  // namespace topofit::codec
