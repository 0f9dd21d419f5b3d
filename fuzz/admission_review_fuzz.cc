// AdmissionReview requests (codec/admission_json.h) as the API server would send them to `topofit webhook`,
// through Admit against a p4d and a g5 group: whatever the pod, a patch the webhook answers with must
// apply to the object it was made for (RFC 6902, nlohmann's json::patch), else the API server would refuse
// the pod's creation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "codec/admission_json.h"
#include "codec/node_topology.h"
#include "kube/node_templates.h"
#include "webhook/admission.h"

namespace {

topofit::kube::Node Template(const std::string& instance_type) {
  topofit::kube::Node node;
  node.metadata.name = "template-node-for-" + instance_type;
  node.metadata.labels["node.kubernetes.io/instance-type"] = instance_type;
  node.status.allocatable["nvidia.com/gpu"] = 8000;
  return node;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topofit::kube::NodeTemplates templates =
      topofit::kube::SharedTemplates({{"p4d", Template("p4d.24xlarge")}, {"g5", Template("g5.48xlarge")}});
  static topofit::codec::TopologyResolver topologies;
  const absl::StatusOr<topofit::codec::AdmissionRequest> request =
      topofit::codec::ParseAdmissionReview(std::string(reinterpret_cast<const char*>(data), size));
  if (!request.ok()) return 0;
  const topofit::webhook::Admission admission = topofit::webhook::Admit(*request, templates, topologies);
  (void)topofit::codec::AdmissionReviewToJson(admission.response);
  if (admission.response.patch) {
    try {
      (void)request->object.patch(*admission.response.patch);
    } catch (const nlohmann::json::exception&) {
      std::abort();  // a patch that does not apply: the pod's creation would fail
    }
  }
  return 0;
}
