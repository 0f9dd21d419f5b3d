#pragma once

// The extender's view of the Kubernetes API (scheduler::KubeClient) over the REST client.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kube/objects.h"
#include "kubeclient/provisioning.h"
#include "kubeclient/rest_client.h"
#include "scheduler/kube_client.h"

namespace topofit::kubeclient {

class KubeApi final : public scheduler::KubeClient {
 public:
  // `rest` must outlive this object; later API clients (watches, leases) share it and its rate limit.
  explicit KubeApi(RestClient& rest) : rest_(rest) {}

  // GET /api/v1/namespaces/{ns}/pods/{name}.
  absl::StatusOr<kube::Pod> GetPod(const std::string& namespace_name, const std::string& name) override;
  // The same, as the API server's JSON (what the ProvisioningRequest builders read).
  absl::StatusOr<nlohmann::json> GetPodObject(const std::string& namespace_name, const std::string& name);
  // PATCH the pod with a JSON merge patch touching only metadata.annotations[key].
  absl::Status AnnotatePod(const std::string& namespace_name, const std::string& name, const std::string& key,
                           const std::string& value);
  // The same for the given annotations (MergePodAnnotations without the resourceVersion).
  absl::Status AnnotatePod(const std::string& namespace_name, const std::string& name,
                           const kube::StringMap& annotations) override;
  absl::Status RemovePodAnnotation(const std::string& namespace_name, const std::string& name,
                                   const std::string& key) override;
  // The same for several annotations in one patch; returns the patched pod's resourceVersion.
  absl::StatusOr<std::string> MergePodAnnotations(const std::string& namespace_name, const std::string& name,
                                                  const kube::StringMap& annotations);
  // POST the Binding kube-scheduler's DefaultBinder sends: metadata {namespace, name, uid}, target
  // {kind: Node, name}, and metadata.annotations when there are any. A non-empty uid is a precondition the
  // API server checks (409 when it differs).
  absl::Status BindPod(const std::string& namespace_name, const std::string& name, const std::string& uid,
                       const std::string& node, const kube::StringMap& annotations) override;
  // GET the pod's PodGroup (scheduling.k8s.io/v1alpha2) or Workload (v1alpha1) and read its gang count.
  absl::StatusOr<std::optional<int>> WorkloadGangMinCount(const kube::Pod& pod) override;

  // What the restart collector reads about a restarted container (restart_collector.h):
  // the pod's Warning events (core/v1, by involvedObject.uid), "Reason: message", at most `limit`, as listed;
  absl::StatusOr<std::vector<std::string>> PodWarnings(const std::string& namespace_name, const std::string& uid,
                                                       int limit);
  // the node it ran on: its annotations (the agent's topofit.io/unhealthy-gpus) and its conditions;
  struct NodeSummary {
    kube::StringMap annotations;
    // "Ready=True", then every other condition that holds ("MemoryPressure=True"), a condition not as it
    // should be with its reason: "Ready=False (KubeletNotReady), DiskPressure=True (KubeletHasDiskPressure)".
    std::string conditions;
  };
  absl::StatusOr<NodeSummary> GetNodeSummary(const std::string& node);
  // its Warning events (core/v1 in `default`, where the kubelet and node-problem-detector write them),
  // "Reason: message", at most `limit`, as listed;
  absl::StatusOr<std::vector<std::string>> NodeWarnings(const std::string& node, int limit);
  // the last `lines` lines, at most `bytes`, of the log of the container's previous instance
  // (GET .../pods/{name}/log?previous=true&tailLines=N&limitBytes=B).
  absl::StatusOr<std::string> PreviousLogTail(const std::string& namespace_name, const std::string& name,
                                              const std::string& container, int lines, int64_t bytes);

  // ProvisioningRequests (kubeclient/provisioning.h builds the objects). Creating is idempotent: 409
  // AlreadyExists counts as done (the name is derived from the pod, so the object is ours). Deleting is
  // too: 404 counts as done.
  // POST /api/v1/namespaces/{ns}/podtemplates.
  absl::Status CreatePodTemplate(const nlohmann::json& pod_template);
  // POST /apis/autoscaling.x-k8s.io/v1/namespaces/{ns}/provisioningrequests.
  absl::Status CreateProvisioningRequest(const nlohmann::json& provisioning_request);
  absl::Status DeletePodTemplate(const std::string& namespace_name, const std::string& name);
  absl::Status DeleteProvisioningRequest(const std::string& namespace_name, const std::string& name);
  // GET the request and read its conditions.
  absl::StatusOr<ProvisioningState> GetProvisioningState(const std::string& namespace_name,
                                                         const std::string& name);

  // A ConfigMap's data (the ledger's node group templates: node_groups_config_map.h); NotFound when the
  // ConfigMap does not exist, InvalidArgument when its data is not strings.
  absl::StatusOr<kube::StringMap> GetConfigMapData(const std::string& namespace_name, const std::string& name);
  // Sets data[key] = value with a JSON merge patch (other keys stay), creating the ConfigMap when it
  // does not exist.
  absl::Status SetConfigMapEntry(const std::string& namespace_name, const std::string& name, const std::string& key,
                                 const std::string& value);

 private:
  RestClient& rest_;
};

// "/api/v1/namespaces/{ns}/pods/{name}", each segment escaped.
std::string PodPath(absl::string_view namespace_name, absl::string_view name);
// "/api/v1/namespaces/{ns}/podtemplates" and ".../provisioningrequests" of autoscaling.x-k8s.io/v1.
std::string PodTemplatesPath(absl::string_view namespace_name);
std::string ProvisioningRequestsPath(absl::string_view namespace_name);
// "/api/v1/namespaces/{ns}/configmaps".
std::string ConfigMapsPath(absl::string_view namespace_name);

}  // namespace topofit::kubeclient
