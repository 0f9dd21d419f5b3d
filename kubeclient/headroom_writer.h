#pragma once

// Writes topofit's warm capacity into the cluster (docs/headroom.md): for each shape the planner wants kept
// warm, a CapacityBuffer and its PodTemplate where cluster-autoscaler serves buffers, else a placeholder
// Deployment of a negative-priority PriorityClass. Which one is chosen at start, from API discovery, and said
// (HeadroomApi::reason), never silent.

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "decision/headroom_plan.h"
#include "kubeclient/rest_client.h"

namespace topofit::kubeclient {

struct HeadroomApi {
  enum class Kind { kCapacityBuffers, kPlaceholders };
  Kind kind = Kind::kPlaceholders;
  std::string version;  // of autoscaling.x-k8s.io, for kCapacityBuffers: "v1beta1" or "v1alpha1"
  std::string reason;   // why this one, for the log
};

// GET /apis/autoscaling.x-k8s.io/v1beta1, then v1alpha1: the first whose resource list names
// capacitybuffers is used; neither (404, or no such resource) means placeholders. Another failure (the API
// server unreachable, 403) is returned: the choice is not guessed.
absl::StatusOr<HeadroomApi> DiscoverHeadroomApi(RestClient& rest);

// What the controller wants of one shape: how many pods to keep warm, and a pod of the shape (the API
// server's JSON) to shape them after.
struct HeadroomWant {
  int replicas = 0;
  nlohmann::json exemplar;
};

class HeadroomWriter {
 public:
  // `rest` must outlive the writer; objects go to `namespace_name`.
  HeadroomWriter(RestClient& rest, HeadroomApi api, std::string namespace_name);

  // Makes the cluster hold exactly `wanted` (shapes with no replicas are not wanted): creates what is
  // missing, patches replicas that differ, deletes topofit's objects of shapes no longer wanted — those an
  // earlier run left too, found on the first call by their label. Stops at the first error and returns it;
  // what was done stays done, and the next call picks up from what the API then holds.
  absl::Status Apply(const std::map<decision::HeadroomShape, HeadroomWant>& wanted);

  // Forgets what it wrote: the next Apply lists the objects again, as after a restart. For a replica that
  // stopped leading (--leader-elect), under whose successor they may have changed.
  void Forget() {
    adopted_ = false;
    written_.clear();
  }

  // The replicas written, by object name.
  const std::map<std::string, int>& written() const { return written_; }

 private:
  absl::Status Adopt();
  absl::Status Create(const decision::HeadroomShape& shape, const HeadroomWant& want);
  absl::Status Resize(const std::string& name, int replicas);
  absl::Status Remove(const std::string& name);
  std::string Collection() const;

  RestClient& rest_;
  HeadroomApi api_;
  std::string namespace_;
  bool adopted_ = false;
  bool priority_class_made_ = false;
  std::map<std::string, int> written_;
};

}  // namespace topofit::kubeclient
