#include "codec/best_options_wire.h"

#include <google/protobuf/stubs/logging.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "codec/kube_proto.h"
#include "proto/expander.pb.h"
#include "tests/codec/byte_mutations.h"

namespace topofit::codec {
namespace {

namespace corev1 = ::k8s::io::api::core::v1;

corev1::Pod Pod(const std::string& name) {
  corev1::Pod pod;
  pod.mutable_metadata()->set_name(name);
  pod.mutable_metadata()->set_namespace_("ml");
  return pod;
}

corev1::Node Node(const std::string& type) {
  corev1::Node node;
  (*node.mutable_metadata()->mutable_labels())["node.kubernetes.io/instance-type"] = type;
  (*node.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string("8");
  return node;
}

// A request of every wire generation at once: options with pods in either field, both maps.
grpcplugin::BestOptionsRequest Request() {
  grpcplugin::BestOptionsRequest request;
  grpcplugin::Option* bytes = request.add_options();
  bytes->set_nodegroupid("p4d-ü");  // UTF-8 beyond ASCII
  bytes->set_nodecount(3);
  bytes->set_debug("estimator packed 2 pods");
  bytes->add_podbytes(Pod("a").SerializeAsString());
  bytes->add_podbytes(Pod("b").SerializeAsString());
  grpcplugin::Option* messages = request.add_options();
  messages->set_nodegroupid("g5");
  messages->set_nodecount(-2);  // int32 on the wire as ten bytes
  *messages->add_pod() = Pod("c");
  request.add_options();  // empty
  (*request.mutable_nodemap())["g5"] = Node("g5.48xlarge");
  (*request.mutable_nodemap())["legacy"] = Node("p3.16xlarge");
  (*request.mutable_nodebytesmap())["p4d-ü"] = Node("p4d.24xlarge").SerializeAsString();
  return request;
}

// Every field of `wire` is what the generated parser read from the same bytes.
void CheckSame(const BestOptionsWire& wire, const grpcplugin::BestOptionsRequest& parsed) {
  REQUIRE(wire.options.size() == static_cast<size_t>(parsed.options_size()));
  for (int i = 0; i < parsed.options_size(); ++i) {
    INFO("option " << i);
    const grpcplugin::Option& option = parsed.options(i);
    const OptionWire& read = wire.options[static_cast<size_t>(i)];
    CHECK(read.node_group_id == option.nodegroupid());
    CHECK(read.node_count == option.nodecount());
    CHECK(read.debug == option.debug());
    REQUIRE(read.pod_bytes.size() == static_cast<size_t>(option.podbytes_size()));
    for (int j = 0; j < option.podbytes_size(); ++j) CHECK(read.pod_bytes[static_cast<size_t>(j)] == option.podbytes(j));
    REQUIRE(read.pods.size() == static_cast<size_t>(option.pod_size()));
    for (int j = 0; j < option.pod_size(); ++j) {
      const absl::StatusOr<kube::Pod> pod = PodFromBytes(read.pods[static_cast<size_t>(j)]);
      const absl::StatusOr<kube::Pod> expected = PodFromProto(option.pod(j));
      REQUIRE(pod.status() == expected.status());
      if (pod.ok()) CHECK(pod->metadata.name == expected->metadata.name);
    }
  }
  REQUIRE(wire.node_bytes_map.size() == parsed.nodebytesmap().size());
  for (const auto& [key, value] : parsed.nodebytesmap()) {
    REQUIRE(wire.node_bytes_map.contains(key));
    CHECK(wire.node_bytes_map.at(key) == value);
  }
  REQUIRE(wire.node_map.size() == parsed.nodemap().size());
  for (const auto& [key, node] : parsed.nodemap()) {
    REQUIRE(wire.node_map.contains(key));
    const absl::StatusOr<kube::Node> read = NodeFromBytes(wire.node_map.at(key));
    const absl::StatusOr<kube::Node> expected = NodeFromProto(node);
    INFO("nodeMap[" << key << "] " << absl::CEscape(wire.node_map.at(key)) << " parsed as " << node.ShortDebugString());
    REQUIRE(read.status() == expected.status());  // a quantity that does not parse, say, is refused alike
    if (read.ok()) CHECK(*read == *expected);
  }
}

TEST_CASE("ReadBestOptions reads every field as the generated parser does, copying none", "[best_options_wire]") {
  // Unknown fields of every wire type are skipped, a group (field 11, holding a varint and a group) too.
  const std::string bytes = Request().SerializeAsString() + std::string("\x5b\x08\x01\x63\x64\x5c\x20\x07\x2d\x01\x02\x03\x04", 13);
  const absl::StatusOr<BestOptionsWire> wire = ReadBestOptions(bytes);
  REQUIRE(wire.ok());
  grpcplugin::BestOptionsRequest parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  CheckSame(*wire, parsed);
  // Views into the request's bytes.
  const absl::string_view pod = wire->options[0].pod_bytes[0];
  CHECK(pod.data() >= bytes.data());
  CHECK(pod.data() + pod.size() <= bytes.data() + bytes.size());
  CHECK(wire->options[1].node_count == -2);
}

TEST_CASE("ReadBestOptions: last field and last map entry win, a message value in parts is merged", "[best_options_wire]") {
  grpcplugin::BestOptionsRequest first, second;
  first.add_options()->set_nodegroupid("a");
  (*first.mutable_nodebytesmap())["g"] = "old";
  (*first.mutable_nodemap())["n"] = Node("p4d.24xlarge");
  (*second.mutable_nodebytesmap())["g"] = "new";
  (*second.mutable_nodemap())["n"] = Node("p5.48xlarge");
  // Concatenated messages are one merged message: options append, map entries of a key replace.
  std::string bytes = first.SerializeAsString() + second.SerializeAsString();
  // An option whose nodeGroupId comes twice: the last wins.
  grpcplugin::BestOptionsRequest twice;
  grpcplugin::Option* option = twice.add_options();
  option->set_nodegroupid("first");
  std::string option_bytes = option->SerializeAsString();
  grpcplugin::Option later;
  later.set_nodegroupid("second");
  later.set_nodecount(4);
  option_bytes += later.SerializeAsString();
  bytes += absl::StrCat("\x0a", std::string(1, static_cast<char>(option_bytes.size())), option_bytes);
  // A nodeMap entry giving its value in two parts: key, value, value.
  corev1::Node labelled;
  (*labelled.mutable_metadata()->mutable_labels())["pool"] = "x";
  corev1::Node allocatable;
  (*allocatable.mutable_status()->mutable_allocatable())["cpu"].set_string("4");
  const std::string part1 = labelled.SerializeAsString(), part2 = allocatable.SerializeAsString();
  const std::string entry = absl::StrCat("\x0a\x05split", "\x12", std::string(1, static_cast<char>(part1.size())), part1,
                                         "\x12", std::string(1, static_cast<char>(part2.size())), part2);
  bytes += absl::StrCat("\x12", std::string(1, static_cast<char>(entry.size())), entry);

  grpcplugin::BestOptionsRequest parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  const absl::StatusOr<BestOptionsWire> wire = ReadBestOptions(bytes);
  REQUIRE(wire.ok());
  CheckSame(*wire, parsed);
  CHECK(wire->node_bytes_map.at("g") == "new");
  CHECK(wire->options.back().node_group_id == "second");
  const absl::StatusOr<kube::Node> split = NodeFromBytes(wire->node_map.at("split"));
  REQUIRE(split.ok());
  CHECK(split->metadata.labels.at("pool") == "x");
  CHECK(split->status.allocatable.contains("cpu"));
}

TEST_CASE("ReadBestOptions skips unknown groups however deep the parser lets them nest", "[best_options_wire]") {
  for (int depth : {1, 50, 99}) {
    INFO("depth " << depth);
    std::string groups;
    for (int i = 0; i < depth; ++i) groups += "\x5b";  // field 11, start group
    groups += std::string("\x08\x01", 2);
    for (int i = 0; i < depth; ++i) groups += "\x5c";  // field 11, end group
    const std::string bytes = Request().SerializeAsString() + groups;
    grpcplugin::BestOptionsRequest parsed;
    REQUIRE(parsed.ParseFromString(bytes));
    const absl::StatusOr<BestOptionsWire> wire = ReadBestOptions(bytes);
    REQUIRE(wire.ok());
    CheckSame(*wire, parsed);
  }
  // A five-byte tag past 32 bits is read as the parser reads it (the bits dropped; found by the fuzzer):
  // here an unknown fixed32 of field 158,592,463 once truncated.
  const std::string long_tag("\xfd\xdc\xfd\xdc\x34\x00\x00\x00\xca", 9);
  grpcplugin::BestOptionsRequest parsed;
  CHECK(parsed.ParseFromString(long_tag));
  CHECK(ReadBestOptions(long_tag).ok());
  CHECK_FALSE(parsed.ParseFromString(std::string("\xfd\xdc\xfd\xdc\xb4\x00\x00\x00\x00\xca", 10)));  // six bytes
  CHECK_FALSE(ReadBestOptions(std::string("\xfd\xdc\xfd\xdc\xb4\x00\x00\x00\x00\xca", 10)).ok());
  // An end without its start, or with another field's number, is refused by both.
  for (const std::string& bad : {std::string("\x5c"), std::string("\x5b\x64")}) {
    grpcplugin::BestOptionsRequest parsed;
    CHECK_FALSE(parsed.ParseFromString(bad));
    CHECK_FALSE(ReadBestOptions(bad).ok());
  }
}

TEST_CASE("ReadBestOptions refuses what the generated parser refuses, saying what", "[best_options_wire]") {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"\x0a\xff\xff\xff\xff\x0f not protobuf", "malformed protobuf"},
      {absl::StrCat("\x0a\x04", "\x0a\x02\xc3\x28"), "options[0].nodeGroupId is not UTF-8"},
      {absl::StrCat("\x0a\x04", "\x1a\x02\xff\xfe"), "options[0].debug is not UTF-8"},
      {absl::StrCat("\x1a\x04", "\x0a\x02\xc0\xaf"), "a nodeBytesMap key is not UTF-8"},
      {absl::StrCat("\x0a\x03", "\x0a\x05", "a"), "options[0] is malformed protobuf"},
  };
  google::protobuf::LogSilencer quiet;  // the parser logs every string that is not UTF-8
  for (const auto& [bytes, message] : rows) {
    INFO(message);
    grpcplugin::BestOptionsRequest parsed;
    CHECK_FALSE(parsed.ParseFromString(bytes));
    const absl::StatusOr<BestOptionsWire> wire = ReadBestOptions(bytes);
    REQUIRE_FALSE(wire.ok());
    CHECK(wire.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(wire.status().message() == message);
  }
}

TEST_CASE("Property: whatever bytes the generated parser reads, ReadBestOptions reads the same", "[best_options_wire][property]") {
  google::protobuf::LogSilencer quiet;
  std::mt19937 random(7);
  const std::string good = Request().SerializeAsString();
  int parsed_count = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::string bytes = testing::Mutated(good, random);
    grpcplugin::BestOptionsRequest parsed;
    const absl::StatusOr<BestOptionsWire> wire = ReadBestOptions(bytes);
    if (!parsed.ParseFromString(bytes)) continue;
    ++parsed_count;
    INFO("trial " << trial);
    REQUIRE(wire.ok());
    CheckSame(*wire, parsed);
  }
  CHECK(parsed_count > 1000);
}

}  // namespace
}  // namespace topofit::codec
