#include "decision/claim_demand.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace topofit::decision {

std::optional<std::string> ClaimNameOf(const kube::Pod& pod, const kube::PodResourceClaim& entry) {
  if (entry.resource_claim_name) return entry.resource_claim_name;
  for (const kube::PodResourceClaimStatus& status : pod.status.resource_claim_statuses) {
    if (status.name == entry.name) return status.resource_claim_name;
  }
  return std::nullopt;
}

namespace {

bool AsksForGpus(const kube::DeviceRequest& request, const std::vector<DeviceSelector>& selectors,
                 const DraGpuClasses& classes) {
  if (std::find(classes.device_classes.begin(), classes.device_classes.end(), request.device_class_name) !=
      classes.device_classes.end()) {
    return true;
  }
  return std::any_of(selectors.begin(), selectors.end(),
                     [&](const DeviceSelector& selector) { return selector.driver == classes.driver; });
}

absl::Status Unjudgeable(absl::string_view claim, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("ResourceClaim ", claim, ": ", what));
}

}  // namespace

absl::StatusOr<std::optional<ClaimGpuDemand>> ClaimGpuDemandOf(const kube::Pod& pod, ClaimLookup lookup,
                                                               const DraGpuClasses& classes) {
  ClaimGpuDemand demand;
  bool exact = false;
  bool asks = false;
  std::optional<std::vector<DeviceSelector>> selectors;  // of the first GPU request; the others must agree
  // Each matchAttribute must cover every GPU request of the pod: checked once all are known.
  int gpu_requests = 0;
  std::vector<std::pair<std::string, int>> constrained;  // (attribute, GPU requests it covers)
  for (const kube::PodResourceClaim& entry : pod.spec.resource_claims) {
    const std::optional<std::string> name = ClaimNameOf(pod, entry);
    const std::string key = absl::StrCat(pod.metadata.namespace_name, "/", name.value_or(entry.name));
    if (!name) {
      // A template entry without a generated claim: none is needed, or the controller has not made it yet.
      if (entry.resource_claim_template_name) {
        return absl::FailedPreconditionError(absl::StrCat("the ResourceClaim of ", entry.name, " (template ",
                                                          *entry.resource_claim_template_name, ") is not made yet"));
      }
      continue;
    }
    const std::optional<kube::ResourceClaim> claim = lookup(pod.metadata.namespace_name, *name);
    if (!claim) return absl::FailedPreconditionError(absl::StrCat("ResourceClaim ", key, " is not known yet"));
    if (claim->allocated) continue;
    std::set<std::string> gpu_names;
    for (const kube::DeviceRequest& request : claim->requests) {
      if (request.first_available) {
        return Unjudgeable(key, absl::StrCat("request ", request.name, " lists alternatives (firstAvailable)"));
      }
      std::vector<DeviceSelector> parsed;
      absl::Status unparsed = absl::OkStatus();
      for (const std::string& expression : request.selectors) {
        absl::StatusOr<DeviceSelector> selector = ParseDeviceSelector(expression);
        if (!selector.ok()) {
          unparsed = selector.status();
          break;
        }
        parsed.push_back(*std::move(selector));
      }
      const bool gpu_class = AsksForGpus(request, parsed, classes);
      if (!gpu_class && unparsed.ok()) continue;  // another kind of device: kube-scheduler's DRA plugin judges it
      if (!unparsed.ok()) {
        // A selector topofit cannot read might name the GPU driver: judged only when the class says it does not.
        if (!gpu_class && !absl::StrContains(absl::StrJoin(request.selectors, " "), classes.driver)) continue;
        return Unjudgeable(key, absl::StrCat("request ", request.name, ": ", unparsed.message()));
      }
      if (request.other_selector) {
        return Unjudgeable(key, absl::StrCat("request ", request.name, " has a selector other than CEL"));
      }
      if (request.admin_access) continue;  // monitoring access takes no GPU
      if (selectors && *selectors != parsed) {
        return Unjudgeable(key, "GPU requests with different selectors are not judged");
      }
      selectors = std::move(parsed);
      if (request.allocation_mode.empty() || request.allocation_mode == "ExactCount") {
        const int64_t count = request.count.value_or(1);
        if (count < 1 || count > 1024) {
          return Unjudgeable(key, absl::StrCat("request ", request.name, " asks for ", count, " devices"));
        }
        demand.gpus += static_cast<int>(count);
        exact = true;
      } else if (request.allocation_mode == "All") {
        demand.all = true;
      } else {
        return Unjudgeable(key, absl::StrCat("request ", request.name, ": allocationMode ", request.allocation_mode,
                                             " is neither ExactCount nor All"));
      }
      asks = true;
      ++gpu_requests;
      gpu_names.insert(request.name);
    }
    for (const kube::DeviceConstraint& constraint : claim->constraints) {
      int covered = 0;
      for (const std::string& request : gpu_names) {
        if (constraint.requests.empty() ||
            std::find(constraint.requests.begin(), constraint.requests.end(), request) != constraint.requests.end()) {
          ++covered;
        }
      }
      if (covered == 0) continue;  // about other devices
      if (!constraint.match_attribute) return Unjudgeable(key, "a constraint other than matchAttribute");
      constrained.emplace_back(*constraint.match_attribute, covered);
    }
  }
  if (!asks) return std::nullopt;
  if (exact && demand.all) return absl::InvalidArgumentError("GPU requests of both ExactCount and All are not judged");
  for (const auto& [attribute, covered] : constrained) {
    if (covered != gpu_requests) {
      return absl::InvalidArgumentError(
          absl::StrCat("matchAttribute ", attribute, " over some of the pod's GPU requests but not all is not judged"));
    }
    if (std::find(demand.match_attributes.begin(), demand.match_attributes.end(), attribute) ==
        demand.match_attributes.end()) {
      demand.match_attributes.push_back(attribute);
    }
  }
  demand.selectors = selectors.value_or(std::vector<DeviceSelector>{});
  return demand;
}

}  // namespace topofit::decision
