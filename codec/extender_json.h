#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/container/btree_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codec/bounded_json.h"
#include "kube/objects.h"

namespace topofit::codec {

// kube-scheduler's extender v1 wire types (k8s.io/kube-scheduler/extender/v1). The Go structs have no
// json tags, so keys are the capitalized field names; Go decodes them case-insensitively, and so do we.


// A node as sent in ExtenderArgs.Nodes.items: its name and resourceVersion, its bytes as sent (so that a
// filter reply with `Nodes`, nodeCacheCapable: false, returns exactly the objects kube-scheduler gave), and
// the decoded object unless the caller already holds the node at this resourceVersion (see
// ParseExtenderArgs).
struct NodeArg {
  std::string name;              // metadata.name, never empty
  std::string resource_version;  // metadata.resourceVersion, may be empty
  std::optional<kube::Node> node;
  absl::string_view raw;  // a view into the body given to ParseExtenderArgs
};

// ExtenderArgs: the filter and prioritize request. Exactly one of `nodes` (nodeCacheCapable: false) and
// `node_names` (true) is normally set.
struct ExtenderArgs {
  kube::Pod pod;
  std::optional<std::vector<NodeArg>> nodes;
  std::optional<std::vector<std::string>> node_names;
};

// ExtenderFilterResult. Answer in the form asked: `nodes` for a Nodes request, `node_names` for NodeNames.
struct ExtenderFilterResult {
  std::optional<std::vector<absl::string_view>> nodes;  // the passing nodes' bytes (NodeArg::raw)
  std::optional<std::vector<std::string>> node_names;
  absl::btree_map<std::string, std::string> failed_nodes;
  absl::btree_map<std::string, std::string> failed_and_unresolvable_nodes;
  std::string error;
};

struct HostPriority {
  std::string host;
  int64_t score = 0;
};

struct ExtenderBindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};

// MetaVictims: the victims on one node, by uid.
struct MetaVictims {
  std::vector<std::string> pod_uids;
  int64_t num_pdb_violations = 0;
};

// ExtenderPreemptionArgs. kube-scheduler sends NodeNameToVictims (full pods) when the extender is not
// nodeCacheCapable and NodeNameToMetaVictims (uids) when it is; both read into `victims`.
struct ExtenderPreemptionArgs {
  kube::Pod pod;
  std::map<std::string, MetaVictims> victims;
};

// True when the caller holds node `name` at this non-empty resourceVersion: decoding it again would tell
// it nothing (the API server gives an object a new resourceVersion whenever it changes).
using NodeIsCurrent = std::function<bool(absl::string_view name, absl::string_view resource_version)>;

// Decodes ExtenderArgs without building a document: the whole body is checked to be JSON (malformed
// anywhere is an error, as a DOM parse would find), the Pod and each node that is not current are decoded
// with PodFromJson / NodeFromJson, and the other nodes' bytes are only located. The result's NodeArg::raw
// views point into `body`, which must outlive the result; a body with SIMDJSON_PADDING (64) bytes of spare
// capacity is parsed in place, others are copied first. Errors name their path (`Nodes.items[3].status
// .allocatable["nvidia.com/gpu"]: ...`), reported in this order: malformed JSON, Pod, Nodes, NodeNames.
// Keys of ExtenderArgs and of the NodeList match case-insensitively, as Go's decoder does; a key given
// twice reads as its last occurrence.
absl::StatusOr<ExtenderArgs> ParseExtenderArgs(const std::string& body, const NodeIsCurrent& is_current = nullptr);
// Decodes one node of a request that ParseExtenderArgs left undecoded (the state changed since it looked);
// errors as ParseExtenderArgs would give them for Nodes.items[index].
absl::StatusOr<kube::Node> DecodeNodeArg(const NodeArg& arg, size_t index);
absl::StatusOr<ExtenderBindingArgs> ParseBindingArgs(absl::string_view body);
absl::StatusOr<ExtenderPreemptionArgs> ParsePreemptionArgs(absl::string_view body);

// ExtenderFilterResult as written, without copying the passing nodes: `text` is every byte the encoder makes,
// and `nodes` go at offset `nodes_at` of it. They view the request (ExtenderFilterResult::nodes) and static
// storage: a run of passing nodes that lay side by side in the request, one comma apart, is one view with
// its commas, and "," separates runs — a few hundred views for thousands of nodes. Joined, the bytes of
// SerializeFilterResult.
struct EncodedFilterResult {
  std::string text;
  size_t nodes_at = 0;
  std::vector<absl::string_view> nodes;
};
EncodedFilterResult EncodeFilterResult(const ExtenderFilterResult& result);
std::string SerializeFilterResult(const ExtenderFilterResult& result);
// A bare JSON array of {"Host", "Score"}.
std::string SerializeHostPriorityList(const std::vector<HostPriority>& priorities);
// ExtenderBindingResult: {"Error": ""}.
std::string SerializeBindingResult(absl::string_view error);
// ExtenderPreemptionResult: {"NodeNameToMetaVictims": {node: {"Pods": [{"UID"}], "NumPDBViolations"}}}.
std::string SerializePreemptionResult(const std::map<std::string, MetaVictims>& victims);

}  // namespace topofit::codec
