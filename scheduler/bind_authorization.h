#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "codec/extender_json.h"
#include "decision/pod_demand.h"
#include "kube/objects.h"

namespace topofit::scheduler {

// The scheduler name the manifests give topofit's profile (KubeSchedulerConfiguration profiles[0]).
inline constexpr absl::string_view kDefaultSchedulerName = "topofit";

// Why a bind was refused before anything was written: the `reason` label of
// topofit_extender_bind_refusals_total. A bind names only a pod and a node, and whoever reaches the
// extender can send one, so topofit binds nothing the API server's own pod does not ask of it.
enum class BindRefusal {
  kUnknownNode,      // the node is not in the GPU state (never seen, or gone)
  kUnknownPod,       // the API server has no such pod
  kUidMismatch,      // it has a pod of that name, with another uid (deleted and recreated, or forged)
  kForeignScheduler, // spec.schedulerName is not topofit's: another scheduler owns the pod
  kInvalidPod,       // its GPU request or topofit.io annotations cannot be read
  kNoGpuRequest,     // it asks for no GPU (no nvidia.com/gpu, and no ResourceClaim the extender judges):
                     // topofit's profile sends only GPU pods (managedResources)
};

absl::string_view BindRefusalCode(BindRefusal refusal);

// What a bind may do: refused (with the reason shown to kube-scheduler and in the log), or authorised with
// the pod's GPU demand read from the API server's pod, never from the request.
struct BindAuthorization {
  std::optional<BindRefusal> refusal;
  std::string reason;
  decision::GpuDemand demand;
};

// Judges a bind of `args` against the pod as the API server holds it (`pod`, null when it has none) and
// whether the node is known. With `judges_claims` (the extender reads ResourceClaims: --dra) a pod that
// names ResourceClaims and requests no nvidia.com/gpu is authorised with a demand of no GPUs: kube-scheduler's
// DRA plugin has allocated its devices, and the claim watch counts them. Pure.
BindAuthorization AuthorizeBind(const codec::ExtenderBindingArgs& args, const kube::Pod* pod, bool node_known,
                                absl::string_view scheduler_name, bool judges_claims = false);

}  // namespace topofit::scheduler
