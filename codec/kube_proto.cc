#include "codec/kube_proto.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "codec/decode_path.h"
#include "codec/template_key.h"
#include "kube/quantity.h"

namespace topofit::codec {
namespace {

namespace corev1 = ::k8s::io::api::core::v1;
namespace metav1 = ::k8s::io::apimachinery::pkg::apis::meta::v1;
namespace resource = ::k8s::io::apimachinery::pkg::api::resource;

template <typename T>
using Repeated = google::protobuf::RepeatedPtrField<T>;

absl::Status At(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

// protobuf maps iterate in no fixed order; sorting makes the first error reported deterministic.
template <typename Map>
std::vector<typename Map::const_pointer> Sorted(const Map& map) {
  std::vector<typename Map::const_pointer> entries;
  entries.reserve(map.size());
  for (const auto& entry : map) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(), [](auto a, auto b) { return a->first < b->first; });
  return entries;
}

kube::StringMap ReadStringMap(const google::protobuf::Map<std::string, std::string>& in) {
  kube::StringMap out;
  for (const auto& [key, value] : in) out.emplace(key, value);
  return out;
}

// Where an object being read is, made only for an error message: paths built for every pod and node
// read cost more than the quantities they name.
using LazyPath = absl::FunctionRef<std::string()>;

// A Quantity without its string is Go's zero Quantity; a present string must parse, as
// resource.ParseQuantity demands of the protobuf form.
absl::Status ReadResourceList(const google::protobuf::Map<std::string, resource::Quantity>& in, LazyPath path,
                              kube::ResourceList* out) {
  bool bad = false;
  for (const auto& [name, quantity] : in) {
    if (!quantity.has_string()) {
      (*out)[name] = 0;
      continue;
    }
    absl::StatusOr<int64_t> milli = kube::ParseQuantityMilli(quantity.string());
    if (!milli.ok()) {
      bad = true;
      break;
    }
    (*out)[name] = *milli;
  }
  if (!bad) return absl::OkStatus();
  // Only now in key order, so that the error reported is the first bad key's whatever the map's order.
  for (const auto* entry : Sorted(in)) {
    if (!entry->second.has_string()) continue;
    absl::StatusOr<int64_t> milli = kube::ParseQuantityMilli(entry->second.string());
    // The parser's message says what is wrong; the path says where. Always InvalidArgument, as in JSON:
    // a quantity too large is bad input too.
    if (!milli.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(MapKey(path(), entry->first), ": ", milli.status().message()));
    }
  }
  return absl::InternalError("a quantity failed to parse once and parsed the second time");
}

absl::Status ReadResourceRequirements(const corev1::ResourceRequirements& in, LazyPath path,
                                      kube::ResourceRequirements* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(in.requests(), [&] { return Field(path(), "requests"); }, &out->requests));
  return ReadResourceList(in.limits(), [&] { return Field(path(), "limits"); }, &out->limits);
}

kube::ObjectMeta ReadObjectMeta(const metav1::ObjectMeta& in) {
  kube::ObjectMeta out;
  out.name = in.name();
  out.namespace_name = in.namespace_();
  out.uid = in.uid();
  out.resource_version = in.resourceversion();
  out.generate_name = in.generatename();
  // Whole seconds, as the JSON form (RFC 3339 without fractions) carries; unset reads as 0.
  out.creation_timestamp_seconds = in.creationtimestamp().seconds();
  out.has_deletion_timestamp = in.has_deletiontimestamp();
  out.labels = ReadStringMap(in.labels());
  out.annotations = ReadStringMap(in.annotations());
  for (const metav1::OwnerReference& ref : in.ownerreferences()) {
    out.owner_references.push_back({.kind = ref.kind(), .name = ref.name(), .controller = ref.controller()});
  }
  return out;
}

absl::Status ReadContainers(const Repeated<corev1::Container>& in, absl::string_view path,
                            std::vector<kube::Container>* out) {
  out->reserve(in.size());
  for (int i = 0; i < in.size(); ++i) {
    kube::Container& container = out->emplace_back();
    container.name = in[i].name();
    TOPOFIT_RETURN_IF_ERROR(ReadResourceRequirements(
        in[i].resources(), [&] { return Field(Index(std::string(path), i), "resources"); }, &container.resources));
    container.restart_policy = kube::ParseContainerRestartPolicy(in[i].restartpolicy());
  }
  return absl::OkStatus();
}

std::vector<kube::NodeSelectorRequirement> ReadRequirements(
    const Repeated<corev1::NodeSelectorRequirement>& in) {
  std::vector<kube::NodeSelectorRequirement> out;
  out.reserve(in.size());
  for (const corev1::NodeSelectorRequirement& requirement : in) {
    out.push_back({.key = requirement.key(),
                   .op = kube::ParseNodeSelectorOperator(requirement.operator_()),
                   .values = {requirement.values().begin(), requirement.values().end()}});
  }
  return out;
}

kube::NodeSelectorTerm ReadTerm(const corev1::NodeSelectorTerm& in) {
  return {.match_expressions = ReadRequirements(in.matchexpressions()),
          .match_fields = ReadRequirements(in.matchfields())};
}

