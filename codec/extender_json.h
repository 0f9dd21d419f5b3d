#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kube/objects.h"

namespace topofit::codec {

// kube-scheduler's extender v1 wire types (k8s.io/kube-scheduler/extender/v1). The Go structs have no
// json tags, so keys are the capitalized field names; Go decodes them case-insensitively, and so do we.

// A node as sent in ExtenderArgs.Nodes.items: decoded, and kept as sent so that a filter reply with
// `Nodes` (nodeCacheCapable: false) returns exactly the objects kube-scheduler gave.
struct NodeArg {
  kube::Node node;
  nlohmann::json raw;
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
  std::optional<std::vector<const nlohmann::json*>> nodes;  // the passing nodes' raw objects
  std::optional<std::vector<std::string>> node_names;
  std::map<std::string, std::string> failed_nodes;
  std::map<std::string, std::string> failed_and_unresolvable_nodes;
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

absl::StatusOr<ExtenderArgs> ParseExtenderArgs(absl::string_view body);
absl::StatusOr<ExtenderBindingArgs> ParseBindingArgs(absl::string_view body);
absl::StatusOr<ExtenderPreemptionArgs> ParsePreemptionArgs(absl::string_view body);

std::string SerializeFilterResult(const ExtenderFilterResult& result);
// A bare JSON array of {"Host", "Score"}.
std::string SerializeHostPriorityList(const std::vector<HostPriority>& priorities);
// ExtenderBindingResult: {"Error": ""}.
std::string SerializeBindingResult(absl::string_view error);
// ExtenderPreemptionResult: {"NodeNameToMetaVictims": {node: {"Pods": [{"UID"}], "NumPDBViolations"}}}.
std::string SerializePreemptionResult(const std::map<std::string, MetaVictims>& victims);

}  // namespace topofit::codec
