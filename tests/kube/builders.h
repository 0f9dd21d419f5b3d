#pragma once

// Builders for kube objects in tests: MakePod().gpus(4).initContainer(MakeContainer("warmup").gpus(1)).
// Quantities are written as the API writes them ("500m", "1Gi") and parsed with ParseQuantityMilli; a
// literal that does not parse is a bug in the test and throws.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "kube/objects.h"
#include "kube/quantity.h"

namespace topofit::kube::testing {

inline int64_t Milli(absl::string_view quantity) {
  absl::StatusOr<int64_t> milli = ParseQuantityMilli(quantity);
  if (!milli.ok()) throw std::invalid_argument(std::string(milli.status().message()));
  return *milli;
}

class ContainerBuilder {
 public:
  explicit ContainerBuilder(std::string name) { container_.name = std::move(name); }
  ContainerBuilder& request(const std::string& resource, absl::string_view quantity) {
    container_.resources.requests[resource] = Milli(quantity);
    return *this;
  }
  ContainerBuilder& limit(const std::string& resource, absl::string_view quantity) {
    container_.resources.limits[resource] = Milli(quantity);
    return *this;
  }
  // GPUs as users write them: in limits (the API server copies them into requests).
  ContainerBuilder& gpus(int count) { return limit(kResourceNvidiaGpu, std::to_string(count)); }
  ContainerBuilder& cpu(absl::string_view quantity) { return request(kResourceCpu, quantity); }
  // restartPolicy: Always on an init container: a sidecar.
  ContainerBuilder& sidecar() {
    container_.restart_policy = ContainerRestartPolicy::kAlways;
    return *this;
  }
  const Container& build() const { return container_; }

 private:
  Container container_;
};

inline ContainerBuilder MakeContainer(std::string name) { return ContainerBuilder(std::move(name)); }

// One requirement of a node selector term: Requirement("zone", NodeSelectorOperator::kIn, {"a", "b"}).
inline NodeSelectorRequirement Requirement(std::string key, NodeSelectorOperator op,
                                           std::vector<std::string> values = {}) {
  return NodeSelectorRequirement{std::move(key), op, std::move(values)};
}

class TermBuilder {
 public:
  TermBuilder& expression(NodeSelectorRequirement requirement) {
    term_.match_expressions.push_back(std::move(requirement));
    return *this;
  }
  TermBuilder& field(NodeSelectorRequirement requirement) {
    term_.match_fields.push_back(std::move(requirement));
    return *this;
  }
  const NodeSelectorTerm& build() const { return term_; }

