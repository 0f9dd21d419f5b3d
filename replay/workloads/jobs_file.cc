#include "replay/workloads/jobs_file.h"

#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "kube/quantity.h"
#include "replay/workloads/csv_table.h"
#include "replay/workloads/pod_order.h"

namespace topofit::sim {
namespace {

constexpr int64_t kMilliPerMebibyte = int64_t{1024} * 1024 * 1000;

struct Columns {
  int submit, pods, gpus, cpu, memory, duration, gang, topology, level;
  int name = -1, comm_fraction = -1, replica = -1;
};

absl::StatusOr<Columns> ColumnsOf(const CsvTable& table) {
  Columns c{};
  for (auto [name, column] : {std::pair{"submit_seconds", &c.submit}, std::pair{"pods", &c.pods},
                              std::pair{"gpus_per_pod", &c.gpus}, std::pair{"cpu", &c.cpu},
                              std::pair{"memory", &c.memory}, std::pair{"duration_seconds", &c.duration},
                              std::pair{"gang", &c.gang}, std::pair{"topology", &c.topology},
                              std::pair{"level", &c.level}}) {
    absl::StatusOr<int> index = table.Column(name);
    if (!index.ok()) return index.status();
    *column = *index;
  }
  for (auto [name, column] : {std::pair{"name", &c.name}, std::pair{"comm_fraction", &c.comm_fraction},
                              std::pair{"replica", &c.replica}}) {
    if (table.HasColumn(name)) *column = *table.Column(name);
  }
  return c;
}

absl::StatusOr<bool> Flag(const CsvTable& table, int row, int column) {
  const absl::string_view text = table.Field(row, column);
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0" || text.empty()) return false;
  return table.RowError(row, absl::StrCat("\"", text, "\" is not true or false"));
}

absl::StatusOr<double> Seconds(const CsvTable& table, int row, int column) {
  double value = 0;
  if (!absl::SimpleAtod(table.Field(row, column), &value) || value < 0) {
    return table.RowError(row, absl::StrCat("\"", table.Field(row, column), "\" is not a number of seconds"));
  }
  return value;
}

absl::StatusOr<int64_t> Quantity(const CsvTable& table, int row, int column, int64_t milli_per_unit) {
  absl::StatusOr<int64_t> milli = kube::ParseQuantityMilli(table.Field(row, column));
  if (!milli.ok() || *milli < 0) {
    return table.RowError(row, absl::StrCat("\"", table.Field(row, column), "\" is not a quantity (\"8\", \"64Gi\")"));
  }
  return *milli / milli_per_unit;
}

// The pods of one row.
absl::Status AddJob(const CsvTable& table, const Columns& c, int row, std::vector<PodSpec>& pods) {
  absl::StatusOr<int64_t> count = table.Int(row, c.pods);
  absl::StatusOr<int64_t> gpus = table.Int(row, c.gpus);
  if (!count.ok()) return count.status();
  if (!gpus.ok()) return gpus.status();
  if (*count < 1 || *count > 10'000 || *gpus < 0 || *gpus > 64) {
    return table.RowError(row, "pods must be 1..10000 and gpus_per_pod 0..64");
  }
  absl::StatusOr<double> submit = Seconds(table, row, c.submit);
  absl::StatusOr<double> duration = Seconds(table, row, c.duration);
  absl::StatusOr<int64_t> cpu = Quantity(table, row, c.cpu, 1);
  absl::StatusOr<int64_t> memory = Quantity(table, row, c.memory, kMilliPerMebibyte);
  absl::StatusOr<bool> gang = Flag(table, row, c.gang);
  absl::StatusOr<bool> replica = c.replica >= 0 ? Flag(table, row, c.replica) : false;
  for (const absl::Status& status : {submit.status(), duration.status(), cpu.status(), memory.status(), gang.status(),
                                     replica.status()}) {
    if (!status.ok()) return status;
  }
  const absl::string_view topology = table.Field(row, c.topology);
  const absl::string_view level = table.Field(row, c.level);
  if (topology != "none" && topology != "preferred" && topology != "required") {
    return table.RowError(row, absl::StrCat("topology \"", topology, "\": none, preferred or required"));
  }
  const bool asks = topology != "none";
  if (asks && level != "node" && level != "domain") {
    return table.RowError(row, absl::StrCat("level \"", level, "\": node or domain"));
  }
  if (asks && !*gang && level == "domain") return table.RowError(row, "a job that is not a gang has no domain to share");
  double comm = asks && *gpus >= 2 ? 0.2 : 0;
  if (c.comm_fraction >= 0 && !table.Field(row, c.comm_fraction).empty() &&
      (!absl::SimpleAtod(table.Field(row, c.comm_fraction), &comm) || comm < 0 || comm > 1)) {
    return table.RowError(row, "comm_fraction must be in [0, 1]");
  }
  const std::string name = c.name >= 0 && !table.Field(row, c.name).empty() ? std::string(table.Field(row, c.name))
                                                                             : absl::StrCat("job-", row + 1);
  for (int64_t i = 0; i < *count; ++i) {
    PodSpec pod;
    pod.name = *count == 1 && !*gang ? name : absl::StrCat(name, "-", i);
    pod.arrival = static_cast<SimTime>(*submit * kSecond);
    pod.duration = static_cast<SimTime>(*duration * kSecond);
    pod.gpus = static_cast<int>(*gpus);
    pod.cpu_milli = *cpu;
    pod.memory_mib = *memory;
    pod.comm_fraction = comm;
    pod.runs_until_deleted = *replica;
    pod.kind = *gang ? "gang" : "job";
    if (*gang) {
      pod.gang = name;
      pod.gang_size = static_cast<int>(*count);
      pod.safe_to_evict = false;
      if (asks) {
        pod.gang_topology = std::string(level);
        pod.gang_topology_required = topology == "required";
      }
    } else if (asks) {
      pod.min_link = "NV";
      pod.topology_policy = std::string(topology);
    }
    pods.push_back(std::move(pod));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Workload> LoadJobsCsv(const std::filesystem::path& path, std::vector<NodeGroupSpec> fleet) {
  absl::StatusOr<CsvTable> table = CsvTable::Read(path);
  if (!table.ok()) return table.status();
  absl::StatusOr<Columns> columns = ColumnsOf(*table);
  if (!columns.ok()) return columns.status();
  Workload workload;
  for (int row = 0; row < table->row_count(); ++row) {
    if (absl::Status added = AddJob(*table, *columns, row, workload.pods); !added.ok()) return added;
  }
  SortByArrivalThenName(workload.pods);
  workload.name = absl::StrCat("jobs:", path.filename().string());
  workload.groups = std::move(fleet);
  workload.description = absl::StrCat(table->row_count(), " jobs from ", path.string(), ", ", workload.pods.size(),
                                      " pods");
  return workload;
}

}  // namespace topofit::sim
