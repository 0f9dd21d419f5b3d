#include "agent/gpu_discovery.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "codec/topology_json.h"
#include "topology/nvidia_smi.h"

namespace topofit::agent {
namespace {

constexpr absl::string_view kQueryFlag = "--query-gpu=index,uuid,name,pci.bus_id,memory.total";
constexpr absl::string_view kFormatFlag = "--format=csv,noheader";

absl::Status RowError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("nvidia-smi --query-gpu, line ", line, ": ", what));
}

// How nvidia-smi fills a field it could not read.
bool IsErrorValue(absl::string_view value) {
  return absl::StartsWith(value, "[") || value == "ERR!" || absl::StrContains(value, "Unknown Error");
}

}  // namespace

absl::StatusOr<std::vector<QueriedGpu>> ParseGpuQuery(absl::string_view csv) {
  std::vector<QueriedGpu> gpus;
  std::set<int> indices;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(csv, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);  // CRLF too
    if (line.empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ',');
    if (fields.size() != 5) return RowError(line_number, absl::StrCat("expected 5 fields, found ", fields.size()));
    for (absl::string_view& field : fields) field = absl::StripAsciiWhitespace(field);
    QueriedGpu gpu;
    if (!absl::SimpleAtoi(fields[0], &gpu.index) || gpu.index < 0) {
      return RowError(line_number, absl::StrCat("index \"", fields[0], "\" is not a GPU index"));
    }
    if (!indices.insert(gpu.index).second) return RowError(line_number, absl::StrCat("index ", gpu.index, " repeats"));
    if (!absl::StartsWith(fields[1], "GPU-") || fields[1].size() < 5) {
      return RowError(line_number, absl::StrCat("uuid \"", fields[1], "\" is not GPU-..."));
    }
    gpu.uuid = std::string(fields[1]);
    gpu.name = std::string(fields[2]);
    gpu.pci_bus_id = std::string(fields[3]);
    absl::string_view memory = fields[4];
    gpu.error = IsErrorValue(fields[2]) || IsErrorValue(fields[3]) || IsErrorValue(memory);
    if (absl::ConsumeSuffix(&memory, " MiB") && !absl::SimpleAtoi(memory, &gpu.memory_mib)) {
      return RowError(line_number, absl::StrCat("memory \"", fields[4], "\" is not \"<n> MiB\""));
    }
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) return absl::InvalidArgumentError("nvidia-smi --query-gpu: no GPUs listed");
  std::sort(gpus.begin(), gpus.end(), [](const QueriedGpu& a, const QueriedGpu& b) { return a.index < b.index; });
  return gpus;
}

absl::StatusOr<NodeGpus> BuildNodeGpus(absl::string_view query_csv, absl::string_view topo_text) {
  absl::StatusOr<std::vector<QueriedGpu>> queried = ParseGpuQuery(query_csv);
  if (!queried.ok()) return queried.status();
  // A health check may miss a GPU; the node's topology needs every index, as topo -m numbers them.
  if (queried->back().index != static_cast<int>(queried->size()) - 1) {
    return absl::InvalidArgumentError(absl::StrCat("nvidia-smi --query-gpu: indices are not 0..", queried->size() - 1,
                                                   " (largest ", queried->back().index, ")"));
  }
  topology::NvidiaSmiHints hints;
  if (!queried->front().error) hints.product = queried->front().name;
  absl::StatusOr<topology::Topology> links = topology::ParseNvidiaSmiTopo(topo_text, hints);
  if (!links.ok()) return links.status();
  if (links->gpu_count() != static_cast<int>(queried->size())) {
    return absl::InvalidArgumentError(absl::StrCat("nvidia-smi lists ", queried->size(), " GPUs but topo -m shows ",
                                                   links->gpu_count()));
  }
  // The descriptor is the one place a topology takes UUIDs, addresses and memory beside the links; reading
  // it back also proves that what is published parses.
  nlohmann::json descriptor = codec::TopologyToJson(*links);
  for (const QueriedGpu& gpu : *queried) {
    nlohmann::json& entry = descriptor["gpus"][static_cast<size_t>(gpu.index)];
    entry["uuid"] = gpu.uuid;
    if (!gpu.error) entry["pciBusId"] = gpu.pci_bus_id;
    if (gpu.memory_mib > 0) entry["memoryMiB"] = gpu.memory_mib;
  }
  absl::StatusOr<topology::Topology> topology = codec::ParseTopologyDescriptor(descriptor.dump());
  if (!topology.ok()) return topology.status();
  return NodeGpus{*std::move(queried), *std::move(topology)};
}

absl::StatusOr<std::string> GpuDiscovery::RunQuery() {
  return runner_.Run({nvidia_smi_, std::string(kQueryFlag), std::string(kFormatFlag)});
}

absl::StatusOr<NodeGpus> GpuDiscovery::Discover() {
  absl::StatusOr<std::string> query = RunQuery();
  if (!query.ok()) return absl::Status(query.status().code(), absl::StrCat("nvidia-smi --query-gpu: ", query.status().message()));
  absl::StatusOr<std::string> topo = runner_.Run({nvidia_smi_, "topo", "-m"});
  if (!topo.ok()) return absl::Status(topo.status().code(), absl::StrCat("nvidia-smi topo -m: ", topo.status().message()));
  return BuildNodeGpus(*query, *topo);
}

absl::StatusOr<std::vector<QueriedGpu>> GpuDiscovery::Query() {
  absl::StatusOr<std::string> query = RunQuery();
  if (!query.ok()) return absl::Status(query.status().code(), absl::StrCat("nvidia-smi --query-gpu: ", query.status().message()));
  return ParseGpuQuery(*query);
}

std::vector<bool> HealthAfterCheck(const std::vector<QueriedGpu>& known,
                                   const absl::StatusOr<std::vector<QueriedGpu>>& now) {
  std::vector<bool> healthy(known.size(), false);
  if (!now.ok()) return healthy;
  for (size_t i = 0; i < known.size(); ++i) {
    for (const QueriedGpu& gpu : *now) {
      if (gpu.uuid == known[i].uuid) healthy[i] = !gpu.error;
    }
  }
  return healthy;
}

}  // namespace topofit::agent
