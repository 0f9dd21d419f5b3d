#include "codec/template_key.h"

#include <google/protobuf/unknown_field_set.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/kube_proto.h"
#include "proto/k8s_core_v1.pb.h"
#include "tests/codec/byte_mutations.h"
#include "tests/codec/deterministic_bytes.h"

namespace topofit::codec {
namespace {

namespace corev1 = ::k8s::io::api::core::v1;

std::string Bytes(const corev1::Node& node) {
  std::string bytes = testing::DeterministicBytes(node);
  REQUIRE_FALSE(bytes.empty());
  return bytes;
}

// A template CA could send: a GPU group's node with what decisions read, under a loop's identity.
corev1::Node Template(int loop = 0) {
  corev1::Node node;
  auto& meta = *node.mutable_metadata();
  meta.set_name(absl::StrCat("template-node-for-p4d-", 5577006791947779410 + loop));
  meta.set_uid(absl::StrCat("uid-", loop));
  meta.set_resourceversion(absl::StrCat(48213377 + loop));
  (*meta.mutable_labels())["kubernetes.io/hostname"] = meta.name();
  (*meta.mutable_labels())["node.kubernetes.io/instance-type"] = "p4d.24xlarge";
  (*meta.mutable_labels())["topology.kubernetes.io/zone"] = "us-east-1a";
  (*meta.mutable_annotations())["topofit.io/price-per-hour"] = "32.77";
  meta.mutable_creationtimestamp()->set_seconds(1764000000);
  meta.add_ownerreferences()->set_kind("Machine");
  auto& spec = *node.mutable_spec();
  spec.set_providerid("aws:///us-east-1a/i-0abc");
  corev1::Taint* taint = spec.add_taints();
  taint->set_key("nvidia.com/gpu");
  taint->set_effect("NoSchedule");
  (*node.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string("8");
  (*node.mutable_status()->mutable_capacity())["cpu"].set_string("96");
  corev1::NodeCondition* ready = node.mutable_status()->add_conditions();
  ready->set_type("Ready");
  ready->set_status("True");
  return node;
}

std::string KeyOf(const corev1::Node& node) {
  std::optional<std::string> key = TemplateKeyOf(Bytes(node));
  REQUIRE(key.has_value());
  return *key;
}

kube::Node Decoded(const std::string& bytes) {
  absl::StatusOr<kube::Node> node = NodeFromBytes(bytes);
  REQUIRE(node.ok());
  return WithoutIdentity(*std::move(node));
}

TEST_CASE("A template's key leaves out what CA makes anew per loop, and nothing it decodes", "[template_key]") {
  const std::string key = KeyOf(Template(0));
  CHECK(KeyOf(Template(1)) == key);  // another name, hostname label, uid and resourceVersion
  corev1::Node no_hostname = Template(2);
  no_hostname.mutable_metadata()->mutable_labels()->erase("kubernetes.io/hostname");
  CHECK(KeyOf(no_hostname) == key);
  CHECK(Decoded(Bytes(no_hostname)) == Decoded(Bytes(Template(0))));
  const kube::Node decoded = Decoded(Bytes(Template(0)));
  CHECK(decoded.metadata.name.empty());
  CHECK(decoded.metadata.uid.empty());
  CHECK(decoded.metadata.resource_version.empty());
  CHECK_FALSE(decoded.metadata.labels.contains("kubernetes.io/hostname"));

  // Every field decoded changes the key.
  const std::vector<std::pair<const char*, std::function<void(corev1::Node&)>>> changes = {
      {"a label", [](corev1::Node& n) { (*n.mutable_metadata()->mutable_labels())["topology.kubernetes.io/zone"] = "us-east-1b"; }},
      {"a new label", [](corev1::Node& n) { (*n.mutable_metadata()->mutable_labels())["pool"] = std::string("pool-a"); }},
      {"an annotation", [](corev1::Node& n) { (*n.mutable_metadata()->mutable_annotations())["topofit.io/price-per-hour"] = "40"; }},
      {"generateName", [](corev1::Node& n) { n.mutable_metadata()->set_generatename("p4d-"); }},
      {"namespace", [](corev1::Node& n) { n.mutable_metadata()->set_namespace_("x"); }},
      {"creationTimestamp", [](corev1::Node& n) { n.mutable_metadata()->mutable_creationtimestamp()->set_seconds(1); }},
      {"deletionTimestamp", [](corev1::Node& n) { n.mutable_metadata()->mutable_deletiontimestamp()->set_seconds(1); }},
      {"an owner", [](corev1::Node& n) { n.mutable_metadata()->mutable_ownerreferences(0)->set_controller(true); }},
      {"providerID", [](corev1::Node& n) { n.mutable_spec()->set_providerid("aws:///us-east-1a/i-0def"); }},
      {"unschedulable", [](corev1::Node& n) { n.mutable_spec()->set_unschedulable(true); }},
      {"a taint", [](corev1::Node& n) { n.mutable_spec()->mutable_taints(0)->set_effect("NoExecute"); }},
      {"allocatable", [](corev1::Node& n) { (*n.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string("4"); }},
      {"capacity", [](corev1::Node& n) { (*n.mutable_status()->mutable_capacity())["memory"].set_string("1Ti"); }},
      {"a condition", [](corev1::Node& n) { n.mutable_status()->mutable_conditions(0)->set_status("False"); }},
  };
  for (const auto& [what, change] : changes) {
    INFO(what);
    corev1::Node changed = Template(0);
    change(changed);
    CHECK(KeyOf(changed) != key);
    CHECK_FALSE(Decoded(Bytes(changed)) == decoded);
  }
}

TEST_CASE("What the schema does not declare changes neither the key nor the node decoded", "[template_key]") {
  // Upstream fields proto/ leaves out, at each level: managedFields, podCIDR, images, a condition's
  // heartbeat, a taint's unknown fields, fields of every wire type.
  const std::vector<std::pair<const char*, std::function<void(corev1::Node&)>>> additions = {
      {"managedFields", [](corev1::Node& n) { n.mutable_metadata()->mutable_unknown_fields()->AddLengthDelimited(17, std::string(300, 'f')); }},
      {"generation", [](corev1::Node& n) { n.mutable_metadata()->mutable_unknown_fields()->AddVarint(7, 12); }},
      {"podCIDR", [](corev1::Node& n) { n.mutable_spec()->mutable_unknown_fields()->AddLengthDelimited(1, "10.0.0.0/24"); }},
      {"images", [](corev1::Node& n) { n.mutable_status()->mutable_unknown_fields()->AddLengthDelimited(8, std::string(500, 'i')); }},
      {"a fixed64 and a fixed32", [](corev1::Node& n) {
         n.mutable_unknown_fields()->AddFixed64(40, 7);
         n.mutable_unknown_fields()->AddFixed32(41, 7);
       }},
      {"a heartbeat", [](corev1::Node& n) {
         n.mutable_status()->mutable_conditions(0)->mutable_unknown_fields()->AddLengthDelimited(3, "\x08\x01");
       }},
      {"a taint's timeAdded", [](corev1::Node& n) { n.mutable_spec()->mutable_taints(0)->mutable_unknown_fields()->AddLengthDelimited(4, "\x08\x01"); }},
  };
  const std::string key = KeyOf(Template(0));
  const kube::Node decoded = Decoded(Bytes(Template(0)));
  for (const auto& [what, add] : additions) {
    INFO(what);
    corev1::Node added = Template(3);
    add(added);
    CHECK(Bytes(added).size() > Bytes(Template(3)).size());
    CHECK(KeyOf(added) == key);
    CHECK(Decoded(Bytes(added)) == decoded);  // if this fails, the decoder reads a field the key drops
  }
  // A map entry (a label, an annotation, a quantity) is kept whole: unknown fields inside one are rare
  // enough to cost a miss, not a walk of every entry.
  corev1::Node in_entry = Template(3);
  (*in_entry.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].mutable_unknown_fields()->AddVarint(9, 1);
  CHECK(KeyOf(in_entry) != key);
  CHECK(Decoded(Bytes(in_entry)) == decoded);
}

TEST_CASE("Bytes the parser refuses, or that the key cannot read for sure, have no key", "[template_key]") {
  const std::string good = Bytes(Template(0));
  REQUIRE(TemplateKeyOf(good).has_value());
  CHECK_FALSE(TemplateKeyOf(good.substr(0, good.size() - 1)).has_value());  // truncated
  CHECK_FALSE(TemplateKeyOf(std::string("\x0a\x05\x0a\x03", 4)).has_value());  // a length past the end
  CHECK_FALSE(TemplateKeyOf(std::string("\x00\x01", 2)).has_value());           // field number 0
  CHECK_FALSE(TemplateKeyOf(std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12)).has_value());  // an 11-byte varint
  CHECK_FALSE(TemplateKeyOf(std::string("\x0b\x0c", 2)).has_value());  // a group: the parser's to judge
  corev1::Node odd_name = Template(0);
  odd_name.mutable_metadata()->mutable_unknown_fields()->AddVarint(1, 5);  // the name field as a varint
  CHECK_FALSE(TemplateKeyOf(Bytes(odd_name)).has_value());
  corev1::Node odd_label;
  odd_label.mutable_metadata()->mutable_unknown_fields()->AddLengthDelimited(11, std::string("\x0a\x01k\x18\x01", 5));
  CHECK_FALSE(TemplateKeyOf(Bytes(odd_label)).has_value());  // a labels entry with a third field
  CHECK(TemplateKeyOf("").has_value());  // an empty node is a node
}

TEST_CASE("The key of the bytes as sent leaves out the identity alone", "[template_key]") {
  const std::optional<std::string> sent = SentKeyOf(Bytes(Template(0)));
  REQUIRE(sent.has_value());
  CHECK(SentKeyOf(Bytes(Template(1))) == sent);  // another name, hostname label, uid and resourceVersion
  CHECK(*sent == KeyOf(Template(0)));  // bytes with only fields the decoder reads: both keys are the same
  corev1::Node heartbeat = Template(1);  // a field the decoder does not read: TemplateKeyOf's key stays
  heartbeat.mutable_status()->mutable_conditions(0)->mutable_unknown_fields()->AddLengthDelimited(3, "\x08\x01");
  CHECK(SentKeyOf(Bytes(heartbeat)) != sent);
  CHECK(KeyOf(heartbeat) == KeyOf(Template(0)));
  corev1::Node relabelled = Template(1);
  (*relabelled.mutable_metadata()->mutable_labels())["topology.kubernetes.io/zone"] = "us-east-1b";
  CHECK(SentKeyOf(Bytes(relabelled)) != sent);
  // No key where TemplateKeyOf has none for the identity, nor for a group anywhere.
  corev1::Node odd_name = Template(0);
  odd_name.mutable_metadata()->mutable_unknown_fields()->AddVarint(1, 5);  // the name field as a varint
  CHECK_FALSE(SentKeyOf(Bytes(odd_name)).has_value());
  CHECK_FALSE(SentKeyOf(std::string("\x0b\x0c", 2)).has_value());
  const std::string good = Bytes(Template(0));
  CHECK_FALSE(SentKeyOf(good.substr(0, good.size() - 1)).has_value());  // truncated
}

TEST_CASE("Property: bytes of one key decode alike, or fail alike", "[template_key][property]") {
  // What the cache relies on: bytes found under a key decode as the bytes the entry was decoded from,
  // whichever of the two kinds of key (TemplateKeyOf, SentKeyOf) put it there: one cache holds both.
  // Mutations near a template that carries unread fields too: many keep a key (a changed name or uid; for
  // TemplateKeyOf, a changed heartbeat), most make keys of their own.
  std::mt19937 random(20261206);
  corev1::Node with_unread = Template(0);
  with_unread.mutable_status()->mutable_conditions(0)->mutable_unknown_fields()->AddLengthDelimited(3, "\x08\x01");
  with_unread.mutable_metadata()->mutable_unknown_fields()->AddLengthDelimited(17, std::string(40, 'f'));
  const std::string good = Bytes(with_unread);
  REQUIRE(SentKeyOf(good) != TemplateKeyOf(good));
  struct Seen {
    std::string bytes;
    absl::StatusOr<kube::Node> node;
  };
  std::map<std::string, Seen> first_of_key;
  int keyed = 0;
  std::map<std::string, int> repeated_ok;  // by kind of key: other bytes found under a key held
  for (int trial = 0; trial < 20000; ++trial) {
    const std::string bytes = trial == 0 ? good : testing::Mutated(good, random);
    absl::StatusOr<kube::Node> node = NodeFromBytes(bytes);
    if (node.ok()) node = WithoutIdentity(*std::move(node));
    bool any = false;
    for (const auto& [kind, key] : {std::pair{"declared", TemplateKeyOf(bytes)}, std::pair{"sent", SentKeyOf(bytes)}}) {
      if (!key) continue;
      any = true;
      const auto [seen, first] = first_of_key.try_emplace(*key, Seen{bytes, node});
      if (first || seen->second.bytes == bytes) continue;
      INFO("trial " << trial << ", " << kind << " key");
      REQUIRE(node.ok() == seen->second.node.ok());
      if (node.ok()) {
        ++repeated_ok[kind];
        CHECK(*node == *seen->second.node);
      }
    }
    keyed += any ? 1 : 0;
  }
  CHECK(keyed > 1000);  // the mutations reach past the first field
  CHECK(repeated_ok["declared"] > 100);
  CHECK(repeated_ok["sent"] > 100);
}

}  // namespace
}  // namespace topofit::codec
