#include "replay/workloads/openb.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "replay/workloads/csv_table.h"
#include "replay/workloads/pod_order.h"

namespace topofit::sim {
namespace {

// What a trace GPU model code becomes. The product is the nvidia.com/gpu.product label of the group's
// nodes, so that topology::TopologyFromLabels picks the catalog shape or the PCIe-only fallback. The
// price is the GPU's on-demand price attached to a GCP N1 VM (us-central1); codes GCP does not offer are
// priced by analogy, as the comments say.
struct GpuModel {
  absl::string_view code;
  absl::string_view product;
  double price_per_gpu_hour;
};

constexpr GpuModel kGpuModels[] = {
    // The 1- and 2-GPU P100 servers are PCIe boards; only the 8-GPU DGX-1 is SXM2.
    {"P100", "Tesla-P100-PCIE-16GB", 1.46},
    {"T4", "Tesla-T4", 0.35},
    {"V100M16", "Tesla-V100-SXM2-16GB", 2.48},
    // GCP's V100 is the 16 GB part; the 32 GB one is priced the same.
    {"V100M32", "Tesla-V100-SXM2-32GB", 2.48},
    // Not on GCP: AWS g5.xlarge (1x A10G, $1.006) less its host at the rates below.
    {"A10", "NVIDIA-A10", 0.80},
    // Undisclosed Alibaba codes: labelled as themselves (unknown to the catalog, so PCIe-only), priced as
    // an inference card (G2, T4-class) and a larger one (G3, A10-class). A guess, stated as one.
    {"G2", "G2", 0.35},
    {"G3", "G3", 0.80},
};

// GCP N1 custom machine, us-central1 on-demand: the host part of every openb node's price.
constexpr double kPricePerVcpuHour = 0.033174;
constexpr double kPricePerGibHour = 0.004446;

// The (model, GPUs per node) pairs a catalog shape fits: the same GPUs, the same count, the same board.
struct CatalogFit {
  absl::string_view code;
  int gpus;
  absl::string_view shape;
};
constexpr CatalogFit kCatalogFits[] = {
    {"V100M16", 8, "p3.16xlarge"},
    {"V100M32", 8, "p3dn.24xlarge"},
    {"T4", 4, "g4dn.12xlarge"},
};

const GpuModel* FindGpuModel(absl::string_view code) {
  for (const GpuModel& model : kGpuModels) {
    if (model.code == code) return &model;
  }
  return nullptr;
}

absl::string_view CatalogShapeFor(absl::string_view code, int gpus) {
  for (const CatalogFit& fit : kCatalogFits) {
    if (fit.code == code && fit.gpus == gpus) return fit.shape;
  }
  return "";
}

bool IsAbsent(absl::string_view field) { return field.empty() || field == "nan"; }

// One group per distinct node of the trace: GPU model, GPUs, CPU and memory. CA's node groups hold
// identical nodes, and a group sized to the smallest variant would refuse pods the real cluster ran.
using NodeKey = std::tuple<std::string, int, int64_t, int64_t>;

absl::StatusOr<std::vector<NodeGroupSpec>> LoadNodeGroups(const OpenbOptions& options) {
  absl::StatusOr<CsvTable> table = CsvTable::Read(std::filesystem::path(options.trace_dir) / options.node_list);
  if (!table.ok()) return table.status();
  absl::StatusOr<int> cpu = table->Column("cpu_milli");
  absl::StatusOr<int> memory = table->Column("memory_mib");
  absl::StatusOr<int> gpu = table->Column("gpu");
  absl::StatusOr<int> model = table->Column("model");
  for (const auto* column : {&cpu, &memory, &gpu, &model}) {
    if (!column->ok()) return column->status();
  }
  std::map<NodeKey, int> counts;
  for (int row = 0; row < table->row_count(); ++row) {
    absl::StatusOr<int64_t> node_cpu = table->Int(row, *cpu);
    absl::StatusOr<int64_t> node_memory = table->Int(row, *memory);
    absl::StatusOr<int64_t> node_gpus = table->Int(row, *gpu);
    for (const auto* value : {&node_cpu, &node_memory, &node_gpus}) {
      if (!value->ok()) return value->status();
    }
    std::string code(IsAbsent(table->Field(row, *model)) ? "" : table->Field(row, *model));
    if (*node_gpus < 0 || *node_gpus > 16 || (*node_gpus > 0) == code.empty()) {
      return table->RowError(row, "a node needs a GPU model exactly when it has GPUs (0..16)");
    }
    if (!code.empty() && FindGpuModel(code) == nullptr) {
      return table->RowError(row, absl::StrCat("unknown GPU model \"", code, "\""));
    }
    ++counts[NodeKey{code, static_cast<int>(*node_gpus), *node_cpu, *node_memory}];
  }

  std::vector<NodeGroupSpec> groups;
  for (const auto& [key, count] : counts) {
    const auto& [code, gpus, cpu_milli, memory_mib] = key;
    NodeGroupSpec group;
    group.name = absl::StrFormat("openb-%s-%dgpu-%dc-%dgi", code.empty() ? "cpu" : absl::AsciiStrToLower(code),
                                 gpus, cpu_milli / 1000, memory_mib / 1024);
    group.gpus = gpus;
    group.cpu_milli = cpu_milli;
    group.memory_mib = memory_mib;
    group.max_size = count;
    group.initial_size = options.initial_size_from_trace ? count : 0;
    group.price_per_hour = cpu_milli / 1000.0 * kPricePerVcpuHour + memory_mib / 1024.0 * kPricePerGibHour;
    if (const GpuModel* gpu_model = FindGpuModel(code)) {
      group.gpu_product = std::string(gpu_model->product);
      group.shape = std::string(CatalogShapeFor(code, gpus));
      group.price_per_hour += gpus * gpu_model->price_per_gpu_hour;
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

// The pod list's columns; the time columns are absent from the lists the FGD authors resampled.
struct PodColumns {
  int name, cpu_milli, memory_mib, num_gpu, gpu_milli;
  std::optional<int> gpu_spec;
  std::optional<int> creation, deletion, scheduled;
};

absl::StatusOr<PodColumns> FindPodColumns(const CsvTable& table) {
  PodColumns columns{};
  const std::pair<const char*, int*> required[] = {{"name", &columns.name},
                                                   {"cpu_milli", &columns.cpu_milli},
                                                   {"memory_mib", &columns.memory_mib},
                                                   {"num_gpu", &columns.num_gpu},
                                                   {"gpu_milli", &columns.gpu_milli}};
  for (const auto& [name, index] : required) {
    absl::StatusOr<int> column = table.Column(name);
    if (!column.ok()) return column.status();
    *index = *column;
  }
  if (table.HasColumn("gpu_spec")) columns.gpu_spec = *table.Column("gpu_spec");
  if (table.HasColumn("creation_time")) {
    for (const auto& [name, index] : {std::pair{"creation_time", &columns.creation},
                                      std::pair{"deletion_time", &columns.deletion},
                                      std::pair{"scheduled_time", &columns.scheduled}}) {
      absl::StatusOr<int> column = table.Column(name);
      if (!column.ok()) return column.status();
      *index = *column;
    }
  }
  return columns;
}

// What the description reports about rows the loader had to interpret.
struct PodListNotes {
  int shared_gpu = 0;       // gpu_milli < 1000, rounded up to a whole GPU
  int never_scheduled = 0;  // no scheduled_time: run from creation to deletion
  int negative_duration = 0;
};

// Milliseconds divided by the time compression, rounded to the nearest.
SimTime Compressed(int64_t milliseconds, double compression) {
  return static_cast<SimTime>(std::llround(static_cast<double>(milliseconds) / compression));
}

absl::Status SetTimes(const CsvTable& table, int row, const PodColumns& columns, const OpenbOptions& options,
                      PodSpec& pod, PodListNotes& notes) {
  // The trace's times are seconds. A pod runs at least 1 ms, so that it has an end event after its start.
  SimTime arrival = row * options.fixed_interarrival;
  SimTime duration = options.untimed_duration;
  if (columns.creation) {
    absl::StatusOr<int64_t> creation = table.Int(row, *columns.creation);
    absl::StatusOr<int64_t> deletion = table.Int(row, *columns.deletion);
    if (!creation.ok()) return creation.status();
    if (!deletion.ok()) return deletion.status();
    int64_t start = *creation;
    if (IsAbsent(table.Field(row, *columns.scheduled))) {
      ++notes.never_scheduled;
    } else {
      absl::StatusOr<int64_t> scheduled = table.Int(row, *columns.scheduled);
      if (!scheduled.ok()) return scheduled.status();
      start = *scheduled;
    }
    if (*deletion < start) ++notes.negative_duration;
    duration = std::max<int64_t>(*deletion - start, 0) * kSecond;
    if (options.fixed_interarrival == 0) arrival = *creation * kSecond;
  } else if (options.fixed_interarrival == 0) {
    return table.RowError(row, "this pod list has no times: set fixed_interarrival to submit pods in order");
  }
  pod.arrival = Compressed(arrival, options.time_compression);
  pod.duration = std::max<SimTime>(Compressed(duration, options.time_compression), 1);
  return absl::OkStatus();
}

absl::Status SetResources(const CsvTable& table, int row, const PodColumns& columns, const OpenbOptions& options,
                          PodSpec& pod, PodListNotes& notes) {
  absl::StatusOr<int64_t> cpu = table.Int(row, columns.cpu_milli);
  absl::StatusOr<int64_t> memory = table.Int(row, columns.memory_mib);
  absl::StatusOr<int64_t> gpus = table.Int(row, columns.num_gpu);
  absl::StatusOr<int64_t> gpu_milli = table.Int(row, columns.gpu_milli);
  for (const auto* value : {&cpu, &memory, &gpus, &gpu_milli}) {
    if (!value->ok()) return value->status();
  }
  if (*cpu < 0 || *memory < 0 || *gpus < 0 || *gpus > 16 || *gpu_milli < 0 || *gpu_milli > 1000) {
    return table.RowError(row, "cpu_milli, memory_mib, num_gpu (0..16) or gpu_milli (0..1000) out of range");
  }
  pod.cpu_milli = *cpu;
  pod.memory_mib = *memory;
  pod.gpus = static_cast<int>(*gpus);
  if (pod.gpus == 1 && *gpu_milli < 1000) ++notes.shared_gpu;
  if (pod.gpus >= 2) {
    pod.min_link = "NV";
    pod.topology_policy = options.multi_gpu_nv_required ? "required" : "preferred";
    pod.comm_fraction = options.multi_gpu_comm_fraction;
  }
  if (columns.gpu_spec && !IsAbsent(table.Field(row, *columns.gpu_spec))) {
    for (absl::string_view code : absl::StrSplit(table.Field(row, *columns.gpu_spec), '|')) {
      const GpuModel* model = FindGpuModel(code);
      pod.gpu_products.emplace_back(model != nullptr ? model->product : code);
    }
  }
  return absl::OkStatus();
}

std::string Describe(const OpenbOptions& options, int pods, const PodListNotes& notes) {
  return absl::StrCat(
      "Alibaba GPU 2023 openb trace, ", options.pod_list, " (", pods, " pods) on ", options.node_list,
      "; one node group per distinct node (GPU model, GPUs, CPU, memory), max = the trace's count, initial ",
      options.initial_size_from_trace ? "= max" : "0", "; ", notes.shared_gpu,
      " GPU-sharing pods (gpu_milli < 1000) request one whole GPU; ", notes.never_scheduled,
      " pods never scheduled in the trace run from creation to deletion; ", notes.negative_duration,
      " pods deleted before they started run 1 ms; ",
      options.fixed_interarrival > 0
          ? absl::StrCat("submitted in file order every ", options.fixed_interarrival, " ms")
          : std::string("arrival = creation_time"),
      ", times divided by ", options.time_compression, "; pods with >= 2 GPUs: min-link NV ",
      options.multi_gpu_nv_required ? "required" : "preferred", ", comm_fraction ",
      options.multi_gpu_comm_fraction);
}

}  // namespace

absl::StatusOr<Workload> LoadOpenb(const OpenbOptions& options) {
  if (!(options.time_compression > 0) || options.fixed_interarrival < 0) {
    return absl::InvalidArgumentError("time_compression must be > 0 and fixed_interarrival >= 0");
  }
  absl::StatusOr<std::vector<NodeGroupSpec>> groups = LoadNodeGroups(options);
  if (!groups.ok()) return groups.status();
  absl::StatusOr<CsvTable> table = CsvTable::Read(std::filesystem::path(options.trace_dir) / options.pod_list);
  if (!table.ok()) return table.status();
  absl::StatusOr<PodColumns> columns = FindPodColumns(*table);
  if (!columns.ok()) return columns.status();

  Workload workload;
  workload.name = absl::StrCat("openb:", options.pod_list);
  workload.groups = *std::move(groups);
  workload.pods.reserve(table->row_count());
  PodListNotes notes;
  for (int row = 0; row < table->row_count(); ++row) {
    PodSpec pod;
    pod.name = std::string(table->Field(row, columns->name));
    pod.kind = "trace";
    if (absl::Status status = SetTimes(*table, row, *columns, options, pod, notes); !status.ok()) return status;
    if (absl::Status status = SetResources(*table, row, *columns, options, pod, notes); !status.ok()) return status;
    workload.pods.push_back(std::move(pod));
  }
  SortByArrivalThenName(workload.pods);
  workload.description = Describe(options, table->row_count(), notes);
  return workload;
}

}  // namespace topofit::sim
