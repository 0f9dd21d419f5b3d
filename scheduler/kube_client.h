#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kube/objects.h"

namespace topofit::scheduler {

// What the extender asks of the Kubernetes API. One real implementation talks REST to the API server;
// tests use an in-process fake. Errors carry the API server's message.
class KubeClient {
 public:
  virtual ~KubeClient() = default;
  virtual absl::StatusOr<kube::Pod> GetPod(const std::string& namespace_name, const std::string& name) = 0;
  // Sets annotations on a pod, in one JSON merge patch.
  virtual absl::Status AnnotatePod(const std::string& namespace_name, const std::string& name,
                                   const kube::StringMap& annotations) = 0;
  // Removes one annotation from a pod (a JSON merge patch setting it to null); no error when it is absent.
  virtual absl::Status RemovePodAnnotation(const std::string& namespace_name, const std::string& name,
                                           const std::string& key) = 0;
  // Creates the pod's Binding to `node` (POST .../pods/{name}/binding); `uid` guards against a pod that
  // was deleted and recreated under the same name. The API server's binding storage copies the Binding's
  // `annotations` onto the pod in the same write as spec.nodeName: one call instead of a patch and a
  // Binding, and no annotation left on a pod whose binding failed.
  virtual absl::Status BindPod(const std::string& namespace_name, const std::string& name, const std::string& uid,
                               const std::string& node, const kube::StringMap& annotations) = 0;
  // How many pods of a Workload API gang place together: gang.minCount of the PodGroup or Workload the pod
  // names (codec/workload_api_json.h); nullopt when its policy is basic. NotFound when the object (or the
  // Workload's group) does not exist.
  virtual absl::StatusOr<std::optional<int>> WorkloadGangMinCount(const kube::Pod& pod) = 0;
};

}  // namespace topofit::scheduler
