#pragma once

// The API objects topofit's headroom controller writes (docs/headroom.md), pure builders only: for each shape
// of warm capacity (decision::HeadroomShape), a PodTemplate and a CapacityBuffer of cluster-autoscaler
// (autoscaling.x-k8s.io v1beta1 from CA 1.35, v1alpha1 in 1.34) referring to it; where CA serves no
// buffers, a placeholder Deployment of a negative-priority PriorityClass (CA's long-standing
// overprovisioning pattern). Every object carries app.kubernetes.io/managed-by: topofit and the shape's name
// in topofit.io/headroom-shape, so the controller finds its own after a restart.

#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "decision/headroom_plan.h"

namespace topofit::kubeclient {

inline constexpr char kCapacityBufferGroup[] = "autoscaling.x-k8s.io";
inline constexpr char kActiveCapacityStrategy[] = "buffer.x-k8s.io/active-capacity";
inline constexpr char kHeadroomShapeLabel[] = "topofit.io/headroom-shape";
inline constexpr char kManagedByLabel[] = "app.kubernetes.io/managed-by";
// The placeholders' PriorityClass: below every real pod's priority (so the scheduler preempts them for any)
// and above cluster-autoscaler's --expendable-pods-priority-cutoff (-10 by default), so CA scales up for them.
inline constexpr char kPlaceholderPriorityClass[] = "topofit-headroom";
inline constexpr int kPlaceholderPriority = -1;
inline constexpr char kPlaceholderImage[] = "registry.k8s.io/pause:3.10";

// "topofit-headroom-<shape>" as a DNS-1123 name (lower case, [a-z0-9.-], at most 63 characters: it is a
// label value too); a longer one is cut and ends in 16 hex digits of its hash.
std::string HeadroomObjectName(const decision::HeadroomShape& shape);

// The PodTemplate of a buffer of `shape`, in `namespace_name`, from `exemplar` (a pod of that shape, as the
// API server returns it): what scheduling reads of it (SchedulingTemplateOf, topofit's topology annotations
// kept), so cluster-autoscaler grows a group that gives the shape.
nlohmann::json HeadroomPodTemplate(const decision::HeadroomShape& shape, absl::string_view namespace_name,
                                   const nlohmann::json& exemplar);

// The CapacityBuffer (`version` "v1beta1" or "v1alpha1") of `replicas` pods of the PodTemplate of the same
// name, active-capacity strategy.
nlohmann::json CapacityBufferObject(const decision::HeadroomShape& shape, absl::string_view namespace_name,
                                    absl::string_view version, int replicas);

// Where no buffers are served: a Deployment of `replicas` pause pods shaped as `exemplar`, of the placeholder
// PriorityClass, never preempting (preemptionPolicy Never), ended at once when preempted (grace period 0).
nlohmann::json PlaceholderDeployment(const decision::HeadroomShape& shape, absl::string_view namespace_name,
                                     const nlohmann::json& exemplar, int replicas);
nlohmann::json PlaceholderPriorityClass();

// Whether `pod` (the API server's JSON) is one of the placeholder Deployments' pods: not demand.
bool IsHeadroomPlaceholder(const nlohmann::json& pod);

}  // namespace topofit::kubeclient
