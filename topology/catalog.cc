#include "topology/catalog.h"

#include <optional>
#include <span>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "topology/products.h"
#include "topology/quoted.h"

namespace topofit::topology {
namespace {

// How a shape's GPUs are joined.
enum class Fabric : uint8_t {
  kMatrix,    // an `nvidia-smi topo -m` token matrix (NVLink meshes, bridges)
  kNvSwitch,  // every pair NV# through NVSwitches
  kPcie,      // PCIe only: `same_numa` between GPUs of one NUMA node, SYS across NUMA nodes
};

struct Shape {
  absl::string_view name;
  absl::string_view product;  // GFD `nvidia.com/gpu.product` form of the shape's usual GPU
  int gpus = 0;
  // GPUs are numbered NUMA node by NUMA node: 0..k-1 on node 0, k..2k-1 on node 1, ...
  int gpus_per_numa = 0;
  Fabric fabric = Fabric::kPcie;
  std::span<const absl::string_view> rows = {};  // kMatrix
  int nvlinks = 0;                                // kNvSwitch
  LinkClass same_numa = LinkClass::kPhb;          // kPcie
  // The product and count alone identify this board: SXM parts only come on their vendor's baseboard and
  // A10G only in AWS instances. General PCIe cards (L40S, L4, T4, RTX 8000) go into servers of every
  // layout, with or without bridges, so their product label alone must not promise this shape's links.
  bool product_identifies_board = false;
};

// DGX-1 (P100): hybrid cube-mesh, one NVLink per connected pair (4 per GPU); the pairs without NVLink sit
// on the other CPU's half ({0-3}, {4-7}). NVIDIA DGX-1 System Architecture whitepaper (WP-08437-001),
// pairs as NVIDIA's DGX-1 whitepaper lists them (docs/catalog.md).
constexpr absl::string_view kDgx1P100[] = {
    "X   NV1 NV1 NV1 NV1 SYS SYS SYS",  //
    "NV1 X   NV1 NV1 SYS NV1 SYS SYS",  //
    "NV1 NV1 X   NV1 SYS SYS NV1 SYS",  //
    "NV1 NV1 NV1 X   SYS SYS SYS NV1",  //
    "NV1 SYS SYS SYS X   NV1 NV1 NV1",  //
    "SYS NV1 SYS SYS NV1 X   NV1 NV1",  //
    "SYS SYS NV1 SYS NV1 NV1 X   NV1",  //
    "SYS SYS SYS NV1 NV1 NV1 NV1 X  ",
};

// DGX-1 (V100) and AWS p3.16xlarge: the same cube-mesh with six links per GPU, some pairs doubled. The
// commonly published `nvidia-smi topo -m`; cross-checked against the NCCL topology dump of a DGX-1 V100 in
// NVIDIA/nccl#671 (GPU0: one link each to GPU1 and GPU2, two each to GPU3 and GPU4; GPU1: two to GPU2 and
// GPU5, one to GPU3). Every row sums to six links. Other enumerations of the same board exist (e.g.
// NVIDIA/nccl-tests#29 numbers the GPUs differently); the allocator only cares about the graph.
constexpr absl::string_view kDgx1V100[] = {
    "X   NV1 NV1 NV2 NV2 SYS SYS SYS",  //
    "NV1 X   NV2 NV1 SYS NV2 SYS SYS",  //
    "NV1 NV2 X   NV2 SYS SYS NV1 SYS",  //
    "NV2 NV1 NV2 X   SYS SYS SYS NV1",  //
    "NV2 SYS SYS SYS X   NV1 NV1 NV2",  //
    "SYS NV2 SYS SYS NV1 X   NV2 NV1",  //
    "SYS SYS NV1 SYS NV1 NV2 X   NV2",  //
    "SYS SYS SYS NV1 NV2 NV1 NV2 X  ",
};

// Four Quadro RTX 8000 in a two-socket workstation, GPUs 0-1 on one CPU and 2-3 on the other, two 2-link
// NVLink bridges joining 0-3 and 1-2 (docs/catalog.md). Bridged pairs may span sockets: slot
// adjacency, not bus order, decides where a bridge fits. A representative layout, not one vendor's board.
constexpr absl::string_view kRtx8000NvLink4x[] = {
    "X    NODE SYS  NV2 ",  //
    "NODE X    NV2  SYS ",  //
    "SYS  NV2  X    NODE",  //
    "NV2  SYS  NODE X   ",
};

// NUMA placement and NV# of the NVSwitch shapes: GPUs 0-3 on the first socket, 4-7 on the second,
// as `nvidia-smi topo -m` shows on HGX H100 (NVIDIA/nccl#1453) and HGX B200 (the-dsvolk.github.io B200
// explorer); DGX-2 has GPUs 0-7 on the first socket (NVIDIA/nccl-tests#78); a GB200 compute tray has GPUs
// 0-1 on the first Grace and 2-3 on the second (NVIDIA/k8s-test-infra#371). NV# per pair: DGX-2 NV6
// (nccl-tests#78), DGX A100 NV12 (NVIDIA/nccl#1505), Hopper and Blackwell NV18 (nccl#1453,
// k8s-test-infra#371).
//
// PCIe-only AWS shapes. AWS attaches each GPU directly to the guest's root complex, with no PCIe switch:
// aws/aws-ofi-nccl topology/g5.48xl-topo.xml puts the g5.48xlarge GPUs at 00:16.0-00:19.0 on NUMA node 0
// and 00:1a.0-00:1d.0 on node 1, and an AWS maintainer describes the single-socket g5 sizes as "only one
// NUMA node, and all the GPUs are directly connected to the socket's root complex" (aws/aws-ofi-nccl#466;
// a SageMaker 4x T4 instance lists its T4s at 00:1b.0, 00:1c.0, ..., aws/sagemaker-huggingface-inference-toolkit
// #103, so g4dn.12xlarge is taken to match). Two GPUs under one host bridge are PHB in `nvidia-smi`
// terms, so PHB within a NUMA node and SYS across. g6.48xlarge and g6e.48xlarge have no published topology
// file; they are the same Nitro two-socket 4+4 design, so they take g5.48xlarge's classes by analogy.
constexpr Shape kShapes[] = {
    {.name = "dgx1-p100", .product = "Tesla-P100-SXM2-16GB", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kMatrix, .rows = kDgx1P100, .product_identifies_board = true},
    {.name = "dgx1-v100", .product = "Tesla-V100-SXM2-16GB", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kMatrix, .rows = kDgx1V100, .product_identifies_board = true},
    {.name = "dgx2", .product = "Tesla-V100-SXM3-32GB", .gpus = 16, .gpus_per_numa = 8,
     .fabric = Fabric::kNvSwitch, .nvlinks = 6, .product_identifies_board = true},
    {.name = "dgx-a100", .product = "NVIDIA-A100-SXM4-40GB", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kNvSwitch, .nvlinks = 12, .product_identifies_board = true},
    {.name = "hgx-h100", .product = "NVIDIA-H100-80GB-HBM3", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kNvSwitch, .nvlinks = 18, .product_identifies_board = true},
    {.name = "hgx-h200", .product = "NVIDIA-H200", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kNvSwitch, .nvlinks = 18, .product_identifies_board = true},
    {.name = "hgx-b200", .product = "NVIDIA-B200", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kNvSwitch, .nvlinks = 18, .product_identifies_board = true},
    // One compute tray of an NVL72 rack; the rack-wide NVLink domain comes from `nvidia.com/gpu.clique`.
    {.name = "gb200-nvl72-node", .product = "NVIDIA-GB200", .gpus = 4, .gpus_per_numa = 2,
     .fabric = Fabric::kNvSwitch, .nvlinks = 18, .product_identifies_board = true},
    {.name = "g5.48xlarge", .product = "NVIDIA-A10G", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kPcie, .same_numa = LinkClass::kPhb, .product_identifies_board = true},
    {.name = "g6e.48xlarge", .product = "NVIDIA-L40S", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kPcie, .same_numa = LinkClass::kPhb},
    {.name = "g6.48xlarge", .product = "NVIDIA-L4", .gpus = 8, .gpus_per_numa = 4,
     .fabric = Fabric::kPcie, .same_numa = LinkClass::kPhb},
    {.name = "g4dn.12xlarge", .product = "Tesla-T4", .gpus = 4, .gpus_per_numa = 4,
     .fabric = Fabric::kPcie, .same_numa = LinkClass::kPhb},
    {.name = "g5.12xlarge", .product = "NVIDIA-A10G", .gpus = 4, .gpus_per_numa = 4,
     .fabric = Fabric::kPcie, .same_numa = LinkClass::kPhb, .product_identifies_board = true},
    {.name = "rtx8000-nvlink-4x", .product = "Quadro-RTX-8000", .gpus = 4, .gpus_per_numa = 2,
     .fabric = Fabric::kMatrix, .rows = kRtx8000NvLink4x},
};

// Other names of a shape: cloud instance and machine types. `product` overrides the shape's product where
// the instance type fixes a variant (memory size); empty keeps the shape's.
struct Alias {
  absl::string_view alias;
  absl::string_view shape;
  absl::string_view product = {};
};

constexpr Alias kAliases[] = {
    {"p3.16xlarge", "dgx1-v100"},
    {"p3dn.24xlarge", "dgx1-v100", "Tesla-V100-SXM2-32GB"},
    {"p4d.24xlarge", "dgx-a100"},
    {"p4de.24xlarge", "dgx-a100", "NVIDIA-A100-SXM4-80GB"},
    {"a2-highgpu-8g", "dgx-a100"},
    {"a2-ultragpu-8g", "dgx-a100", "NVIDIA-A100-SXM4-80GB"},
    {"Standard_ND96asr_v4", "dgx-a100"},
    {"Standard_ND96amsr_A100_v4", "dgx-a100", "NVIDIA-A100-SXM4-80GB"},
    {"p5.48xlarge", "hgx-h100"},
    {"a3-highgpu-8g", "hgx-h100"},
    {"a3-megagpu-8g", "hgx-h100"},
    {"Standard_ND96isr_H100_v5", "hgx-h100"},
    {"p5e.48xlarge", "hgx-h200"},
    {"p5en.48xlarge", "hgx-h200"},
    {"a3-ultragpu-8g", "hgx-h200"},
    {"Standard_ND96isr_H200_v5", "hgx-h200"},
    {"p6-b200.48xlarge", "hgx-b200"},
    {"a4-highgpu-8g", "hgx-b200"},
};

// The tables checked at compile time: aliases name shapes, matrices have a row per GPU, NUMA blocks divide
// the GPUs evenly.
constexpr bool SameName(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

constexpr bool TablesAreConsistent() {
  for (const Shape& shape : kShapes) {
    if (shape.gpus_per_numa <= 0 || shape.gpus % shape.gpus_per_numa != 0) return false;
    if ((shape.fabric == Fabric::kMatrix) != (static_cast<int>(shape.rows.size()) == shape.gpus)) return false;
  }
  for (const Alias& alias : kAliases) {
    bool found = false;
    for (const Shape& shape : kShapes) found = found || SameName(alias.shape, shape.name);
    if (!found) return false;
  }
  return true;
}
static_assert(TablesAreConsistent(), "catalog: an alias names no shape, or a matrix or NUMA split is off");

// The canonical model a product label names ("A100-SXM" for "NVIDIA-A100-SXM4-80GB"); empty when unknown.
std::string Model(absl::string_view product_label) {
  const std::optional<ProductSpec> product = FindProduct(product_label);
  return product ? std::string(product->name) : std::string();
}

// One catalog entry resolved from a name or an alias.
struct Resolved {
  const Shape* shape = nullptr;
  absl::string_view product;
};

const Shape* FindShape(absl::string_view name) {
  for (const Shape& shape : kShapes) {
    if (absl::EqualsIgnoreCase(shape.name, name)) return &shape;
  }
  return nullptr;
}

std::optional<Resolved> Resolve(absl::string_view name_or_alias) {
  if (const Shape* shape = FindShape(name_or_alias)) return Resolved{shape, shape->product};
  for (const Alias& alias : kAliases) {
    if (!absl::EqualsIgnoreCase(alias.alias, name_or_alias)) continue;
    const Shape* shape = FindShape(alias.shape);  // never null: TablesAreConsistent
    return Resolved{shape, alias.product.empty() ? shape->product : alias.product};
  }
  return std::nullopt;
}

// Product facts onto every GPU and the node's link generations. Unknown products keep the defaults (memory
// unknown, slowest generations).
void ApplyProduct(TopologySpec& spec, absl::string_view product_label) {
  const std::optional<ProductSpec> product = FindProduct(product_label);
  for (GpuInfo& gpu : spec.gpus) {
    gpu.product = std::string(product_label);
    if (product) gpu.memory_mib = product->memory_mib;
  }
  if (product) {
    spec.nvlink_generation = product->nvlink_generation;
    spec.pcie_generation = product->pcie_generation;
  }
}

absl::StatusOr<TopologySpec> ShapeSpec(const Shape& shape, absl::string_view product_label) {
  const std::optional<ProductSpec> product = FindProduct(product_label);
  if (!product) {
    return absl::InternalError(absl::StrCat("catalog shape ", shape.name, " has unknown product ", product_label));
  }
  TopologySpec spec;
  switch (shape.fabric) {
    case Fabric::kMatrix: {
      absl::StatusOr<TopologySpec> matrix =
          MatrixSpec(std::vector<absl::string_view>(shape.rows.begin(), shape.rows.end()), "");
      if (!matrix.ok()) return matrix.status();
      spec = *std::move(matrix);
      break;
    }
    case Fabric::kNvSwitch:
      spec = UniformSpec(shape.gpus, Link{LinkClass::kNvLink, shape.nvlinks, false}, "");
      break;
    case Fabric::kPcie:
      spec = UniformSpec(shape.gpus, Link{LinkClass::kSys, 0, false}, "");
      break;
  }
  if (static_cast<int>(spec.gpus.size()) != shape.gpus) {
    return absl::InternalError(absl::StrCat("catalog shape ", shape.name, " has ", spec.gpus.size(),
                                            " GPUs in its matrix, ", shape.gpus, " declared"));
  }
  for (GpuInfo& gpu : spec.gpus) gpu.numa_node = gpu.id.value / shape.gpus_per_numa;
  if (shape.fabric == Fabric::kPcie) {
    for (int a = 0; a < shape.gpus; ++a) {
      for (int b = 0; b < shape.gpus; ++b) {
        if (a == b || spec.gpus[a].numa_node != spec.gpus[b].numa_node) continue;
        spec.gpu_links[a][b].link_class = shape.same_numa;
      }
    }
  }
  ApplyProduct(spec, product_label);
  InferNvSwitch(spec, product->nvlinks_per_gpu);
  spec.source = absl::StrCat("catalog:", shape.name);
  return spec;
}

std::string KnownNames() {
  std::vector<absl::string_view> names = CatalogShapeNames();
  for (const Alias& alias : kAliases) names.push_back(alias.alias);
  return absl::StrJoin(names, ", ");
}

std::optional<absl::string_view> Label(const std::map<std::string, std::string, std::less<>>& labels,
                                       absl::string_view key) {
  auto it = labels.find(key);
  if (it == labels.end() || it->second.empty()) return std::nullopt;
  return absl::string_view(it->second);
}

// The shape the labels point at before any consistency check, with why.
struct Candidate {
  Resolved resolved;
  std::string why;
};

}  // namespace

std::vector<absl::string_view> CatalogShapeNames() {
  std::vector<absl::string_view> names;
  for (const Shape& shape : kShapes) names.push_back(shape.name);
  return names;
}

absl::StatusOr<Topology> CatalogShape(absl::string_view name_or_alias) {
  const std::optional<Resolved> resolved = Resolve(name_or_alias);
  if (!resolved) {
    return absl::NotFoundError(
        absl::StrCat("no catalog shape \"", name_or_alias, "\"; known: ", KnownNames()));
  }
  absl::StatusOr<TopologySpec> spec = ShapeSpec(*resolved->shape, resolved->product);
  if (!spec.ok()) return spec.status();
  return Topology::Create(*std::move(spec));
}

absl::StatusOr<LabelledTopology> TopologyFromLabels(
    const std::map<std::string, std::string, std::less<>>& labels, int allocatable_gpus) {
  // Why no shape was picked, in the order the rules were tried; becomes the fallback's reason.
  std::vector<std::string> misses;

  std::optional<int> label_count;
  if (std::optional<absl::string_view> text = Label(labels, kGpuCountLabel)) {
    int count = 0;
    if (absl::SimpleAtoi(*text, &count) && count >= 0) {
      label_count = count;
    } else {
      misses.push_back(absl::StrCat("ignored unparsable ", kGpuCountLabel, "=", Quoted(*text)));
    }
  }
  // The node's GPU count as far as the labels and status tell; unknown on a template node with neither.
  std::optional<int> node_count = label_count;
  if (!node_count && allocatable_gpus > 0) node_count = allocatable_gpus;
  const std::string count_source = label_count ? std::string(kGpuCountLabel) : "allocatable nvidia.com/gpu";
  // Refused before anything is sized from it: the fallback below builds a count x count link matrix.
  if (node_count && *node_count > kMaxGpusPerNode) {
    return absl::InvalidArgumentError(absl::StrCat(count_source, " says ", *node_count,
                                                   " GPUs; topofit models nodes of up to ", kMaxGpusPerNode));
  }

  // A multi-node NVLink domain is a fact about the node's rack, not its shape: it applies to any pick.
  std::optional<DomainId> domain;
  if (std::optional<absl::string_view> clique = Label(labels, kGpuCliqueLabel)) domain = DomainId{std::string(*clique)};

  const std::optional<absl::string_view> product_label = Label(labels, kGpuProductLabel);
  const std::string label_model = product_label ? Model(*product_label) : "";
  if (product_label && label_model.empty()) misses.push_back(absl::StrCat("unknown product ", *product_label));

  std::optional<Candidate> candidate;
  const std::optional<absl::string_view> instance_type = Label(labels, kInstanceTypeLabel);
  if (instance_type) {
    if (std::optional<Resolved> resolved = Resolve(*instance_type)) {
      candidate = Candidate{*resolved, absl::StrCat("instance type ", *instance_type, " is catalog shape ",
                                                    resolved->shape->name)};
    } else {
      misses.push_back(absl::StrCat("instance type ", *instance_type, " is not in the catalog"));
    }
  }
  if (!candidate && !label_model.empty()) {
    if (!node_count) {
      misses.push_back(absl::StrCat("product ", *product_label, " but no GPU count"));
    } else {
      for (const Shape& shape : kShapes) {
        if (shape.product_identifies_board && shape.gpus == *node_count && Model(shape.product) == label_model) {
          candidate = Candidate{Resolved{&shape, *product_label},
                                absl::StrCat(*node_count, " x ", label_model, " is catalog shape ", shape.name)};
          break;
        }
      }
      if (!candidate) {
        misses.push_back(absl::StrCat("no catalog shape has ", *node_count, " x ", label_model,
                                      " on a board the product identifies"));
      }
    }
  }

  if (candidate) {
    const Shape& shape = *candidate->resolved.shape;
    const std::string shape_model = Model(candidate->resolved.product);
    if (node_count && *node_count != shape.gpus) {
      misses.push_back(absl::StrCat(candidate->why, " with ", shape.gpus, " GPUs, but ", count_source, " says ",
                                    *node_count));
    } else if (!label_model.empty() && label_model != shape_model) {
      misses.push_back(absl::StrCat(candidate->why, " with ", shape_model, " GPUs, but ",
                                    kGpuProductLabel, " says ", *product_label));
    } else {
      // The product label comes from the node itself, so it is the more precise variant (e.g. 80GB).
      const absl::string_view product = label_model.empty() ? candidate->resolved.product : *product_label;
      absl::StatusOr<TopologySpec> spec = ShapeSpec(shape, product);
      if (!spec.ok()) return spec.status();
      spec->domain = domain;
      for (const std::string& miss : misses) spec->warnings.push_back(miss);
      absl::StatusOr<Topology> topology = Topology::Create(*std::move(spec));
      if (!topology.ok()) return topology.status();
      return LabelledTopology{*std::move(topology), std::string(shape.name), false, std::move(candidate->why)};
    }
  }

  // No shape: the conservative PCIe-only fallback. Every pair SYS is the weakest link the model knows, so
  // nothing is promised that the real node may not have.
  if (!node_count || *node_count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("no GPUs to model: the labels give no GPU count and allocatable nvidia.com/gpu is ",
                     allocatable_gpus, misses.empty() ? "" : "; ", absl::StrJoin(misses, "; ")));
  }
  TopologySpec spec = UniformSpec(*node_count, Link{LinkClass::kSys, 0, false}, "");
  ApplyProduct(spec, product_label.value_or(""));
  spec.domain = domain;
  spec.source = std::string(kFallbackSource);
  const std::string why_none = misses.empty() ? "no instance type or product label" : absl::StrJoin(misses, "; ");
  std::string reason = absl::StrCat("no catalog shape fits (", why_none, "); assuming ", *node_count,
                                    " GPUs joined by PCIe only (SYS between every pair)");
  spec.warnings.push_back(reason);
  absl::StatusOr<Topology> topology = Topology::Create(std::move(spec));
  if (!topology.ok()) return topology.status();
  return LabelledTopology{*std::move(topology), "", true, std::move(reason)};
}

}  // namespace topofit::topology
