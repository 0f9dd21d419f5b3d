#include "codec/template_key.h"

#include <array>
#include <bitset>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include "codec/proto_wire.h"
#include "proto/k8s_core_v1.pb.h"

namespace topofit::codec {
namespace {

constexpr absl::string_view kHostnameLabel = "kubernetes.io/hostname";

// Field numbers of the messages the key walks (upstream's, as proto/*.proto declares them).
constexpr uint32_t kNodeMetadata = 1;
constexpr uint32_t kMetaName = 1, kMetaUid = 5, kMetaResourceVersion = 6, kMetaLabels = 11;
constexpr uint32_t kEntryKey = 1, kEntryValue = 2;

// What one message type of the schema declares. Kept whole (`whole`) rather than walked: a map's entries
// (a key and a value, labels, annotations and resource quantities: nothing in them changes per loop, and
// walking each was most of a key's time), and a message declaring a field number from kMaxField on, rare
// in Kubernetes' messages. What is kept whole is in the key as it came: the same bytes decode the same.
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
    schema->whole = type->options().map_entry();
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
// A group leaves the template without a key: the parser's to judge.
bool AppendIfDeclared(const WireField& field, const Schema& schema, std::string& out) {
  if (field.type == kStartGroup) return false;
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
  WireField field;
  while (!in.empty()) {
    if (!ReadWireField(in, field) || !AppendIfDeclared(field, schema, out)) return false;
  }
  return true;
}

// A labels entry's key (the last, as the map parser keeps it); false when the entry holds anything but a
// key and a value.
bool ReadEntryKey(absl::string_view entry, absl::string_view& key) {
  WireField field;
  while (!entry.empty()) {
    if (!ReadWireField(entry, field) || field.type != kLengthDelimited) return false;
    if (field.number == kEntryKey) {
      key = field.payload;
    } else if (field.number != kEntryValue) {
      return false;
    }
  }
  return true;
}

// The node's ObjectMeta without its identity, each other field appended by `append` (false: no key).
// Anything unusual where the identity is read (another wire type, a labels entry with more than a key and a
// value, a group) leaves the template without a key: the key must not guess which of two readings the
// parser keeps.
template <typename Append>
bool AppendMetadata(absl::string_view in, std::string& out, const Append& append) {
  WireField field;
  while (!in.empty()) {
    if (!ReadWireField(in, field) || field.type == kStartGroup || field.type == kEndGroup) return false;
    if (field.number == kMetaName || field.number == kMetaUid || field.number == kMetaResourceVersion) {
      if (field.type != kLengthDelimited) return false;
      continue;
    }
    if (field.number == kMetaLabels && field.type == kLengthDelimited) {
      absl::string_view key;
      if (!ReadEntryKey(field.payload, key)) return false;
      if (key == kHostnameLabel) continue;
    }
    if (!append(field, out)) return false;
  }
  return true;
}

// The node's fields, its metadata without its identity: the node's other fields appended by `node_field`,
// the metadata's by `metadata_field`.
template <typename AppendNodeField, typename AppendMetadataField>
std::optional<std::string> KeyWithoutIdentity(absl::string_view node_bytes, const AppendNodeField& node_field,
                                              const AppendMetadataField& metadata_field) {
  std::string key;
  key.reserve(node_bytes.size());
  WireField field;
  while (!node_bytes.empty()) {
    if (!ReadWireField(node_bytes, field) || field.type == kStartGroup || field.type == kEndGroup) return std::nullopt;
    const bool ok =
        field.number == kNodeMetadata && field.type == kLengthDelimited
            ? AppendNested(key, field.number, [&] { return AppendMetadata(field.payload, key, metadata_field); })
            : node_field(field, key);
    if (!ok) return std::nullopt;
  }
  return key;
}

}  // namespace

std::optional<std::string> TemplateKeyOf(absl::string_view node_bytes) {
  const Schema& node = NodeSchema();
  const Schema* metadata = node.message[kNodeMetadata];
  if (node.whole || metadata == nullptr || metadata->whole) return std::nullopt;
  return KeyWithoutIdentity(
      node_bytes, [&](const WireField& field, std::string& out) { return AppendIfDeclared(field, node, out); },
      [&](const WireField& field, std::string& out) { return AppendIfDeclared(field, *metadata, out); });
}

std::optional<std::string> SentKeyOf(absl::string_view node_bytes) {
  const auto as_sent = [](const WireField& field, std::string& out) {
    out.append(field.raw.data(), field.raw.size());
    return true;
  };
  return KeyWithoutIdentity(node_bytes, as_sent, as_sent);
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
