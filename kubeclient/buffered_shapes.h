#pragma once

// What the extender reads of cluster-autoscaler's CapacityBuffers (docs/headroom.md, "The extender keeps
// buffered sets whole"): each active-capacity buffer's replicas and the pod template it refers to, joined into
// decision::WarmCapacity for prioritize. Fed by two watches (ListWatcher, the API server's JSON): the
// CapacityBuffers of every namespace and the PodTemplates. Any buffer counts, whoever wrote it — topofit's
// headroom controller or an operator. Thread-safe: the watches write, requests read.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/synchronization/mutex.h"
#include "decision/pod_demand.h"
#include "kubeclient/list_watcher.h"
#include "scheduler/warm_source.h"

namespace topofit::kubeclient {

class BufferedShapes : public scheduler::WarmSource {
 public:
  // For a ListWatcher of /apis/autoscaling.x-k8s.io/<version>/capacitybuffers.
  ListWatcher::Sink BufferSink();
  // For a ListWatcher of /api/v1/podtemplates.
  ListWatcher::Sink TemplateSink();

  // Each buffer whose template is known and asks for GPUs, at its replicas: status.replicas (what CA
  // worked out of replicas, percentage and limits) once CA has written it, else spec.replicas.
  std::shared_ptr<const decision::WarmCapacity> Warm() const override;

  using Key = std::pair<std::string, std::string>;  // namespace, name
  struct Buffer {
    std::string template_name;  // in the buffer's namespace
    int replicas = 0;
  };
  // The buffer's template and replicas; nullopt for a buffer that keeps no active capacity (another
  // provisioningStrategy, or one sized by a scalableRef that CA has not resolved into a template yet). False
  // when the object does not decode.
  static bool ReadBuffer(const nlohmann::json& object, std::optional<Buffer>& buffer);
  // What a pod of the template asks of GPUs; nullopt for a template asking none or asking unreadably.
  // False when the object does not decode.
  static bool ReadTemplate(const nlohmann::json& object, std::optional<decision::GpuDemand>& demand);

 private:
  // The sink of one collection into `store` (guarded by mu_), each object read by `read`.
  template <typename T>
  ListWatcher::Sink SinkInto(std::map<Key, T> BufferedShapes::*store, bool (*read)(const nlohmann::json&, std::optional<T>&));
  void Rebuild() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<Key, Buffer> buffers_ ABSL_GUARDED_BY(mu_);
  std::map<Key, decision::GpuDemand> templates_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const decision::WarmCapacity> warm_ ABSL_GUARDED_BY(mu_) = std::make_shared<decision::WarmCapacity>();
};

}  // namespace topofit::kubeclient
