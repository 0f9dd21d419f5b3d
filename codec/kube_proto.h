#pragma once

// The expander's wire layer: core/v1 Pods and Nodes in protobuf (proto/k8s_core_v1.proto), and
// cluster-autoscaler's BestOptionsRequest in each of its wire generations, reduced to kube/objects.h.
// The same objects as codec/kube_json.h produces from JSON, field for field.
//
// Unknown fields (everything the model does not read, and fields newer releases add) are skipped.
// Errors are InvalidArgument: "malformed Pod protobuf" for bytes that do not parse, and for a quantity
// that does not, its path and the parser's message, as the JSON decoder words it:
//   spec.containers[1].resources.requests["nvidia.com/gpu"]: not a quantity: ...
// Request-level errors are prefixed with where in the request the object was:
//   options[0].podBytes[2]: malformed Pod protobuf
// Never throws, never aborts on input.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codec/best_options_wire.h"
#include "codec/decoded_bytes_cache.h"
#include "kube/node_templates.h"
#include "kube/objects.h"
#include "kube/shared_pods.h"
#include "proto/expander.pb.h"
#include "proto/k8s_core_v1.pb.h"

namespace topofit::codec {

absl::StatusOr<kube::Pod> PodFromProto(const ::k8s::io::api::core::v1::Pod& pod);
absl::StatusOr<kube::Node> NodeFromProto(const ::k8s::io::api::core::v1::Node& node);

// The bare protobuf encoding of a core/v1 Pod / Node, as CA puts it into podBytes / nodeBytesMap (no
// "k8s\0" magic, no runtime.Unknown envelope).
absl::StatusOr<kube::Pod> PodFromBytes(absl::string_view bytes);
absl::StatusOr<kube::Node> NodeFromBytes(absl::string_view bytes);

// One scale-up option: grow node group `node_group_id` by `node_count` nodes for `pods`.
struct ExpanderOption {
  std::string node_group_id;
  int node_count = 0;
  // Identical podBytes entries (CA repeats the pending pods in every option) decode once, to one shared
  // object.
  kube::SharedPods pods;
};

struct DecodedRequest {
  std::vector<ExpanderOption> options;  // in the request's order
  // Template node of every node group, keyed by node group id, without the identity cluster-autoscaler
  // makes anew on every loop (name, uid, resourceVersion, kubernetes.io/hostname: template_key.h).
  kube::NodeTemplates templates;
};

// Where DecodeBestOptions finds what earlier calls decoded (null: decode everything).
struct DecodeCaches {
  PodBytesCache* pods = nullptr;           // podBytes and pod entries
  NodeBytesCache* templates = nullptr;     // nodeBytesMap and nodeMap values, by their TemplateKeyOf
};

// Reads every wire generation: a template node from nodeBytesMap (3) when that key is there, else from
// nodeMap (2); an option's pods from podBytes (5) when it has any, else from pod (4). CA 1.34.2-1.34.5
// send both, and upstream tells readers to prefer the bytes. With caches, pods and templates an earlier
// call decoded are taken from them, and those decoded now are put in them. Errors say where in the
// request the bad object was: options[0].podBytes[2]: malformed Pod protobuf.
absl::StatusOr<DecodedRequest> DecodeBestOptions(const BestOptionsWire& request, DecodeCaches caches = {});
// The same from the generated message (serialized and read again: for tests and tools, not the service).
absl::StatusOr<DecodedRequest> DecodeBestOptions(const ::grpcplugin::BestOptionsRequest& request,
                                                 DecodeCaches caches = {});

}  // namespace topofit::codec
