#include "topology/topology.h"

#include <functional>

#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "topology/bandwidth.h"
#include "topology/set_quality.h"

namespace topofit::topology {
namespace {

absl::Status Validate(const TopologySpec& spec) {
  const int n = static_cast<int>(spec.gpus.size());
  if (n < 1 || n > kMaxGpusPerNode) {
    return absl::InvalidArgumentError(
        absl::StrCat("a node must have 1 to ", kMaxGpusPerNode, " GPUs, this one has ", n));
  }
  if (static_cast<int>(spec.gpu_links.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("link matrix has ", spec.gpu_links.size(), " rows for ", n, " GPUs"));
  }
  for (int a = 0; a < n; ++a) {
    if (spec.gpus[a].id.value != a) {
      return absl::InvalidArgumentError(
          absl::StrCat("GPU ", a, " is numbered ", spec.gpus[a].id.value, "; GPUs must be 0..", n - 1));
    }
    if (static_cast<int>(spec.gpu_links[a].size()) != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("link matrix row GPU", a, " has ", spec.gpu_links[a].size(), " entries for ", n, " GPUs"));
    }
    for (int b = 0; b < n; ++b) {
      const Link& link = spec.gpu_links[a][b];
      const std::string pair = absl::StrCat("GPU", a, "-GPU", b);
      if ((a == b) != (link.link_class == LinkClass::kSelf)) {
        return absl::InvalidArgumentError(
            a == b ? absl::StrCat(pair, " must be X (self)") : absl::StrCat(pair, " cannot be X (self)"));
      }
      if (link.link_class == LinkClass::kNvLink && link.nvlinks <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(pair, " is NVLink with no links"));
      }
      if (!(link == spec.gpu_links[b][a])) {
        return absl::InvalidArgumentError(absl::StrCat(pair, " is ", LinkToken(link), " but GPU", b, "-GPU", a,
                                                       " is ", LinkToken(spec.gpu_links[b][a])));
      }
    }
  }
  if (spec.nic_links.size() != spec.nics.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(spec.nics.size(), " NICs but ", spec.nic_links.size(), " NIC link rows"));
  }
  for (size_t j = 0; j < spec.nic_links.size(); ++j) {
    if (static_cast<int>(spec.nic_links[j].size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat("NIC", j, " has links to ", spec.nic_links[j].size(),
                                                     " GPUs, the node has ", n));
    }
  }
  if (spec.nvlink_generation < 0 || spec.nvlink_generation > 5) {
    return absl::InvalidArgumentError(absl::StrCat("unknown NVLink generation ", spec.nvlink_generation));
  }
  if (spec.pcie_generation < 1 || spec.pcie_generation > 6) {
    return absl::InvalidArgumentError(absl::StrCat("unknown PCIe generation ", spec.pcie_generation));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Topology> Topology::Create(TopologySpec spec) {
  if (absl::Status status = Validate(spec); !status.ok()) return status;
  auto state = std::make_shared<State>();
  const int n = static_cast<int>(spec.gpus.size());

  state->pair_mbps.resize(n * n);
  std::vector<LinkClass> classes(n * n);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const Link& link = spec.gpu_links[a][b];
      state->pair_mbps[a * n + b] = PairBandwidthMbps(link, spec.nvlink_generation, spec.pcie_generation);
      classes[a * n + b] = link.link_class;
    }
  }

  DeviceGraph& graph = state->graph;
  for (int a = 0; a < n; ++a) boost::add_vertex(Device{Device::Kind::kGpu, a}, graph);
  for (size_t j = 0; j < spec.nics.size(); ++j) {
    boost::add_vertex(Device{Device::Kind::kNic, static_cast<int>(j)}, graph);
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) boost::add_edge(a, b, spec.gpu_links[a][b], graph);
  }
  for (size_t j = 0; j < spec.nics.size(); ++j) {
    for (int a = 0; a < n; ++a) boost::add_edge(n + j, a, spec.nic_links[j][a], graph);
  }

  state->quality = std::make_shared<const SetQualityTable>(SetQualityTable::Build(n, state->pair_mbps, classes));
  state->spec = std::move(spec);
  return Topology(std::move(state));
}

bool Topology::has_nvswitch() const {
  for (const auto& row : state_->spec.gpu_links) {
    for (const Link& link : row) {
      if (link.via_nvswitch) return true;
    }
  }
  return false;
}

std::vector<GpuSet> Topology::NvLinkIslands() const {
  const DeviceGraph& graph = state_->graph;
  auto is_nvlink = [&graph](DeviceGraph::edge_descriptor e) {
    return graph[e].link_class == LinkClass::kNvLink;
  };
  auto is_gpu = [&graph](DeviceGraph::vertex_descriptor v) { return graph[v].kind == Device::Kind::kGpu; };
  boost::filtered_graph<DeviceGraph, std::function<bool(DeviceGraph::edge_descriptor)>,
                        std::function<bool(DeviceGraph::vertex_descriptor)>>
      nvlink_only(graph, is_nvlink, is_gpu);
  std::vector<int> component(boost::num_vertices(graph), -1);
  const int islands = boost::connected_components(nvlink_only, component.data());
  std::vector<GpuSet> out(islands);
  for (int a = 0; a < gpu_count(); ++a) out[component[a]] = out[component[a]].with(GpuId{a});
  // connected_components numbers components in vertex order, so `out` is already ordered by smallest GPU.
  return out;
}

TopologySpec UniformSpec(int gpu_count, const Link& link, std::string product) {
  TopologySpec spec;
  for (int a = 0; a < gpu_count; ++a) {
    GpuInfo gpu;
    gpu.id = GpuId{a};
    gpu.product = product;
    spec.gpus.push_back(std::move(gpu));
  }
  spec.gpu_links.assign(gpu_count, std::vector<Link>(gpu_count, link));
  for (int a = 0; a < gpu_count; ++a) spec.gpu_links[a][a] = Link{LinkClass::kSelf, 0, false};
  return spec;
}

absl::StatusOr<TopologySpec> MatrixSpec(const std::vector<absl::string_view>& rows, std::string product) {
  TopologySpec spec = UniformSpec(static_cast<int>(rows.size()), Link{}, std::move(product));
  for (size_t a = 0; a < rows.size(); ++a) {
    std::vector<absl::string_view> tokens = absl::StrSplit(rows[a], ' ', absl::SkipEmpty());
    if (tokens.size() != rows.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("row GPU", a, " has ", tokens.size(), " entries for ", rows.size(), " GPUs"));
    }
    for (size_t b = 0; b < tokens.size(); ++b) {
      absl::StatusOr<Link> link = ParseLinkToken(tokens[b]);
      if (!link.ok()) return link.status();
      spec.gpu_links[a][b] = *link;
    }
  }
  return spec;
}

void InferNvSwitch(TopologySpec& spec, int nvlinks_per_gpu) {
  constexpr int kMostNvLinksPerGpu = 18;  // H100, H200, B200, GB200
  const int n = static_cast<int>(spec.gpus.size());
  if (n < 3 || spec.gpu_links.size() != static_cast<size_t>(n)) return;
  const Link first = spec.gpu_links[0][1];
  if (first.link_class != LinkClass::kNvLink) return;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b && !(spec.gpu_links[a][b] == first)) return;
    }
  }
  const int available = nvlinks_per_gpu > 0 ? nvlinks_per_gpu : kMostNvLinksPerGpu;
  if ((n - 1) * first.nvlinks <= available) return;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b) spec.gpu_links[a][b].via_nvswitch = true;
    }
  }
}

}  // namespace topofit::topology