void ReadNodeAffinity(const corev1::NodeAffinity& in, kube::PodSpec* out) {
  // Present-but-empty must stay apart from absent: it matches no node (kube/objects.h).
  if (in.has_requiredduringschedulingignoredduringexecution()) {
    kube::NodeSelector& selector = out->required_node_affinity.emplace();
    for (const corev1::NodeSelectorTerm& term :
         in.requiredduringschedulingignoredduringexecution().nodeselectorterms()) {
      selector.terms.push_back(ReadTerm(term));
    }
  }
  for (const corev1::PreferredSchedulingTerm& term : in.preferredduringschedulingignoredduringexecution()) {
    out->preferred_node_affinity.push_back({.weight = term.weight(), .preference = ReadTerm(term.preference())});
  }
}

kube::Toleration ReadToleration(const corev1::Toleration& in) {
  return {.key = in.key(),
          .op = kube::ParseTolerationOperator(in.operator_()),
          .value = in.value(),
          .effect = kube::ParseTaintEffect(in.effect()),
          // Absent and 0 differ upstream: absent tolerates a NoExecute taint forever, 0 not at all.
          .toleration_seconds = in.has_tolerationseconds() ? std::optional<int64_t>(in.tolerationseconds())
                                                           : std::nullopt};
}

template <typename ConditionProto>
std::vector<kube::Condition> ReadConditions(const Repeated<ConditionProto>& in) {
  std::vector<kube::Condition> out;
  out.reserve(in.size());
  for (const ConditionProto& condition : in) {
    out.push_back({.type = condition.type(), .status = condition.status(), .reason = condition.reason()});
  }
  return out;
}

absl::Status ReadPodSpec(const corev1::PodSpec& in, kube::PodSpec* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadContainers(in.containers(), "spec.containers", &out->containers));
  TOPOFIT_RETURN_IF_ERROR(ReadContainers(in.initcontainers(), "spec.initContainers", &out->init_containers));
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(in.overhead(), [] { return std::string("spec.overhead"); }, &out->overhead));
  TOPOFIT_RETURN_IF_ERROR(ReadResourceRequirements(in.resources(), [] { return std::string("spec.resources"); }, &out->resources));
  out->node_selector = ReadStringMap(in.nodeselector());
  ReadNodeAffinity(in.affinity().nodeaffinity(), out);
  for (const corev1::Toleration& toleration : in.tolerations()) out->tolerations.push_back(ReadToleration(toleration));
  out->scheduler_name = in.schedulername();
  out->node_name = in.nodename();
  if (in.has_priority()) out->priority = in.priority();
  out->priority_class_name = in.priorityclassname();
  if (in.has_workloadref()) {
    out->workload_ref = kube::WorkloadReference{.name = in.workloadref().name(),
                                                .pod_group = in.workloadref().podgroup(),
                                                .pod_group_replica_key = in.workloadref().podgroupreplicakey()};
  }
  if (in.has_schedulinggroup()) {
    out->scheduling_group = kube::PodSchedulingGroup{.pod_group_name = in.schedulinggroup().podgroupname()};
  }
  for (const corev1::PodResourceClaim& claim : in.resourceclaims()) {
    kube::PodResourceClaim& read = out->resource_claims.emplace_back();
    read.name = claim.name();
    if (claim.has_resourceclaimname()) read.resource_claim_name = claim.resourceclaimname();
    if (claim.has_resourceclaimtemplatename()) read.resource_claim_template_name = claim.resourceclaimtemplatename();
  }
  return absl::OkStatus();
}

absl::Status ReadNodeStatus(const corev1::NodeStatus& in, kube::NodeStatus* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(in.capacity(), [] { return std::string("status.capacity"); }, &out->capacity));
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(in.allocatable(), [] { return std::string("status.allocatable"); }, &out->allocatable));
  out->conditions = ReadConditions(in.conditions());
  return absl::OkStatus();
}

// ParseFromArray takes an int size; anything larger is not a Pod CA could have sent (its limit is 128 MiB).
template <typename Message>
bool ParseBytes(absl::string_view bytes, Message* message) {
  return bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max()) &&
         message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace

absl::StatusOr<kube::Pod> PodFromProto(const corev1::Pod& pod) {
  kube::Pod out;
  out.metadata = ReadObjectMeta(pod.metadata());
  TOPOFIT_RETURN_IF_ERROR(ReadPodSpec(pod.spec(), &out.spec));
  out.status.phase = pod.status().phase();
  out.status.nominated_node_name = pod.status().nominatednodename();
  out.status.conditions = ReadConditions(pod.status().conditions());
  for (const corev1::PodResourceClaimStatus& claim : pod.status().resourceclaimstatuses()) {
    kube::PodResourceClaimStatus& read = out.status.resource_claim_statuses.emplace_back();
    read.name = claim.name();
    if (claim.has_resourceclaimname()) read.resource_claim_name = claim.resourceclaimname();
  }
  return out;
}

