#pragma once

// Which multi-node NVLink domain a node is in, from its labels. A domain spans nodes (a GB200 NVL72 rack:
// 18 trays of 4 GPUs on one NVLink fabric) and is published per node by a label whose value is the same
// on every node of the domain. Docs: docs/gangs.md, "NVLink domains".

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kube/objects.h"
#include "topology/ids.h"

namespace topofit::decision {

// AWS's label for the nodes of one UltraServer (the P6e-GB200 family's NVLink domain).
inline constexpr absl::string_view kAwsUltraserverLabel = "topology.k8s.aws/ultraserver-id";

// The node label keys that name a domain, most tightly connected first: where a node carries several, the
// first wins. Default: `nvidia.com/gpu.clique` (GPU Feature Discovery and NVIDIA's DRA driver,
// `<ClusterUUID>.<cliqueId>`: one NVLink partition, of which a rack may hold several), then
// `topology.k8s.aws/ultraserver-id` (the whole UltraServer).
class NvlinkDomainLabels {
 public:
  static NvlinkDomainLabels Default();
  // InvalidArgument for an empty list, an empty key or a key given twice.
  static absl::StatusOr<NvlinkDomainLabels> Create(std::vector<std::string> keys);

  const std::vector<std::string>& keys() const { return keys_; }
  bool Contains(absl::string_view key) const;

 private:
  explicit NvlinkDomainLabels(std::vector<std::string> keys) : keys_(std::move(keys)) {}
  std::vector<std::string> keys_;
};

// One domain: the label that named it and its value. Nodes are in the same domain when both are equal.
struct NvlinkDomain {
  std::string label_key;
  topology::DomainId id;  // the label's value
  friend auto operator<=>(const NvlinkDomain&, const NvlinkDomain&) = default;
};

// The domain named by the first of `labels` the node carries with a non-empty value; nullopt when none.
std::optional<NvlinkDomain> NvlinkDomainOf(const kube::StringMap& node_labels, const NvlinkDomainLabels& labels);

// How a node group forms domains, from its template node. The template's label value is that of the node
// it was copied from, not of the nodes a scale-up brings (each lands in a domain of its own), so only the
// label key is kept.
struct GroupDomainShape {
  std::string label_key;
  // kube::kNodesPerDomainAnnotation on the template; nullopt when it does not say.
  std::optional<int> nodes_per_domain;
};

// nullopt for a group whose template carries none of `labels` (its nodes form no multi-node domains).
// InvalidArgument for a malformed kube::kNodesPerDomainAnnotation, or for that annotation on a template
// without a domain label (nothing would tell its nodes' domains apart).
absl::StatusOr<std::optional<GroupDomainShape>> GroupDomainShapeOf(const kube::Node& template_node,
                                                                   const NvlinkDomainLabels& labels);

}  // namespace topofit::decision
