#include "replay/workloads/azure_llm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "replay/workloads/cloud_gpu_fleet.h"
#include "replay/workloads/csv_table.h"
#include "replay/workloads/pod_order.h"

namespace topofit::sim {
namespace {

struct Request {
  int64_t unix_millis = 0;
  int64_t context_tokens = 0;
  int64_t generated_tokens = 0;
};

absl::StatusOr<std::vector<Request>> ReadRequests(const std::filesystem::path& path) {
  absl::StatusOr<CsvTable> table = CsvTable::Read(path);
  if (!table.ok()) return table.status();
  absl::StatusOr<int> timestamp = table->Column("TIMESTAMP");
  absl::StatusOr<int> context = table->Column("ContextTokens");
  absl::StatusOr<int> generated = table->Column("GeneratedTokens");
  for (const auto* column : {&timestamp, &context, &generated}) {
    if (!column->ok()) return column->status();
  }
  std::vector<Request> requests;
  requests.reserve(table->row_count());
  for (int row = 0; row < table->row_count(); ++row) {
    absl::Time time;
    std::string error;
    // "2023-11-16 18:17:03.9799600"; the trace gives no zone, and only differences matter.
    if (!absl::ParseTime("%Y-%m-%d %H:%M:%E*S", table->Field(row, *timestamp), absl::UTCTimeZone(), &time,
                         &error)) {
      return table->RowError(row, absl::StrCat("TIMESTAMP: ", error));
    }
    absl::StatusOr<int64_t> context_tokens = table->Int(row, *context);
    absl::StatusOr<int64_t> generated_tokens = table->Int(row, *generated);
    if (!context_tokens.ok()) return context_tokens.status();
    if (!generated_tokens.ok()) return generated_tokens.status();
    if (*context_tokens < 0 || *generated_tokens < 0) return table->RowError(row, "negative token count");
    requests.push_back(Request{absl::ToUnixMillis(time), *context_tokens, *generated_tokens});
  }
  return requests;
}

// Tokens per window of one service.
struct WindowLoad {
  std::vector<int64_t> context_tokens;
  std::vector<int64_t> generated_tokens;
};

WindowLoad SumPerWindow(const std::vector<Request>& requests, int64_t start_millis, SimTime window, int windows) {
  WindowLoad load{std::vector<int64_t>(windows, 0), std::vector<int64_t>(windows, 0)};
  for (const Request& request : requests) {
    const auto w = static_cast<size_t>((request.unix_millis - start_millis) / window);
    load.context_tokens[w] += request.context_tokens;
    load.generated_tokens[w] += request.generated_tokens;
  }
  return load;
}

// The replica count of one deployment in each window (the rule in azure_llm.h).
std::vector<int> Replicas(const WindowLoad& load, const LlmModelClass& model, const AzureLlmOptions& options) {
  const double window_seconds = static_cast<double>(options.window) / kSecond;
  const auto windows = static_cast<int>(load.context_tokens.size());
  std::vector<int> targets(windows);
  for (int w = 0; w < windows; ++w) {
    const double demand = options.load_scale * model.load_share *
                          (static_cast<double>(load.context_tokens[w]) / model.prefill_tokens_per_second +
                           static_cast<double>(load.generated_tokens[w]) / model.decode_tokens_per_second) /
                          window_seconds;
    targets[w] = std::max(options.min_replicas, static_cast<int>(std::ceil(demand)));
  }
  const auto stabilization = static_cast<int>(std::max<SimTime>(options.scale_down_stabilization / options.window, 1));
  std::vector<int> replicas(windows);
  for (int w = 0; w < windows; ++w) {
    const int first = std::max(0, w - stabilization + 1);
    replicas[w] = *std::max_element(targets.begin() + first, targets.begin() + w + 1);
  }
  return replicas;
}

PodSpec ReplicaPod(const std::string& service, const LlmModelClass& model, int index,
                   const AzureLlmOptions& options) {
  PodSpec pod;
  pod.name = absl::StrCat(service, "-", model.name, "-", index);
  pod.cpu_milli = model.gpus * options.cpu_milli_per_gpu;
  pod.memory_mib = model.gpus * options.memory_mib_per_gpu;
  pod.gpus = model.gpus;
  if (model.gpus >= 2) {
    pod.min_link = "NV";
    pod.topology_policy = "required";
    pod.comm_fraction = model.comm_fraction;
  }
  pod.kind = "inference";
  pod.runs_until_deleted = true;  // a replica lives while the load needs it
  return pod;
}

// Turns one deployment's replica counts into pods: the newest replicas end first.
void AddDeploymentPods(const std::string& service, const LlmModelClass& model, const std::vector<int>& replicas,
                       const AzureLlmOptions& options, std::vector<PodSpec>& pods) {
  std::vector<PodSpec> running;
  int started = 0;
  for (size_t w = 0; w <= replicas.size(); ++w) {
    const SimTime now = static_cast<SimTime>(w) * options.window;
    const int wanted = w < replicas.size() ? replicas[w] : 0;
    while (static_cast<int>(running.size()) > wanted) {
      running.back().duration = now - running.back().arrival;
      pods.push_back(std::move(running.back()));
      running.pop_back();
    }
    while (static_cast<int>(running.size()) < wanted) {
      running.push_back(ReplicaPod(service, model, started++, options));
      running.back().arrival = now;
    }
  }
}

absl::Status CheckOptions(const AzureLlmOptions& options) {
  if (options.services.empty() || options.models.empty() || !(options.load_scale > 0) || options.window <= 0 ||
      options.scale_down_stabilization < 0 || options.min_replicas < 0) {
    return absl::InvalidArgumentError(
        "AzureLlmOptions: needs services and models, load_scale > 0, window > 0, stabilization and "
        "min_replicas >= 0");
  }
  for (const LlmModelClass& model : options.models) {
    if (model.gpus < 1 || model.load_share < 0 || !(model.prefill_tokens_per_second > 0) ||
        !(model.decode_tokens_per_second > 0)) {
      return absl::InvalidArgumentError(absl::StrCat("model class \"", model.name,
                                                     "\": needs gpus >= 1, load_share >= 0, throughputs > 0"));
    }
  }
  return absl::OkStatus();
}

std::string Describe(const AzureLlmOptions& options, int64_t requests, int windows) {
  std::string models;
  for (const LlmModelClass& model : options.models) {
    absl::StrAppend(&models, models.empty() ? "" : ", ", model.name, " on ", model.gpus, " GPU(s) serving ",
                    model.load_share * 100, "% of tokens at ", model.prefill_tokens_per_second, " prefill / ",
                    model.decode_tokens_per_second, " decode tokens/s");
  }
  return absl::StrCat(
      "Azure LLM inference trace 2023 (", requests, " requests, ", windows, " windows of ",
      options.window / kSecond, " s), token load x", options.load_scale,
      "; per service and model class, replicas = ceil(tokens/s over the window / per-replica throughput), at "
      "least ", options.min_replicas, ", scale-up at once, scale-down to the highest target of the last ",
      options.scale_down_stabilization / kSecond, " s; models: ", models,
      "; replicas of >= 2 GPUs need NVLink (min-link NV required); fleet: CloudGpuFleet, max ",
      options.max_nodes_per_group, " nodes per group");
}

}  // namespace

std::vector<LlmModelClass> DefaultLlmModelMix() {
  return {
      {"8b", 1, 0.4, 10000, 1500, 0},
      {"13b", 2, 0.3, 8000, 1200, 0.2},
      {"34b", 4, 0.2, 6000, 900, 0.2},
      {"70b", 8, 0.1, 6000, 900, 0.2},
  };
}

absl::StatusOr<Workload> LoadAzureLlm(const AzureLlmOptions& options) {
  if (absl::Status status = CheckOptions(options); !status.ok()) return status;
  std::vector<std::vector<Request>> per_service;
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  int64_t request_count = 0;
  for (const std::string& service : options.services) {
    absl::StatusOr<std::vector<Request>> requests = ReadRequests(
        std::filesystem::path(options.trace_dir) / absl::StrCat("AzureLLMInferenceTrace_", service, ".csv"));
    if (!requests.ok()) return requests.status();
    for (const Request& request : *requests) {
      start = std::min(start, request.unix_millis);
      end = std::max(end, request.unix_millis);
    }
    request_count += static_cast<int64_t>(requests->size());
    per_service.push_back(*std::move(requests));
  }
  if (request_count == 0) return absl::InvalidArgumentError("the Azure LLM trace files hold no requests");
  const auto windows = static_cast<int>((end - start) / options.window + 1);

  Workload workload;
  workload.name = "azure-llm";
  workload.groups = CloudGpuFleet(options.max_nodes_per_group);
  for (size_t s = 0; s < options.services.size(); ++s) {
    const WindowLoad load = SumPerWindow(per_service[s], start, options.window, windows);
    for (const LlmModelClass& model : options.models) {
      AddDeploymentPods(options.services[s], model, Replicas(load, model, options), options, workload.pods);
    }
  }
  SortByArrivalThenName(workload.pods);
  workload.description = Describe(options, request_count, windows);
  return workload;
}

}  // namespace topofit::sim