absl::StatusOr<kube::Node> NodeFromProto(const corev1::Node& node) {
  kube::Node out;
  out.metadata = ReadObjectMeta(node.metadata());
  out.spec.unschedulable = node.spec().unschedulable();
  for (const corev1::Taint& taint : node.spec().taints()) {
    out.spec.taints.push_back(
        {.key = taint.key(), .value = taint.value(), .effect = kube::ParseTaintEffect(taint.effect())});
  }
  out.spec.provider_id = node.spec().providerid();
  TOPOFIT_RETURN_IF_ERROR(ReadNodeStatus(node.status(), &out.status));
  return out;
}

absl::StatusOr<kube::Pod> PodFromBytes(absl::string_view bytes) {
  corev1::Pod pod;
  if (!ParseBytes(bytes, &pod)) return absl::InvalidArgumentError("malformed Pod protobuf");
  return PodFromProto(pod);
}

absl::StatusOr<kube::Node> NodeFromBytes(absl::string_view bytes) {
  corev1::Node node;
  if (!ParseBytes(bytes, &node)) return absl::InvalidArgumentError("malformed Node protobuf");
  return NodeFromProto(node);
}

absl::StatusOr<DecodedRequest> DecodeBestOptions(const BestOptionsWire& request, DecodeCaches caches) {
  DecodedRequest out;
  // Bytes first, per key: where a transitional CA sent both, they are the same node and upstream tells
  // readers to prefer the bytes. A Node message is a Node's bytes, so both are read alike.
  for (const auto* map : {&request.node_bytes_map, &request.node_map}) {
    const std::string field = map == &request.node_map ? "nodeMap" : "nodeBytesMap";
    for (const auto& [group, bytes] : *map) {
      if (out.templates.contains(group)) continue;
      // Known by their keys (template_key.h): CA names every template anew on every loop. The bytes as sent
      // are found again while nothing of the node changed; else what the decoder reads is.
      const std::optional<std::string> sent = caches.templates != nullptr ? SentKeyOf(bytes) : std::nullopt;
      std::shared_ptr<const kube::Node> known = sent ? caches.templates->Find(*sent) : nullptr;
      if (known == nullptr) {
        const std::optional<std::string> key = caches.templates != nullptr ? TemplateKeyOf(bytes) : std::nullopt;
        known = key ? caches.templates->Find(*key) : nullptr;
        if (known == nullptr) {
          absl::StatusOr<kube::Node> node = NodeFromBytes(bytes);
          if (!node.ok()) return At(MapKey(field, group), node.status());
          known = std::make_shared<const kube::Node>(WithoutIdentity(*std::move(node)));
          if (key) caches.templates->Insert(*key, known);
        }
        if (sent) caches.templates->Insert(*sent, known);
      }
      out.templates.emplace(std::string(group), std::move(known));
    }
  }

  // Pod bytes -> the pod they decoded to, for the entries repeated across options. Keys view the
  // request's bytes, which outlive this call.
  absl::flat_hash_map<absl::string_view, std::shared_ptr<const kube::Pod>> decoded_bytes;
  out.options.reserve(request.options.size());
  for (size_t i = 0; i < request.options.size(); ++i) {
    const OptionWire& option = request.options[i];
    ExpanderOption& decoded = out.options.emplace_back();
    decoded.node_group_id = std::string(option.node_group_id);
    decoded.node_count = option.node_count;
    // Per option, not per pod: an option carries its pods in one field or the other (or both, whole).
    const bool bytes_field = !option.pod_bytes.empty();
    const std::vector<absl::string_view>& pods = bytes_field ? option.pod_bytes : option.pods;
    decoded.pods.reserve(pods.size());
    for (size_t j = 0; j < pods.size(); ++j) {
      std::shared_ptr<const kube::Pod>& shared = decoded_bytes[pods[j]];
      if (shared == nullptr && caches.pods != nullptr) shared = caches.pods->Find(pods[j]);
      if (shared == nullptr) {
        // The first time these bytes are seen, so a bad pod is reported where it first appears.
        absl::StatusOr<kube::Pod> pod = PodFromBytes(pods[j]);
        if (!pod.ok()) {
          return At(Index(Field(Index("options", static_cast<int>(i)), bytes_field ? "podBytes" : "pod"), static_cast<int>(j)),
                    pod.status());
        }
        shared = std::make_shared<const kube::Pod>(*std::move(pod));
        if (caches.pods != nullptr) caches.pods->Insert(pods[j], shared);
      }
      decoded.pods.push_back(shared);
    }
  }
  return out;
}

absl::StatusOr<DecodedRequest> DecodeBestOptions(const ::grpcplugin::BestOptionsRequest& request,
                                                 DecodeCaches caches) {
  const std::string bytes = request.SerializeAsString();
  absl::StatusOr<BestOptionsWire> wire = ReadBestOptions(bytes);
  if (!wire.ok()) return wire.status();
  return DecodeBestOptions(*wire, caches);
}

#undef TOPOFIT_RETURN_IF_ERROR

}  // namespace topofit::codec
