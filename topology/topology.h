#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "topology/gpu_set.h"
#include "topology/ids.h"
#include "topology/link.h"

namespace topofit::topology {

class SetQualityTable;

// The largest NUMA node id a topology carries: more than any kernel numbers (Linux allows at most 1,024
// nodes) and every id nvidia-smi's cells give (6 digits), so a topology parsed from nvidia-smi text always
// survives the descriptor, which reads the same bound (issue 15: it refused ids from 4,096 on).
inline constexpr int kMaxNumaNode = (1 << 20) - 1;

struct GpuInfo {
  GpuId id;
  std::string uuid;          // "GPU-8f6c..." when known
  std::string product;       // GFD form, e.g. "NVIDIA-H100-80GB-HBM3"
  int64_t memory_mib = 0;    // 0 when unknown
  int numa_node = -1;        // -1 when unknown
  std::string pci_bus_id;    // "00000000:18:00.0" when known
};

struct NicInfo {
  NicId id;
  std::string name;          // "mlx5_0"; empty when the source has no NIC legend
  int numa_node = -1;
};

// Everything a source (nvidia-smi text, a JSON descriptor, the catalog) says about one node. Plain data;
// Topology::Create checks it.
struct TopologySpec {
  std::vector<GpuInfo> gpus;
  std::vector<NicInfo> nics;
  std::vector<std::vector<Link>> gpu_links;  // gpus x gpus, symmetric, kSelf on the diagonal
  std::vector<std::vector<Link>> nic_links;  // nics x gpus
  int nvlink_generation = 0;                 // 0: unknown (the slowest generation is assumed)
  int pcie_generation = 3;
  std::optional<DomainId> domain;            // multi-node NVLink domain (NVL72 clique)
  std::string source;                        // "nvidia-smi", "catalog:dgx-a100", "json", "fallback"
  std::vector<std::string> warnings;         // assumptions the source had to make, shown to users
};

// A vertex of the device graph: a GPU or a NIC with its index among devices of its kind.
struct Device {
  enum class Kind : uint8_t { kGpu, kNic };
  Kind kind = Kind::kGpu;
  int index = 0;
};

// GPUs and NICs as vertices (GPUs first, vertex i is GPU i; NIC j is vertex gpu_count + j); one edge per
// connected pair, carrying its Link. Every GPU pair has an edge, since every pair has a path class.
using DeviceGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Device, Link>;

// The GPU topology of one node: immutable, cheap to copy (shared state), safe to share across threads.
class Topology {
 public:
  // Validates the spec (1..kMaxGpusPerNode GPUs, square symmetric matrix, positive NVLink counts, ...)
  // and precomputes the per-subset quality table the allocator reads.
  static absl::StatusOr<Topology> Create(TopologySpec spec);

  int gpu_count() const { return static_cast<int>(state_->spec.gpus.size()); }
  GpuSet all_gpus() const { return GpuSet::FirstN(gpu_count()); }
  const GpuInfo& gpu(GpuId id) const { return state_->spec.gpus[id.value]; }
  const std::vector<GpuInfo>& gpus() const { return state_->spec.gpus; }
  const std::vector<NicInfo>& nics() const { return state_->spec.nics; }
  const Link& link(GpuId a, GpuId b) const { return state_->spec.gpu_links[a.value][b.value]; }
  const Link& nic_link(NicId nic, GpuId gpu) const { return state_->spec.nic_links[nic.value][gpu.value]; }
  // Peer-to-peer bandwidth per direction between two GPUs (bandwidth.h).
  int64_t pair_bandwidth_mbps(GpuId a, GpuId b) const {
    return state_->pair_mbps[a.value * gpu_count() + b.value];
  }
  int nvlink_generation() const { return state_->spec.nvlink_generation; }
  int pcie_generation() const { return state_->spec.pcie_generation; }
  bool has_nvswitch() const;
  const std::optional<DomainId>& domain() const { return state_->spec.domain; }
  const std::string& source() const { return state_->spec.source; }
  const std::vector<std::string>& warnings() const { return state_->spec.warnings; }
  const DeviceGraph& graph() const { return state_->graph; }
  const SetQualityTable& quality() const { return *state_->quality; }

  // Maximal groups of GPUs joined by NVLink paths (connected components of the NVLink edges), each in
  // ascending order, ordered by their smallest GPU.
  std::vector<GpuSet> NvLinkIslands() const;

 private:
  struct State {
    TopologySpec spec;
    std::vector<int64_t> pair_mbps;
    DeviceGraph graph;
    std::shared_ptr<const SetQualityTable> quality;
  };
  explicit Topology(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

// A spec for `gpu_count` GPUs of `product`, every pair joined by `link`: the building block of the catalog,
// the conservative fallback and tests.
TopologySpec UniformSpec(int gpu_count, const Link& link, std::string product);

// A spec from rows of `nvidia-smi topo -m` tokens, one string per GPU ("X NV1 NV1 NV2 SYS ..."). The
// matrix is checked by Topology::Create, not here.
absl::StatusOr<TopologySpec> MatrixSpec(const std::vector<absl::string_view>& rows, std::string product);

// Marks NVLink pairs as going through an NVSwitch when the matrix can only mean a switch: every pair of
// GPUs shows the same NV# and a GPU would need more direct links ((n-1) x #) than it has. `nvlinks_per_gpu`
// is the product's count, or 0 when unknown (then the most any product has, 18, is assumed).
void InferNvSwitch(TopologySpec& spec, int nvlinks_per_gpu);

}  // namespace topofit::topology
