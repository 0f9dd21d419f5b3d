#include "scheduler/bind_authorization.h"

#include "absl/strings/str_cat.h"

namespace topofit::scheduler {

absl::string_view BindRefusalCode(BindRefusal refusal) {
  switch (refusal) {
    case BindRefusal::kUnknownNode: return "unknown-node";
    case BindRefusal::kUnknownPod: return "unknown-pod";
    case BindRefusal::kUidMismatch: return "uid-mismatch";
    case BindRefusal::kForeignScheduler: return "foreign-scheduler";
    case BindRefusal::kInvalidPod: return "invalid-pod";
    case BindRefusal::kNoGpuRequest: return "no-gpu-request";
  }
  return "unknown";
}

namespace {

BindAuthorization Refused(BindRefusal refusal, std::string reason) {
  return BindAuthorization{refusal, absl::StrCat("topofit: bind refused (", BindRefusalCode(refusal), "): ", reason),
                           decision::GpuDemand{}};
}

}  // namespace

BindAuthorization AuthorizeBind(const codec::ExtenderBindingArgs& args, const kube::Pod* pod, bool node_known,
                                absl::string_view scheduler_name, bool judges_claims) {
  const std::string key = absl::StrCat(args.pod_namespace, "/", args.pod_name);
  if (!node_known) return Refused(BindRefusal::kUnknownNode, absl::StrCat("unknown node ", args.node));
  if (pod == nullptr) return Refused(BindRefusal::kUnknownPod, absl::StrCat("the API server has no pod ", key));
  if (pod->metadata.uid != args.pod_uid) {
    return Refused(BindRefusal::kUidMismatch,
                   absl::StrCat("pod ", key, " has uid ", pod->metadata.uid, ", not ", args.pod_uid));
  }
  if (pod->spec.scheduler_name != scheduler_name) {
    return Refused(BindRefusal::kForeignScheduler, absl::StrCat("pod ", key, " has schedulerName \"",
                                                                pod->spec.scheduler_name, "\", not \"", scheduler_name,
                                                                "\""));
  }
  absl::StatusOr<decision::GpuDemand> demand = decision::DemandOf(*pod);
  if (!demand.ok()) return Refused(BindRefusal::kInvalidPod, absl::StrCat("pod ", key, ": ", demand.status().message()));
  if (!demand->wants_gpus() && !(judges_claims && !pod->spec.resource_claims.empty())) {
    return Refused(BindRefusal::kNoGpuRequest,
                   absl::StrCat("pod ", key, " requests no nvidia.com/gpu",
                                judges_claims ? " and names no ResourceClaim" : ""));
  }
  return BindAuthorization{std::nullopt, "", *std::move(demand)};
}

}  // namespace topofit::scheduler