 private:
  NodeSelectorTerm term_;
};

inline TermBuilder MakeTerm() { return TermBuilder(); }

class PodBuilder {
 public:
  // Namespace "default", scheduled by topofit's profile (the extender binds only such pods).
  PodBuilder() {
    pod_.metadata.namespace_name = "default";
    pod_.spec.scheduler_name = "topofit";
  }
  PodBuilder& schedulerName(std::string name) {
    pod_.spec.scheduler_name = std::move(name);
    return *this;
  }
  // Also sets the uid to "uid-<name>" unless uid() says otherwise.
  PodBuilder& name(std::string name) {
    if (pod_.metadata.uid.empty() || pod_.metadata.uid == "uid-" + pod_.metadata.name) pod_.metadata.uid = "uid-" + name;
    pod_.metadata.name = std::move(name);
    return *this;
  }
  PodBuilder& uid(std::string uid) {
    pod_.metadata.uid = std::move(uid);
    return *this;
  }
  PodBuilder& created(int64_t unix_seconds) {
    pod_.metadata.creation_timestamp_seconds = unix_seconds;
    return *this;
  }
  PodBuilder& annotation(const std::string& key, std::string value) {
    pod_.metadata.annotations[key] = std::move(value);
    return *this;
  }
  PodBuilder& label(const std::string& key, std::string value) {
    pod_.metadata.labels[key] = std::move(value);
    return *this;
  }
  PodBuilder& namespaceName(std::string namespace_name) {
    pod_.metadata.namespace_name = std::move(namespace_name);
    return *this;
  }
  // spec.workloadRef (Kubernetes 1.35).
  PodBuilder& workloadRef(std::string name, std::string pod_group, std::string replica_key = "") {
    pod_.spec.workload_ref = WorkloadReference{std::move(name), std::move(pod_group), std::move(replica_key)};
    return *this;
  }
  // spec.schedulingGroup.podGroupName (Kubernetes 1.36).
  PodBuilder& schedulingGroup(std::string pod_group_name) {
    pod_.spec.scheduling_group = PodSchedulingGroup{std::move(pod_group_name)};
    return *this;
  }
  // spec.resourceClaims[]: a claim made for the pod from the ResourceClaimTemplate `template_name`.
  PodBuilder& claimTemplate(std::string name, std::string template_name) {
    pod_.spec.resource_claims.push_back(PodResourceClaim{.name = std::move(name), .resource_claim_name = std::nullopt,
                                                         .resource_claim_template_name = std::move(template_name)});
    return *this;
  }
  // Adds a regular container.
  PodBuilder& container(const ContainerBuilder& container) {
    pod_.spec.containers.push_back(container.build());
    return *this;
  }
  PodBuilder& initContainer(const ContainerBuilder& container) {
    pod_.spec.init_containers.push_back(container.build());
    return *this;
  }
  // A single container "main" asking for `count` GPUs.
  PodBuilder& gpus(int count) { return container(MakeContainer("main").gpus(count)); }
  PodBuilder& overhead(const std::string& resource, absl::string_view quantity) {
    pod_.spec.overhead[resource] = Milli(quantity);
    return *this;
  }
  // spec.resources: pod-level requests and limits (KEP-2837).
  PodBuilder& podRequest(const std::string& resource, absl::string_view quantity) {
    pod_.spec.resources.requests[resource] = Milli(quantity);
    return *this;
  }
  PodBuilder& podLimit(const std::string& resource, absl::string_view quantity) {
    pod_.spec.resources.limits[resource] = Milli(quantity);
    return *this;
  }
  PodBuilder& nodeSelector(const std::string& key, std::string value) {
    pod_.spec.node_selector[key] = std::move(value);
    return *this;
  }
  // Adds a term to the required node affinity (creating it).
  PodBuilder& requiredTerm(const TermBuilder& term) {
    if (!pod_.spec.required_node_affinity) pod_.spec.required_node_affinity.emplace();
    pod_.spec.required_node_affinity->terms.push_back(term.build());
    return *this;
  }
  // A required node affinity with no terms: present, and so matching no node.
  PodBuilder& emptyRequiredAffinity() {
    pod_.spec.required_node_affinity.emplace();
    return *this;
  }
  PodBuilder& toleration(std::string key, TolerationOperator op, std::string value, TaintEffect effect) {
    pod_.spec.tolerations.push_back(Toleration{std::move(key), op, std::move(value), effect, std::nullopt});
    return *this;
  }
  const Pod& build() const { return pod_; }
  operator const Pod&() const { return pod_; }  // NOLINT: lets a builder stand where a Pod is expected

 private:
  Pod pod_;
};

inline PodBuilder MakePod() { return PodBuilder(); }

class NodeBuilder {
 public:
  NodeBuilder& name(std::string name) {
    node_.metadata.name = std::move(name);
    return *this;
  }
  NodeBuilder& label(const std::string& key, std::string value) {
    node_.metadata.labels[key] = std::move(value);
    return *this;
  }
  NodeBuilder& annotation(const std::string& key, std::string value) {
    node_.metadata.annotations[key] = std::move(value);
    return *this;
  }
  NodeBuilder& created(int64_t unix_seconds) {
    node_.metadata.creation_timestamp_seconds = unix_seconds;
    return *this;
  }
  NodeBuilder& resourceVersion(std::string version) {
    node_.metadata.resource_version = std::move(version);
    return *this;
  }
  // The kubelet's Ready condition: "True", "False" or "Unknown".
  NodeBuilder& ready(std::string status) {
    node_.status.conditions.push_back(Condition{"Ready", std::move(status), "KubeletReady"});
    return *this;
  }
  NodeBuilder& taint(std::string key, std::string value, TaintEffect effect) {
    node_.spec.taints.push_back(Taint{std::move(key), std::move(value), effect});
    return *this;
  }
  NodeBuilder& gpus(int count) {
    node_.status.capacity[kResourceNvidiaGpu] = int64_t{count} * 1000;
    node_.status.allocatable[kResourceNvidiaGpu] = int64_t{count} * 1000;
    return *this;
  }
  const Node& build() const { return node_; }
  operator const Node&() const { return node_; }  // NOLINT: lets a builder stand where a Node is expected

 private:
  Node node_;
};

inline NodeBuilder MakeNode() { return NodeBuilder(); }

}  // namespace topofit::kube::testing
