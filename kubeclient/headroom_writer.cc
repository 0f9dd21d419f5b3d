#include "kubeclient/headroom_writer.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kubeclient/capacity_buffers.h"
#include "kubeclient/kube_api.h"

namespace topofit::kubeclient {
namespace {

constexpr char kPriorityClasses[] = "/apis/scheduling.k8s.io/v1/priorityclasses";

bool ServesCapacityBuffers(const nlohmann::json& resource_list) {
  if (!resource_list.is_object() || !resource_list.contains("resources") || !resource_list["resources"].is_array()) {
    return false;
  }
  for (const nlohmann::json& resource : resource_list["resources"]) {
    if (resource.is_object() && resource.value("name", "") == "capacitybuffers") return true;
  }
  return false;
}

// 409 AlreadyExists on a create is what an earlier run (or a lost reply) left: ours, by its label.
absl::Status Created(absl::Status status) { return absl::IsAlreadyExists(status) ? absl::OkStatus() : status; }
absl::Status Deleted(absl::Status status) { return absl::IsNotFound(status) ? absl::OkStatus() : status; }

}  // namespace

absl::StatusOr<HeadroomApi> DiscoverHeadroomApi(RestClient& rest) {
  std::vector<std::string> absent;
  for (const char* version : {"v1beta1", "v1alpha1"}) {
    const std::string path = absl::StrCat("/apis/", kCapacityBufferGroup, "/", version);
    absl::StatusOr<nlohmann::json> list = rest.Get(path);
    if (list.ok() && ServesCapacityBuffers(*list)) {
      return HeadroomApi{HeadroomApi::Kind::kCapacityBuffers, version,
                         absl::StrCat("the API server serves capacitybuffers.", kCapacityBufferGroup, "/", version)};
    }
    if (!list.ok() && !absl::IsNotFound(list.status())) {
      return absl::Status(list.status().code(), absl::StrCat("discovering CapacityBuffers (GET ", path,
                                                              "): ", list.status().message()));
    }
    absent.push_back(absl::StrCat(kCapacityBufferGroup, "/", version));
  }
  return HeadroomApi{HeadroomApi::Kind::kPlaceholders, "",
                     absl::StrCat("no CapacityBuffer API (", absent[0], " and ", absent[1],
                                  " serve no capacitybuffers: cluster-autoscaler before 1.34, or its CRD not "
                                  "installed): placeholder Deployments of PriorityClass ",
                                  kPlaceholderPriorityClass, " (value ", kPlaceholderPriority, ")")};
}

HeadroomWriter::HeadroomWriter(RestClient& rest, HeadroomApi api, std::string namespace_name)
    : rest_(rest), api_(std::move(api)), namespace_(std::move(namespace_name)) {}

std::string HeadroomWriter::Collection() const {
  if (api_.kind == HeadroomApi::Kind::kCapacityBuffers) {
    return absl::StrCat("/apis/", kCapacityBufferGroup, "/", api_.version, "/namespaces/",
                        EscapePathSegment(namespace_), "/capacitybuffers");
  }
  return absl::StrCat("/apis/apps/v1/namespaces/", EscapePathSegment(namespace_), "/deployments");
}

absl::Status HeadroomWriter::Adopt() {
  absl::StatusOr<nlohmann::json> list =
      rest_.Get(absl::StrCat(Collection(), "?labelSelector=", kManagedByLabel, "%3Dtopofit"));
  if (!list.ok()) return list.status();
  if (list->contains("items") && (*list)["items"].is_array()) {
    for (const nlohmann::json& item : (*list)["items"]) {
      // The label is checked here too: the selector is the server's to apply, this is the writer's to trust.
      const nlohmann::json labels = item["metadata"].value("labels", nlohmann::json::object());
      if (labels.value(kManagedByLabel, "") != "topofit" || !labels.contains(kHeadroomShapeLabel)) continue;
      const nlohmann::json spec = item.value("spec", nlohmann::json::object());
      written_[item["metadata"].value("name", "")] = spec.value("replicas", 0);
    }
  }
  adopted_ = true;
  return absl::OkStatus();
}

absl::Status HeadroomWriter::Create(const decision::HeadroomShape& shape, const HeadroomWant& want) {
  if (api_.kind == HeadroomApi::Kind::kCapacityBuffers) {
    const nlohmann::json pod_template = HeadroomPodTemplate(shape, namespace_, want.exemplar);
    if (absl::Status status = Created(rest_.Post(PodTemplatesPath(namespace_), pod_template).status()); !status.ok()) {
      return status;
    }
  } else if (!priority_class_made_) {
    if (absl::Status status = Created(rest_.Post(kPriorityClasses, PlaceholderPriorityClass()).status()); !status.ok()) {
      return status;
    }
    priority_class_made_ = true;
  }
  const nlohmann::json object = api_.kind == HeadroomApi::Kind::kCapacityBuffers
                                    ? CapacityBufferObject(shape, namespace_, api_.version, want.replicas)
                                    : PlaceholderDeployment(shape, namespace_, want.exemplar, want.replicas);
  absl::Status status = rest_.Post(Collection(), object).status();
  // Made by an earlier run whose reply was lost (a label-selected LIST would have found it otherwise): its
  // replicas are set to what is wanted now.
  if (absl::IsAlreadyExists(status)) return Resize(HeadroomObjectName(shape), want.replicas);
  return status;
}

absl::Status HeadroomWriter::Resize(const std::string& name, int replicas) {
  return rest_
      .Patch(absl::StrCat(Collection(), "/", EscapePathSegment(name)), {{"spec", {{"replicas", replicas}}}},
             "application/merge-patch+json")
      .status();
}

absl::Status HeadroomWriter::Remove(const std::string& name) {
  if (absl::Status status = Deleted(rest_.Delete(absl::StrCat(Collection(), "/", EscapePathSegment(name))).status());
      !status.ok()) {
    return status;
  }
  if (api_.kind != HeadroomApi::Kind::kCapacityBuffers) return absl::OkStatus();
  return Deleted(rest_.Delete(absl::StrCat(PodTemplatesPath(namespace_), "/", EscapePathSegment(name))).status());
}

absl::Status HeadroomWriter::Apply(const std::map<decision::HeadroomShape, HeadroomWant>& wanted) {
  if (!adopted_) {
    if (absl::Status status = Adopt(); !status.ok()) return status;
  }
  std::set<std::string> kept;
  for (const auto& [shape, want] : wanted) {
    if (want.replicas <= 0) continue;
    const std::string name = HeadroomObjectName(shape);
    kept.insert(name);
    const auto it = written_.find(name);
    if (it == written_.end()) {
      if (absl::Status status = Create(shape, want); !status.ok()) return status;
    } else if (it->second != want.replicas) {
      if (absl::Status status = Resize(name, want.replicas); !status.ok()) return status;
    }
    written_[name] = want.replicas;
  }
  for (auto it = written_.begin(); it != written_.end();) {
    if (kept.contains(it->first)) {
      ++it;
      continue;
    }
    if (absl::Status status = Remove(it->first); !status.ok()) return status;
    it = written_.erase(it);
  }
  return absl::OkStatus();
}

}  // namespace topofit::kubeclient
