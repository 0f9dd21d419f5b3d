#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "codec/workload_api_json.h"
#include "scheduler/kube_client.h"

namespace topofit::scheduler::testing {

// An in-process KubeClient: records every call, serves pods put into it, and fails calls on request.
class FakeKubeClient final : public KubeClient {
 public:
  struct Call {
    std::string verb;  // "get", "annotate", "remove-annotation", "bind", "bind-annotation"
    std::string pod;   // namespace/name
    std::string detail;  // "key=value" for (bind-)annotation, the key for remove-annotation, the node for bind
  };

  void PutPod(const kube::Pod& pod) {
    std::lock_guard<std::mutex> lock(mu_);
    pods_[pod.metadata.namespace_name + "/" + pod.metadata.name] = pod;
  }
  void DeletePod(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    pods_.erase(ns + "/" + name);
  }
  void FailBindsWith(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    bind_error_ = std::move(status);
  }
  std::vector<Call> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

  absl::StatusOr<kube::Pod> GetPod(const std::string& ns, const std::string& name) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back({"get", ns + "/" + name, ""});
    auto it = pods_.find(ns + "/" + name);
    if (it == pods_.end()) return absl::NotFoundError("pods \"" + name + "\" not found");
    return it->second;
  }
  // One call per annotation, in key order.
  absl::Status AnnotatePod(const std::string& ns, const std::string& name,
                           const kube::StringMap& annotations) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, value] : annotations) calls_.push_back({"annotate", ns + "/" + name, key + "=" + value});
    if (pods_.count(ns + "/" + name) == 0) return absl::NotFoundError("pods \"" + name + "\" not found");
    return annotate_error_;
  }
  absl::Status RemovePodAnnotation(const std::string& ns, const std::string& name, const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back({"remove-annotation", ns + "/" + name, key});
    if (pods_.count(ns + "/" + name) == 0) return absl::NotFoundError("pods \"" + name + "\" not found");
    return annotate_error_;
  }
  // Annotation patches (set or remove) fail with `status` from now on (ok again with absl::OkStatus()).
  void FailAnnotationsWith(absl::Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    annotate_error_ = std::move(status);
  }
  // As the API server: a pod already assigned to a node gets 409 Conflict (Aborted here, as RestClient
  // maps it), and a pod it holds gets spec.nodeName and the Binding's annotations. The annotations are
  // recorded as calls of their own ("bind-annotation", in key order) after the bind.
  absl::Status BindPod(const std::string& ns, const std::string& name, const std::string&, const std::string& node,
                       const kube::StringMap& annotations) override {
    std::unique_lock<std::mutex> lock(mu_);
    calls_.push_back({"bind", ns + "/" + name, node});
    for (const auto& [key, value] : annotations) calls_.push_back({"bind-annotation", ns + "/" + name, key + "=" + value});
    if (!bind_error_.ok()) return bind_error_;
    const absl::Duration delay = bind_delay_;
    lock.unlock();
    absl::SleepFor(delay);  // an API server that answers slowly: binds overlap
    lock.lock();
    binds_released_.wait(lock, [this] { return !binds_held_; });
    auto [assigned, first] = bound_.try_emplace(ns + "/" + name, node);
    if (!first) {
      return absl::AbortedError("Operation cannot be fulfilled on pods/binding \"" + name + "\": pod " + name +
                                " is already assigned to node \"" + assigned->second + "\"");
    }
    if (auto pod = pods_.find(ns + "/" + name); pod != pods_.end()) {
      pod->second.spec.node_name = node;
      for (const auto& [key, value] : annotations) pod->second.metadata.annotations[key] = value;
    }
    return absl::OkStatus();
  }
  // A Workload API object, by "<resource>/<namespace>/<name>" (codec::WorkloadApiObjectOf), read as KubeApi
  // reads it.
  void PutWorkloadApiObject(const std::string& key, nlohmann::json object) {
    std::lock_guard<std::mutex> lock(mu_);
    workload_api_[key] = std::move(object);
  }
  absl::StatusOr<std::optional<int>> WorkloadGangMinCount(const kube::Pod& pod) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::optional<codec::WorkloadApiObject> named = codec::WorkloadApiObjectOf(pod);
    if (!named) return absl::InvalidArgumentError("the pod names no PodGroup or Workload");
    const std::string key = named->resource + "/" + named->namespace_name + "/" + named->name;
    calls_.push_back({"get-workload-api", pod.metadata.namespace_name + "/" + pod.metadata.name, key});
    auto it = workload_api_.find(key);
    if (it == workload_api_.end()) return absl::NotFoundError(key + " not found");
    return codec::GangMinCountIn(it->second, pod);
  }
  void SlowBindsBy(absl::Duration delay) {
    std::lock_guard<std::mutex> lock(mu_);
    bind_delay_ = delay;
  }
  // Binds wait for ReleaseBinds(): an API server that has not answered yet.
  void HoldBinds() {
    std::lock_guard<std::mutex> lock(mu_);
    binds_held_ = true;
  }
  void ReleaseBinds() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      binds_held_ = false;
    }
    binds_released_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, kube::Pod> pods_;
  std::map<std::string, nlohmann::json> workload_api_;
  std::vector<Call> calls_;
  absl::Status annotate_error_;
  absl::Status bind_error_;
  absl::Duration bind_delay_ = absl::ZeroDuration();
  bool binds_held_ = false;
  std::condition_variable binds_released_;
  std::map<std::string, std::string> bound_;  // namespace/name -> node
};

}  // namespace topofit::scheduler::testing
