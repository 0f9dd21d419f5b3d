#include "codec/kube_proto.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codec/kube_json.h"
#include "codec/template_key.h"
#include "tests/codec/deterministic_bytes.h"
#include "tests/kube/status_matchers.h"

namespace topofit::codec {
namespace {

namespace corev1 = ::k8s::io::api::core::v1;
using google::protobuf::internal::WireFormatLite;

// ---------------------------------------------------------------------------------------------------------
// Equality of decoded objects. The model has no operator==, and a test should not add one for it; a text
// form with one line per field compares every field at once and, when it fails, shows which.

template <typename Map>
void DumpMap(std::ostream& out, const char* name, const Map& map) {
  for (const auto& [key, value] : map) out << name << "[" << key << "]=" << value << "\n";
}

void DumpMeta(std::ostream& out, const kube::ObjectMeta& meta) {
  out << "name=" << meta.name << "\nnamespace=" << meta.namespace_name << "\nuid=" << meta.uid
      << "\nresourceVersion=" << meta.resource_version << "\ngenerateName=" << meta.generate_name
      << "\ncreationTimestamp=" << meta.creation_timestamp_seconds
      << "\nhasDeletionTimestamp=" << meta.has_deletion_timestamp << "\n";
  DumpMap(out, "labels", meta.labels);
  DumpMap(out, "annotations", meta.annotations);
  for (const kube::OwnerReference& ref : meta.owner_references) {
    out << "ownerReference=" << ref.kind << "/" << ref.name << " controller=" << ref.controller << "\n";
  }
}

void DumpResources(std::ostream& out, const std::string& prefix, const kube::ResourceRequirements& resources) {
  DumpMap(out, (prefix + ".requests").c_str(), resources.requests);
  DumpMap(out, (prefix + ".limits").c_str(), resources.limits);
}

void DumpTerm(std::ostream& out, const kube::NodeSelectorTerm& term) {
  for (const auto* list : {&term.match_expressions, &term.match_fields}) {
    out << (list == &term.match_expressions ? "  matchExpressions:" : "  matchFields:");
    for (const kube::NodeSelectorRequirement& r : *list) {
      out << " " << r.key << " op=" << static_cast<int>(r.op) << " [";
      for (const std::string& value : r.values) out << value << ",";
      out << "]";
    }
    out << "\n";
  }
}

void DumpConditions(std::ostream& out, const std::vector<kube::Condition>& conditions) {
  for (const kube::Condition& c : conditions) {
    out << "condition=" << c.type << "/" << c.status << "/" << c.reason << "\n";
  }
}

std::string Dump(const kube::Pod& pod) {
  std::ostringstream out;
  DumpMeta(out, pod.metadata);
  const kube::PodSpec& spec = pod.spec;
  for (const auto* list : {&spec.containers, &spec.init_containers}) {
    const std::string kind = list == &spec.containers ? "container" : "initContainer";
    for (const kube::Container& c : *list) {
      out << kind << "=" << c.name << " restartPolicy=" << static_cast<int>(c.restart_policy) << "\n";
      DumpResources(out, kind, c.resources);
    }
  }
  DumpMap(out, "overhead", spec.overhead);
  DumpResources(out, "pod", spec.resources);
  DumpMap(out, "nodeSelector", spec.node_selector);
  if (spec.required_node_affinity) {
    out << "required:\n";
    for (const kube::NodeSelectorTerm& term : spec.required_node_affinity->terms) DumpTerm(out, term);
  }
  for (const kube::PreferredSchedulingTerm& term : spec.preferred_node_affinity) {
    out << "preferred weight=" << term.weight << "\n";
    DumpTerm(out, term.preference);
  }
  for (const kube::Toleration& t : spec.tolerations) {
    out << "toleration=" << t.key << " op=" << static_cast<int>(t.op) << " value=" << t.value
        << " effect=" << static_cast<int>(t.effect)
        << " seconds=" << (t.toleration_seconds ? std::to_string(*t.toleration_seconds) : "unset") << "\n";
  }
  out << "schedulerName=" << spec.scheduler_name << "\nnodeName=" << spec.node_name
      << "\npriority=" << (spec.priority ? std::to_string(*spec.priority) : "unset")
      << "\npriorityClassName=" << spec.priority_class_name;
  if (spec.workload_ref) {
    out << "\nworkloadRef=" << spec.workload_ref->name << " podGroup=" << spec.workload_ref->pod_group
        << " replicaKey=" << spec.workload_ref->pod_group_replica_key;
  }
  if (spec.scheduling_group) out << "\nschedulingGroup=" << spec.scheduling_group->pod_group_name;
  for (const kube::PodResourceClaim& claim : spec.resource_claims) {
    out << "\nresourceClaim=" << claim.name << " claim=" << claim.resource_claim_name.value_or("unset")
        << " template=" << claim.resource_claim_template_name.value_or("unset");
  }
  out << "\nphase=" << pod.status.phase
      << "\nnominatedNodeName=" << pod.status.nominated_node_name << "\n";
  for (const kube::PodResourceClaimStatus& claim : pod.status.resource_claim_statuses) {
    out << "resourceClaimStatus=" << claim.name << " claim=" << claim.resource_claim_name.value_or("unset") << "\n";
  }
  DumpConditions(out, pod.status.conditions);
  return out.str();
}

std::string Dump(const kube::Node& node) {
  std::ostringstream out;
  DumpMeta(out, node.metadata);
  out << "unschedulable=" << node.spec.unschedulable << "\nproviderID=" << node.spec.provider_id << "\n";
  for (const kube::Taint& t : node.spec.taints) {
    out << "taint=" << t.key << "=" << t.value << ":" << static_cast<int>(t.effect) << "\n";
  }
  DumpMap(out, "capacity", node.status.capacity);
  DumpMap(out, "allocatable", node.status.allocatable);
  DumpConditions(out, node.status.conditions);
  return out.str();
}

template <typename T>
T RequireOk(absl::StatusOr<T> result) {
  REQUIRE_OK(result);
  return *std::move(result);
}

// ---------------------------------------------------------------------------------------------------------
// The real round-trip fixtures of kubernetes/api (testdata), read in place (never copied into the repo).

std::filesystem::path FixtureDir() {
  const char* shared = std::getenv("TOPOFIT_SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : TOPOFIT_DEFAULT_SHARED_DIR) / "fixtures" / "k8s";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  INFO(path.string());
  REQUIRE(file.good());
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// One object of one release: <version>/<stem>.{json,pb} and derived/<version>_<stem>.raw.bin.
struct Fixture {
  std::string version;
  std::string stem;  // "core.v1.Pod", "core.v1.Pod.after_roundtrip", "core.v1.Node"
  bool is_pod;

  std::string Name() const { return version + " " + stem; }
  std::filesystem::path Json() const { return FixtureDir() / version / (stem + ".json"); }
  std::filesystem::path Pb() const { return FixtureDir() / version / (stem + ".pb"); }
  std::filesystem::path Raw() const { return FixtureDir() / "derived" / (version + "_" + stem + ".raw.bin"); }
};

std::vector<Fixture> AllFixtures() {
  std::vector<Fixture> all;
  for (const char* version : {"HEAD", "v1.33.0", "v1.34.0", "v1.35.0", "v1.36.0"}) {
    all.push_back({version, "core.v1.Pod", true});
    all.push_back({version, "core.v1.Node", false});
  }
  // The v1.35.0 / v1.36.0 Pods carry obsolete alpha fields (spec 42, status 21.3) that a decoder must
  // skip; their after_roundtrip forms are the same objects without them.
  for (const char* version : {"v1.35.0", "v1.36.0"}) all.push_back({version, "core.v1.Pod.after_roundtrip", true});
  return all;
}

bool HaveFixtures() {
  if (std::filesystem::is_directory(FixtureDir() / "derived")) return true;
  WARN("skipped: no fixtures at " << FixtureDir().string());
  return false;
}

// A .pb file is "k8s\0" then runtime.Unknown{typeMeta=1{apiVersion=1, kind=2}, raw=2, ...}; the raw
// payload is the bare object, what CA sends. Reads the kind too, so a wrong field cannot pass silently.
struct Envelope {
  std::string kind;
  std::string raw;
};

std::optional<Envelope> StripEnvelope(const std::string& file) {
  constexpr absl::string_view kMagic("k8s\0", 4);
  if (!absl::StartsWith(file, kMagic)) return std::nullopt;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(file.data()) + kMagic.size(),
                                            static_cast<int>(file.size() - kMagic.size()));
  Envelope envelope;
  while (const uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field == 1 && WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::string type_meta;
      if (!WireFormatLite::ReadBytes(&in, &type_meta)) return std::nullopt;
      google::protobuf::io::CodedInputStream meta(reinterpret_cast<const uint8_t*>(type_meta.data()),
                                                  static_cast<int>(type_meta.size()));
      while (const uint32_t meta_tag = meta.ReadTag()) {
        if (WireFormatLite::GetTagFieldNumber(meta_tag) == 2) {
          if (!WireFormatLite::ReadBytes(&meta, &envelope.kind)) return std::nullopt;
        } else if (!WireFormatLite::SkipField(&meta, meta_tag)) {
          return std::nullopt;
        }
      }
    } else if (field == 2 && WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!WireFormatLite::ReadBytes(&in, &envelope.raw)) return std::nullopt;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return std::nullopt;
    }
  }
  return envelope;
}

// The same object decoded from JSON (codec/kube_json.h) and from the raw protobuf bytes, as text.
struct Decoded {
  std::string from_json;
  std::string from_bytes;
};

Decoded DecodeBoth(const Fixture& fixture, const std::string& bytes) {
  const nlohmann::json json = nlohmann::json::parse(ReadFile(fixture.Json()));
  if (fixture.is_pod) return {Dump(RequireOk(PodFromJson(json))), Dump(RequireOk(PodFromBytes(bytes)))};
  return {Dump(RequireOk(NodeFromJson(json))), Dump(RequireOk(NodeFromBytes(bytes)))};
}

TEST_CASE("Upstream protobuf fixtures decode to the objects their JSON decodes to", "[kube_proto][fixtures]") {
  if (!HaveFixtures()) return;
  for (const Fixture& fixture : AllFixtures()) {
    SECTION(fixture.Name()) {
      SECTION("bare bytes (derived/*.raw.bin, as in podBytes / nodeBytesMap)") {
        const Decoded decoded = DecodeBoth(fixture, ReadFile(fixture.Raw()));
        CHECK(decoded.from_bytes == decoded.from_json);
        // Guards the comparison against two empty objects: the synthetic values are there.
        CHECK_THAT(decoded.from_bytes, Catch::Contains("name=nameValue") && Catch::Contains("uid=uidValue"));
        if (fixture.is_pod) {
          // What a DRA pod names (every version since 1.33 has them): the expander ranks claim pods by them.
          CHECK_THAT(decoded.from_bytes,
                     Catch::Contains("resourceClaim=nameValue claim=resourceClaimNameValue "
                                     "template=resourceClaimTemplateNameValue") &&
                         Catch::Contains("resourceClaimStatus=nameValue claim=resourceClaimNameValue"));
        }
      }
      SECTION("the .pb file, its k8s\\0 + runtime.Unknown envelope stripped") {
        const std::optional<Envelope> envelope = StripEnvelope(ReadFile(fixture.Pb()));
        REQUIRE(envelope.has_value());
        CHECK(envelope->kind == (fixture.is_pod ? "Pod" : "Node"));
        CHECK(envelope->raw == ReadFile(fixture.Raw()));
        const Decoded decoded = DecodeBoth(fixture, envelope->raw);
        CHECK(decoded.from_bytes == decoded.from_json);
      }
    }
  }
}

TEST_CASE("A pod and a node from the fixtures hold the synthetic values field by field", "[kube_proto][fixtures]") {
  // The JSON comparison above proves agreement; this pins a few values so that both decoders dropping
  // the same field cannot pass.
  if (!HaveFixtures()) return;
  const kube::Pod pod = RequireOk(PodFromBytes(ReadFile(Fixture{"HEAD", "core.v1.Pod", true}.Raw())));
  CHECK(pod.metadata.creation_timestamp_seconds == 1199149261);  // 2008-01-01T01:01:01Z
  CHECK(pod.metadata.has_deletion_timestamp);
  REQUIRE(pod.spec.init_containers.size() == 1);
  CHECK(pod.spec.init_containers[0].restart_policy == kube::ContainerRestartPolicy::kUnknown);  // Container 24
  CHECK(pod.spec.resources.limits == kube::ResourceList{{"limitsKey", 0}});                   // PodSpec 40
  CHECK(pod.spec.overhead == kube::ResourceList{{"overheadKey", 0}});                          // PodSpec 32
  CHECK(pod.spec.priority == 25);
  REQUIRE(pod.spec.tolerations.size() == 1);
  CHECK(pod.spec.tolerations[0].toleration_seconds == 5);
  REQUIRE(pod.spec.required_node_affinity.has_value());
  REQUIRE(pod.spec.required_node_affinity->terms.size() == 1);
  CHECK(pod.spec.required_node_affinity->terms[0].match_fields.size() == 1);
  CHECK(pod.status.nominated_node_name == "nominatedNodeNameValue");
  REQUIRE(pod.spec.scheduling_group.has_value());                                              // PodSpec 43
  CHECK(pod.spec.scheduling_group->pod_group_name == "podGroupNameValue");
  CHECK_FALSE(pod.spec.workload_ref.has_value());  // 1.36 dropped it

  // 1.35's workloadRef (PodSpec 42), the release that has it.
  const kube::Pod v135 = RequireOk(PodFromBytes(ReadFile(Fixture{"v1.35.0", "core.v1.Pod", true}.Raw())));
  REQUIRE(v135.spec.workload_ref.has_value());
  CHECK(*v135.spec.workload_ref == kube::WorkloadReference{.name = "nameValue",
                                                           .pod_group = "podGroupValue",
                                                           .pod_group_replica_key = "podGroupReplicaKeyValue"});

  const kube::Node node = RequireOk(NodeFromBytes(ReadFile(Fixture{"HEAD", "core.v1.Node", false}.Raw())));
  CHECK(node.spec.provider_id == "providerIDValue");
  CHECK(node.spec.unschedulable);
  CHECK(node.status.allocatable == kube::ResourceList{{"allocatableKey", 0}});
  REQUIRE(node.status.conditions.size() == 1);
  CHECK(node.status.conditions[0].reason == "reasonValue");
}

// ---------------------------------------------------------------------------------------------------------
// BestOptionsRequest in each wire generation.

enum class Layout { kMessages, kBoth, kBytes };

struct Generation {
  const char* name;
  Layout layout;
};

constexpr Generation kGenerations[] = {
    {"CA 1.24.0-1.34.1: nodeMap (2) + Option.pod (4)", Layout::kMessages},
    {"CA 1.34.2-1.34.5: both pairs of fields", Layout::kBoth},
    {"CA 1.35.0+: nodeBytesMap (3) + Option.podBytes (5)", Layout::kBytes},
};

void AddNode(grpcplugin::BestOptionsRequest* request, Layout layout, const std::string& id, const std::string& bytes) {
  if (layout != Layout::kBytes) REQUIRE((*request->mutable_nodemap())[id].ParseFromString(bytes));
  if (layout != Layout::kMessages) (*request->mutable_nodebytesmap())[id] = bytes;
}

void AddOption(grpcplugin::BestOptionsRequest* request, Layout layout, const std::string& id, int count,
               const std::vector<std::string>& pods) {
  grpcplugin::Option* option = request->add_options();
  option->set_nodegroupid(id);
  option->set_nodecount(count);
  option->set_debug("estimator packed " + std::to_string(pods.size()) + " pods");
  for (const std::string& bytes : pods) {
    if (layout != Layout::kBytes) REQUIRE(option->add_pod()->ParseFromString(bytes));
    if (layout != Layout::kMessages) option->add_podbytes(bytes);
  }
}

// What the server receives: the request encoded and parsed again, as gRPC does.
grpcplugin::BestOptionsRequest OverTheWire(const grpcplugin::BestOptionsRequest& request) {
  grpcplugin::BestOptionsRequest received;
  REQUIRE(received.ParseFromString(request.SerializeAsString()));
  return received;
}

TEST_CASE("DecodeBestOptions reads every wire generation alike", "[kube_proto][fixtures]") {
  if (!HaveFixtures()) return;
  for (const char* version : {"HEAD", "v1.33.0", "v1.34.0", "v1.35.0", "v1.36.0"}) {
    const std::string pod_bytes = ReadFile(Fixture{version, "core.v1.Pod", true}.Raw());
    const std::string node_bytes = ReadFile(Fixture{version, "core.v1.Node", false}.Raw());
    const std::string expected_pod = Dump(RequireOk(PodFromBytes(pod_bytes)));
    // Templates come without the identity CA makes anew on every loop (codec/template_key.h).
    const std::string expected_node = Dump(WithoutIdentity(RequireOk(NodeFromBytes(node_bytes))));
    for (const Generation& generation : kGenerations) {
      SECTION(std::string(version) + " pods, " + generation.name) {
        grpcplugin::BestOptionsRequest request;
        AddOption(&request, generation.layout, "gpu-a", 3, {pod_bytes, pod_bytes});
        AddOption(&request, generation.layout, "gpu-b", 1, {pod_bytes});
        AddNode(&request, generation.layout, "gpu-a", node_bytes);
        AddNode(&request, generation.layout, "gpu-b", node_bytes);
        AddNode(&request, generation.layout, "cpu-only", node_bytes);  // a group in no option

        const DecodedRequest decoded = RequireOk(DecodeBestOptions(OverTheWire(request)));
        REQUIRE(decoded.options.size() == 2);
        CHECK(decoded.options[0].node_group_id == "gpu-a");
        CHECK(decoded.options[0].node_count == 3);
        CHECK(decoded.options[1].node_group_id == "gpu-b");
        CHECK(decoded.options[1].node_count == 1);
        REQUIRE(decoded.options[0].pods.size() == 2);
        REQUIRE(decoded.options[1].pods.size() == 1);
        for (const ExpanderOption& option : decoded.options) {
          for (const kube::Pod& pod : option.pods) CHECK(Dump(pod) == expected_pod);
        }
        REQUIRE(decoded.templates.size() == 3);
        for (const auto& [id, node] : decoded.templates) {
          INFO(id);
          CHECK(Dump(*node) == expected_node);
        }
      }
    }
  }
}

TEST_CASE("Kubernetes' own Node bytes have a template key, the same under any loop's identity", "[kube_proto][fixtures]") {
  if (!HaveFixtures()) return;
  for (const char* version : {"HEAD", "v1.33.0", "v1.34.0", "v1.35.0", "v1.36.0"}) {
    INFO(version);
    const std::string raw = ReadFile(Fixture{version, "core.v1.Node", false}.Raw());
    const std::optional<std::string> key = TemplateKeyOf(raw);
    REQUIRE(key.has_value());
    CHECK(key->size() < raw.size());  // the fixtures fill every field, most of them not read
    // The same node as CA names it in two loops (fields it does not declare travel along, unknown).
    std::string renamed[2];
    for (int loop = 0; loop < 2; ++loop) {
      corev1::Node node;
      REQUIRE(node.ParseFromString(raw));
      const std::string name = absl::StrCat("template-node-for-ng-", 4037200794235010051 + loop);
      node.mutable_metadata()->set_name(name);
      node.mutable_metadata()->set_uid(absl::StrCat("uid-", loop));
      node.mutable_metadata()->set_resourceversion(absl::StrCat(loop));
      (*node.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] = name;
      renamed[loop] = testing::DeterministicBytes(node);
    }
    const std::optional<std::string> first = TemplateKeyOf(renamed[0]);
    REQUIRE(first.has_value());
    CHECK(TemplateKeyOf(renamed[1]) == first);
    CHECK(Dump(WithoutIdentity(RequireOk(NodeFromBytes(renamed[0])))) ==
          Dump(WithoutIdentity(RequireOk(NodeFromBytes(renamed[1])))));
  }
}

corev1::Node NamedNode(const std::string& name) {
  corev1::Node node;
  node.mutable_metadata()->set_name(name);
  return node;
}

// A template told apart by a label: a template's name is not decoded (it changes on every loop).
corev1::Node LabelledNode(const std::string& from) {
  corev1::Node node;
  (*node.mutable_metadata()->mutable_labels())["from"] = from;
  return node;
}

corev1::Pod NamedPod(const std::string& name) {
  corev1::Pod pod;
  pod.mutable_metadata()->set_name(name);
  return pod;
}

TEST_CASE("DecodeBestOptions prefers the bytes fields, per key and per option", "[kube_proto]") {
  grpcplugin::BestOptionsRequest request;
  (*request.mutable_nodemap())["both"] = LabelledNode("nodeMap");
  (*request.mutable_nodebytesmap())["both"] = LabelledNode("nodeBytesMap").SerializeAsString();
  (*request.mutable_nodemap())["message-only"] = LabelledNode("only-in-nodeMap");
  (*request.mutable_nodebytesmap())["bytes-only"] = LabelledNode("only-in-nodeBytesMap").SerializeAsString();

  grpcplugin::Option* both = request.add_options();
  *both->add_pod() = NamedPod("from-pod");
  both->add_podbytes(NamedPod("from-podBytes").SerializeAsString());
  grpcplugin::Option* message_only = request.add_options();
  *message_only->add_pod() = NamedPod("only-in-pod");
  request.add_options();  // no pods at all

  const DecodedRequest decoded = RequireOk(DecodeBestOptions(OverTheWire(request)));
  REQUIRE(decoded.templates.size() == 3);
  CHECK(decoded.templates.at("both")->metadata.labels.at("from") == "nodeBytesMap");
  CHECK(decoded.templates.at("message-only")->metadata.labels.at("from") == "only-in-nodeMap");
  CHECK(decoded.templates.at("bytes-only")->metadata.labels.at("from") == "only-in-nodeBytesMap");
  REQUIRE(decoded.options.size() == 3);
  REQUIRE(decoded.options[0].pods.size() == 1);
  CHECK(decoded.options[0].pods[0].metadata.name == "from-podBytes");
  REQUIRE(decoded.options[1].pods.size() == 1);
  CHECK(decoded.options[1].pods[0].metadata.name == "only-in-pod");
  CHECK(decoded.options[2].pods.empty());
}

TEST_CASE("DecodeBestOptions decodes podBytes repeated across options once, to one shared pod", "[kube_proto]") {
  const std::string trainer = NamedPod("trainer").SerializeAsString();
  grpcplugin::BestOptionsRequest request;
  AddOption(&request, Layout::kBytes, "a", 1, {trainer, NamedPod("web").SerializeAsString()});
  AddOption(&request, Layout::kBytes, "b", 1, {trainer, trainer});

  const DecodedRequest decoded = RequireOk(DecodeBestOptions(OverTheWire(request)));
  REQUIRE(decoded.options.size() == 2);
  REQUIRE(decoded.options[0].pods.size() == 2);
  REQUIRE(decoded.options[1].pods.size() == 2);
  CHECK(decoded.options[0].pods[1].metadata.name == "web");
  CHECK(decoded.options[1].pods[0].metadata.name == "trainer");
  CHECK(&decoded.options[0].pods[0] == &decoded.options[1].pods[0]);
  CHECK(&decoded.options[1].pods[0] == &decoded.options[1].pods[1]);
  CHECK(&decoded.options[0].pods[0] != &decoded.options[0].pods[1]);

  SECTION("bad bytes are reported where they first appear") {
    AddOption(&request, Layout::kBytes, "c", 1, {"\xff\xff\xff"});
    AddOption(&request, Layout::kBytes, "d", 1, {trainer, "\xff\xff\xff"});
    CHECK_STATUS(DecodeBestOptions(OverTheWire(request)), absl::StatusCode::kInvalidArgument,
                 "options[2].podBytes[0]: malformed Pod protobuf");
  }
}

TEST_CASE("DecodeBestOptions with a cache: pods CA sends again are the ones decoded before, new bytes decode anew",
          "[kube_proto]") {
  const std::string trainer = NamedPod("trainer").SerializeAsString();
  const std::string web = NamedPod("web").SerializeAsString();
  PodBytesCache cache;
  grpcplugin::BestOptionsRequest first;
  AddOption(&first, Layout::kBytes, "a", 1, {trainer, web});
  const DecodedRequest before = RequireOk(DecodeBestOptions(OverTheWire(first), {.pods = &cache}));
  CHECK(cache.size() == 2);

  // The next loop: the trainer still pending, web changed (its bytes differ), and an option in messages.
  corev1::Pod changed = NamedPod("web");
  changed.mutable_metadata()->set_resourceversion("2");
  grpcplugin::BestOptionsRequest next;
  AddOption(&next, Layout::kBytes, "b", 1, {changed.SerializeAsString(), trainer});
  AddOption(&next, Layout::kMessages, "c", 1, {trainer});
  const DecodedRequest after = RequireOk(DecodeBestOptions(OverTheWire(next), {.pods = &cache}));
  REQUIRE(after.options.size() == 2);
  CHECK(&after.options[0].pods[1] == &before.options[0].pods[0]);  // the trainer, decoded once
  CHECK(&after.options[0].pods[0] != &before.options[0].pods[1]);
  CHECK(after.options[0].pods[0].metadata.resource_version == "2");
  // A Pod message is a Pod's bytes: the trainer in the message field is the same pod too.
  CHECK(&after.options[1].pods[0] == &before.options[0].pods[0]);
  CHECK(cache.size() == 3);
  // Decoded from the cache or not, the same pods.
  const DecodedRequest uncached = RequireOk(DecodeBestOptions(OverTheWire(next)));
  CHECK(Dump(uncached.options[0].pods[1]) == Dump(after.options[0].pods[1]));

  // Bytes that do not decode are refused every time and never kept.
  grpcplugin::BestOptionsRequest bad;
  AddOption(&bad, Layout::kBytes, "d", 1, {trainer, "\xff\xff\xff"});
  for (int call = 0; call < 2; ++call) {
    CHECK_STATUS(DecodeBestOptions(OverTheWire(bad), {.pods = &cache}), absl::StatusCode::kInvalidArgument,
                 "options[0].podBytes[1]: malformed Pod protobuf");
  }
  CHECK(cache.size() == 3);
}

// CA's template of a group as two loops send it: the same node under a new name, hostname label and uid.
corev1::Node LoopTemplate(const std::string& group, int loop) {
  corev1::Node node = NamedNode(absl::StrCat("template-node-for-", group, "-", 5577006791947779410 + loop));
  (*node.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] = node.metadata().name();
  node.mutable_metadata()->set_uid(absl::StrCat("9b3c-", group, "-", loop));
  (*node.mutable_metadata()->mutable_labels())["node.kubernetes.io/instance-type"] = "p4d.24xlarge";
  (*node.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string("8");
  (*node.mutable_status()->mutable_capacity())["cpu"].set_string("96");
  return node;
}

TEST_CASE("DecodeBestOptions with a template cache: a template CA names anew is not decoded again, and reads the same",
          "[kube_proto]") {
  NodeBytesCache cache;
  grpcplugin::BestOptionsRequest first;
  (*first.mutable_nodebytesmap())["p4d"] = LoopTemplate("p4d", 0).SerializeAsString();
  (*first.mutable_nodebytesmap())["cpu"] = NamedNode("template-node-for-cpu-1").SerializeAsString();
  (*first.mutable_nodemap())["legacy"] = LabelledNode("nodeMap");  // a Node message is a Node's bytes: kept alike
  const DecodedRequest before = RequireOk(DecodeBestOptions(OverTheWire(first), {.templates = &cache}));
  CHECK(cache.size() == 3);
  const DecodedRequest uncached_first = RequireOk(DecodeBestOptions(OverTheWire(first)));
  for (const auto& [group, node] : uncached_first.templates) {
    INFO(group);
    CHECK(node->metadata.name.empty());  // without the identity of the loop, cached or not
    CHECK_FALSE(node->metadata.labels.contains("kubernetes.io/hostname"));
    CHECK(Dump(*before.templates.at(group)) == Dump(*node));
  }

  // The next loop: p4d's template named anew, and sent for another group too; cpu's changed.
  grpcplugin::BestOptionsRequest next;
  (*next.mutable_nodebytesmap())["p4d"] = LoopTemplate("p4d", 1).SerializeAsString();
  (*next.mutable_nodebytesmap())["p4d-b"] = LoopTemplate("p4d-b", 1).SerializeAsString();
  corev1::Node grown = NamedNode("template-node-for-cpu-2");
  (*grown.mutable_metadata()->mutable_labels())["pool"] = "bigger";
  (*next.mutable_nodebytesmap())["cpu"] = grown.SerializeAsString();
  const DecodedRequest after = RequireOk(DecodeBestOptions(OverTheWire(next), {.templates = &cache}));
  CHECK(cache.size() == 4);  // p4d's template found under its key; cpu's new one added
  CHECK(after.templates.at("p4d") == before.templates.at("p4d"));  // the very object: nothing decoded
  CHECK(after.templates.at("p4d-b") == before.templates.at("p4d"));
  CHECK(after.templates.at("cpu")->metadata.labels.at("pool") == "bigger");
  const DecodedRequest uncached = RequireOk(DecodeBestOptions(OverTheWire(next)));
  for (const auto& [group, node] : uncached.templates) CHECK(Dump(*after.templates.at(group)) == Dump(*node));

  // A template that does not decode is refused every time and never kept.
  grpcplugin::BestOptionsRequest bad;
  (*bad.mutable_nodebytesmap())["broken"] = "\xff\xff\xff";
  for (int call = 0; call < 2; ++call) {
    CHECK_STATUS(DecodeBestOptions(OverTheWire(bad), {.templates = &cache}), absl::StatusCode::kInvalidArgument,
                 "nodeBytesMap[\"broken\"]: malformed Node protobuf");
  }
  CHECK(cache.size() == 4);
}

TEST_CASE("PodBytesCache keeps two generations: what is still sent stays, what is not goes", "[kube_proto]") {
  // Names of one length: every key the same size, two of them fill a generation.
  const std::string a = NamedPod("pod-a").SerializeAsString(), b = NamedPod("pod-b").SerializeAsString(),
                    c = NamedPod("pod-c").SerializeAsString(), d = NamedPod("pod-d").SerializeAsString();
  PodBytesCache cache(4 * a.size());
  auto pod = [](const std::string& bytes) { return std::make_shared<const kube::Pod>(PodFromBytes(bytes).value()); };
  cache.Insert(a, pod(a));
  cache.Insert(b, pod(b));
  cache.Insert(c, pod(c));  // the generation of a and b is full: it becomes the previous one
  CHECK(cache.size() == 3);
  REQUIRE(cache.Find(a) != nullptr);  // still sent: carried into the current generation with c
  cache.Insert(d, pod(d));            // c and a become the previous generation; b goes
  CHECK(cache.Find(b) == nullptr);
  CHECK(cache.Find(a) != nullptr);
  CHECK(cache.Find(c) != nullptr);
  CHECK(cache.Find(d) != nullptr);
  CHECK(cache.size() <= 4);
  // A pod larger than a generation is not kept.
  PodBytesCache small(a.size());
  small.Insert(a, pod(a));
  CHECK(small.Find(a) == nullptr);
}

// ---------------------------------------------------------------------------------------------------------
// Bad input: InvalidArgument with a message, never a crash.

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST_CASE("Bytes that are not a protobuf message are InvalidArgument", "[kube_proto]") {
  struct Row {
    const char* name;
    std::string bytes;
  };
  const std::string overlong_varint = "\x08" + std::string(10, '\xff') + "\x01";
  // Unknown groups (field 15) nested past protobuf's recursion limit of 100.
  const std::string deep_groups = std::string(150, '\x7b') + std::string(150, '\x7c');
  const Row rows[] = {
      {"field number 0", Bytes({0x00})},
      {"wire type 6 (does not exist)", Bytes({0x0e})},
      {"a varint longer than 10 bytes", overlong_varint},
      {"a length running past the end", Bytes({0x0a, 0x05, 'a', 'b'})},
      {"a length of 2^32-1", Bytes({0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})},
      {"a group never closed", Bytes({0x7b})},
      {"a group end without a start", Bytes({0x7c})},
      {"groups nested 150 deep", deep_groups},
      {"garbage inside metadata", Bytes({0x0a, 0x02, 0xff, 0xff})},
      {"text", "apiVersion: v1\nkind: Pod\n"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      CHECK_STATUS(PodFromBytes(row.bytes), absl::StatusCode::kInvalidArgument, "malformed Pod protobuf");
      CHECK_STATUS(NodeFromBytes(row.bytes), absl::StatusCode::kInvalidArgument, "malformed Node protobuf");
    }
  }
}

TEST_CASE("Protobuf's leniencies are kept, as Go's decoder has them too", "[kube_proto]") {
  SECTION("no bytes is an empty object") {
    REQUIRE_OK(PodFromBytes(""));
    CHECK(RequireOk(NodeFromBytes("")).metadata.name.empty());
  }
  SECTION("a repeated singular field: the last one wins") {
    const std::string bytes = NamedPod("first").SerializeAsString() + NamedPod("second").SerializeAsString();
    CHECK(RequireOk(PodFromBytes(bytes)).metadata.name == "second");
  }
}

// Byte offsets where a top-level field of a message ends: cutting there leaves a shorter but valid
// message; cutting anywhere else leaves a field unfinished.
std::set<size_t> TopLevelBoundaries(const std::string& bytes) {
  std::set<size_t> ends{0};
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (const uint32_t tag = in.ReadTag()) {
    REQUIRE(WireFormatLite::SkipField(&in, tag));
    ends.insert(static_cast<size_t>(in.CurrentPosition()));
  }
  return ends;
}

TEST_CASE("Every truncation of a fixture is InvalidArgument unless it ends between top-level fields",
          "[kube_proto][fixtures]") {
  if (!HaveFixtures()) return;
  for (const Fixture& fixture : {Fixture{"HEAD", "core.v1.Pod", true}, Fixture{"HEAD", "core.v1.Node", false}}) {
    SECTION(fixture.Name()) {
      const std::string bytes = ReadFile(fixture.Raw());
      const std::set<size_t> boundaries = TopLevelBoundaries(bytes);
      CHECK(boundaries.size() == 4);  // 0, after metadata, after spec, after status
      // One CHECK for the whole sweep: thousands of passing assertions would bury a failure.
      std::vector<size_t> wrong;
      for (size_t length = 0; length <= bytes.size(); ++length) {
        const absl::string_view prefix(bytes.data(), length);
        const absl::Status status =
            fixture.is_pod ? PodFromBytes(prefix).status() : NodeFromBytes(prefix).status();
        const bool expect_ok = boundaries.contains(length);
        if (status.ok() != expect_ok) wrong.push_back(length);
        if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument) wrong.push_back(length);
      }
      INFO("prefix lengths decoded wrongly (first few): " << ::Catch::Detail::stringify(
               std::vector<size_t>(wrong.begin(), wrong.begin() + std::min<size_t>(wrong.size(), 10))));
      CHECK(wrong.empty());
    }
  }
}

TEST_CASE("A quantity that does not parse is InvalidArgument naming its field", "[kube_proto]") {
  using Quantity = ::k8s::io::apimachinery::pkg::api::resource::Quantity;
  auto set = [](google::protobuf::Map<std::string, Quantity>* list, const char* text) {
    (*list)["nvidia.com/gpu"].set_string(text);
  };
  struct PodRow {
    const char* name;
    std::function<void(corev1::Pod*)> mutate;
    const char* path;
  };
  const PodRow pod_rows[] = {
      {"container request",
       [&](corev1::Pod* p) {
         set(p->mutable_spec()->add_containers()->mutable_resources()->mutable_requests(), "two");
       },
       R"(spec.containers[0].resources.requests["nvidia.com/gpu"]: not a quantity: "two")"},
      {"second container limit",
       [&](corev1::Pod* p) {
         p->mutable_spec()->add_containers();
         set(p->mutable_spec()->add_containers()->mutable_resources()->mutable_limits(), "1.5.0");
       },
       R"(spec.containers[1].resources.limits["nvidia.com/gpu"]: not a quantity)"},
      {"init container request",
       [&](corev1::Pod* p) {
         set(p->mutable_spec()->add_initcontainers()->mutable_resources()->mutable_requests(), "8 GPUs");
       },
       R"(spec.initContainers[0].resources.requests["nvidia.com/gpu"]: not a quantity)"},
      {"overhead", [&](corev1::Pod* p) { set(p->mutable_spec()->mutable_overhead(), "lots"); },
       R"(spec.overhead["nvidia.com/gpu"]: not a quantity)"},
      {"pod-level limit, too large for int64 milli-units",
       [&](corev1::Pod* p) { set(p->mutable_spec()->mutable_resources()->mutable_limits(), "1E"); },
       R"(spec.resources.limits["nvidia.com/gpu"]: )"},
      {"present but empty (Go's ParseQuantity refuses \"\")",
       [&](corev1::Pod* p) { set(p->mutable_spec()->mutable_overhead(), ""); },
       R"(spec.overhead["nvidia.com/gpu"]: not a quantity)"},
  };
  for (const PodRow& row : pod_rows) {
    SECTION(row.name) {
      corev1::Pod pod;
      row.mutate(&pod);
      CHECK_STATUS(PodFromProto(pod), absl::StatusCode::kInvalidArgument, row.path);
      CHECK_STATUS(PodFromBytes(pod.SerializeAsString()), absl::StatusCode::kInvalidArgument, row.path);
    }
  }

  SECTION("node allocatable") {
    corev1::Node node;
    set(node.mutable_status()->mutable_allocatable(), "eight");
    CHECK_STATUS(NodeFromBytes(node.SerializeAsString()), absl::StatusCode::kInvalidArgument,
                 R"(status.allocatable["nvidia.com/gpu"]: not a quantity: "eight")");
  }
  SECTION("a Quantity without its string is Go's zero Quantity") {
    corev1::Node node;
    (*node.mutable_status()->mutable_capacity())["nvidia.com/gpu"];
    CHECK(RequireOk(NodeFromProto(node)).status.capacity == kube::ResourceList{{"nvidia.com/gpu", 0}});
  }
}

TEST_CASE("DecodeBestOptions says where in the request an object was bad", "[kube_proto]") {
  corev1::Pod bad_pod;
  (*bad_pod.mutable_spec()->add_containers()->mutable_resources()->mutable_requests())["cpu"].set_string("x");
  corev1::Node bad_node;
  (*bad_node.mutable_status()->mutable_capacity())["cpu"].set_string("x");

  struct Row {
    const char* name;
    std::function<void(grpcplugin::BestOptionsRequest*)> mutate;
    const char* message;
  };
  const Row rows[] = {
      {"garbage in nodeBytesMap",
       [](grpcplugin::BestOptionsRequest* r) { (*r->mutable_nodebytesmap())["gpu-a"] = "\xff\xff"; },
       R"(nodeBytesMap["gpu-a"]: malformed Node protobuf)"},
      {"a bad quantity in a nodeMap node",
       [&](grpcplugin::BestOptionsRequest* r) { (*r->mutable_nodemap())["gpu-a"] = bad_node; },
       R"(nodeMap["gpu-a"]: status.capacity["cpu"]: not a quantity)"},
      {"garbage in the second podBytes of the second option",
       [](grpcplugin::BestOptionsRequest* r) {
         r->add_options();
         grpcplugin::Option* option = r->add_options();
         option->add_podbytes(NamedPod("ok").SerializeAsString());
         option->add_podbytes("\x0a\x05");
       },
       "options[1].podBytes[1]: malformed Pod protobuf"},
      {"a bad quantity in an embedded pod",
       [&](grpcplugin::BestOptionsRequest* r) { *r->add_options()->add_pod() = bad_pod; },
       R"(options[0].pod[0]: spec.containers[0].resources.requests["cpu"]: not a quantity: "x")"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      grpcplugin::BestOptionsRequest request;
      row.mutate(&request);
      CHECK_STATUS(DecodeBestOptions(OverTheWire(request)), absl::StatusCode::kInvalidArgument, row.message);
    }
  }
}

}  // namespace
}  // namespace topofit::codec
