#pragma once

// What a pod asks of a node's GPUs through Dynamic Resource Allocation (issue 37): the pod names
// ResourceClaims (spec.resourceClaims: a claim's name, or a template whose generated claim's name is in
// status.resourceClaimStatuses), and each claim's spec.devices.requests ask for devices of a DeviceClass.
// The requests of the GPU classes are summed into one demand, with the selectors every GPU must meet and the
// attributes whose value all of them must share (constraints[].matchAttribute, e.g.
// "resource.kubernetes.io/pcieRoot": one PCIe root). Requests of other classes (NICs...) are not topofit's
// to judge and are left to kube-scheduler's DRA plugin.
//
// What cannot be judged is refused with the reason, never read as "any GPU will do": selectors outside
// decision/device_selector.h's subset, firstAvailable alternatives, allocation modes other than ExactCount
// and All, constraints other than matchAttribute, a matchAttribute over some of the pod's GPU requests but
// not all, GPU requests with different selectors, and a mix of ExactCount and All.

#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "decision/claim_gpus.h"
#include "decision/device_selector.h"
#include "kube/dra_objects.h"
#include "kube/objects.h"

namespace topofit::decision {

// Which requests ask for GPUs: those of these DeviceClasses, and those whose selectors name the driver.
struct DraGpuClasses {
  std::string driver = kNvidiaGpuDriver;
  std::vector<std::string> device_classes = {kNvidiaGpuDriver};  // NVIDIA's chart names its class after the driver
};

struct ClaimGpuDemand {
  int gpus = 0;      // ExactCount requests' devices, summed
  bool all = false;  // allocationMode All: every GPU of the node that meets the selectors
  std::vector<DeviceSelector> selectors;     // every GPU meets each of them
  std::vector<std::string> match_attributes;  // qualified names whose value all the GPUs share
  bool operator==(const ClaimGpuDemand&) const = default;
};

// The claim a spec.resourceClaims entry stands for (its name, or the name status.resourceClaimStatuses gives
// a template's claim); nullopt when a template's claim has no name yet.
std::optional<std::string> ClaimNameOf(const kube::Pod& pod, const kube::PodResourceClaim& entry);

// A claim by namespace and name; nullopt when it is not known (not created yet, or not seen by the watch).
using ClaimLookup = absl::FunctionRef<std::optional<kube::ResourceClaim>(absl::string_view, absl::string_view)>;

// nullopt when the pod asks no GPU through claims: it names none, none asks for a GPU class, or those that
// do are allocated already (their GPUs are held: the state counts them, and the allocation fixes the node).
// FailedPrecondition when a claim it names is not known yet (kube-scheduler tries the pod again);
// InvalidArgument when what it asks cannot be judged (the reason names the claim and the part).
absl::StatusOr<std::optional<ClaimGpuDemand>> ClaimGpuDemandOf(const kube::Pod& pod, ClaimLookup lookup,
                                                               const DraGpuClasses& classes = {});

}  // namespace topofit::decision
