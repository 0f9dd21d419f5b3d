#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "replay/workload.h"

namespace topofit::sim {

// The Azure LLM inference trace 2023 (Splitwise, ISCA '24), read in place: requests (time, context
// tokens, generated tokens) of two services over about an hour, turned into inference replica pods by the
// rule in LoadAzureLlm. Mapping and assumptions: docs/bench-workloads.md.
// Its folder in a traces directory (`topofit bench --traces`, default ./traces).
inline constexpr absl::string_view kAzureLlmFolder = "azure-llm-inference-2023";

// One model size a service runs: how many GPUs a replica needs (tensor parallel) and what it serves.
struct LlmModelClass {
  std::string name;  // in pod names, e.g. "70b"
  int gpus = 1;
  double load_share = 0;                  // share of each service's tokens this model serves
  double prefill_tokens_per_second = 0;  // context tokens one replica processes per second
  double decode_tokens_per_second = 0;   // generated tokens one replica produces per second
  double comm_fraction = 0;              // tensor-parallel collectives' share of the running time
};

// 8B on 1 GPU (40% of tokens), 13B on 2 (30%), 34B on 4 (20%), 70B on 8 (10%); throughputs are
// order-of-magnitude vLLM figures for A100/H100-class GPUs at a moderate batch.
std::vector<LlmModelClass> DefaultLlmModelMix();

struct AzureLlmOptions {
  std::string trace_dir = absl::StrCat("traces/", kAzureLlmFolder);
  // AzureLLMInferenceTrace_<service>.csv; each service runs its own deployment of every model class.
  std::vector<std::string> services = {"code", "conv"};
  std::vector<LlmModelClass> models = DefaultLlmModelMix();
  // The published trace is a sample of the services; this multiplies its token load.
  double load_scale = 20;
  SimTime window = kMinute;  // load is measured per window; replica counts change at window starts
  // A replica ends only once every window of this length before has asked for fewer replicas
  // (the Horizontal Pod Autoscaler's default scale-down stabilisation).
  SimTime scale_down_stabilization = 5 * kMinute;
  int min_replicas = 1;  // per deployment, even in a window without requests
  int64_t cpu_milli_per_gpu = 8000;
  int64_t memory_mib_per_gpu = 32 * 1024;
  int max_nodes_per_group = 32;  // the fleet's ceiling (CloudGpuFleet)
};

// Per service and model class (a deployment), for each window w:
//   demand(w) = load_scale x load_share x (context_tokens(w) / prefill + generated_tokens(w) / decode)
//               / window seconds
//   target(w) = max(min_replicas, ceil(demand(w)))
//   replicas(w) = max of target over the windows within scale_down_stabilization up to w
// New replicas arrive at the window's start; when replicas(w) falls, the newest replicas end then (as a
// ReplicaSet deletes its youngest pods first); all end at the end of the last window.
// Replicas of two GPUs or more need NVLink: min-link NV, policy required.
absl::StatusOr<Workload> LoadAzureLlm(const AzureLlmOptions& options);

}  // namespace topofit::sim
