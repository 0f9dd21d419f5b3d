#include "cli/topo_command.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codec/topology_json.h"
#include "decision/nvlink_domain.h"
#include "kube/objects.h"
#include "topology/allocator.h"
#include "topology/catalog.h"
#include "topology/node_score.h"
#include "topology/nvidia_smi.h"

namespace topofit::cli {
namespace {

using topology::AllocationRequest;
using topology::FitResult;
using topology::GpuId;
using topology::GpuSet;
using topology::Topology;

// A topology file larger than this is not an `nvidia-smi topo -m` output or a descriptor.
constexpr std::streamsize kMaxInputBytes = 1 << 20;


absl::StatusOr<std::string> ReadInput(const std::string& file, std::istream& stdin_stream) {
  std::ifstream stream;
  std::istream* in = &stdin_stream;
  if (file != "-") {
    stream.open(file, std::ios::binary);
    if (!stream) return absl::NotFoundError(absl::StrCat("cannot read ", file));
    in = &stream;
  }
  std::string text(kMaxInputBytes + 1, '\0');
  in->read(text.data(), kMaxInputBytes + 1);
  if (in->gcount() > kMaxInputBytes) {
    return absl::InvalidArgumentError(absl::StrCat(file, " is larger than ", kMaxInputBytes, " bytes"));
  }
  text.resize(in->gcount());
  return text;
}

absl::StatusOr<kube::StringMap> ParseLabels(const std::vector<std::string>& key_values) {
  kube::StringMap labels;
  for (const std::string& label : key_values) {
    std::pair<std::string, std::string> kv = absl::StrSplit(label, absl::MaxSplits('=', 1));
    if (kv.first.empty() || label.find('=') == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--label wants key=value, got \"", label, "\""));
    }
    labels[kv.first] = kv.second;
  }
  return labels;
}

absl::StatusOr<Topology> LoadTopology(const TopoOptions& options, std::istream& in) {
  const int sources = !options.file.empty() + !options.shape.empty() + !options.labels.empty();
  if (sources != 1) {
    return absl::InvalidArgumentError("give exactly one of: a FILE (or - for stdin), --shape, --label");
  }
  if (!options.shape.empty()) return topology::CatalogShape(options.shape);
  if (!options.labels.empty()) {
    absl::StatusOr<kube::StringMap> labels = ParseLabels(options.labels);
    if (!labels.ok()) return labels.status();
    absl::StatusOr<topology::LabelledTopology> labelled = topology::TopologyFromLabels(*labels, options.allocatable);
    if (!labelled.ok()) return labelled.status();
    return labelled->topology;
  }
  absl::StatusOr<std::string> text = ReadInput(options.file, in);
  if (!text.ok()) return text.status();
  return codec::ParseTopologyAnnotation(*text, topology::NvidiaSmiHints{options.product});
}

absl::StatusOr<AllocationRequest> ParseRequest(const TopoOptions& options) {
  AllocationRequest request;
  request.gpus = options.gpus;
  absl::StatusOr<topology::LinkClass> min_link = topology::ParseLinkClass(options.min_link);
  if (!min_link.ok()) return min_link.status();
  request.min_link = *min_link;
  if (!options.min_bandwidth.empty()) {
    absl::StatusOr<int64_t> mbps = topology::ParseBandwidth(options.min_bandwidth);
    if (!mbps.ok()) return mbps.status();
    request.min_bandwidth_mbps = *mbps;
  }
  return request;
}

std::string Describe(const Topology& t) {
  const topology::GpuInfo& gpu0 = t.gpu(GpuId{0});
  return absl::StrCat(t.gpu_count(), " x ", gpu0.product.empty() ? "unknown GPU" : gpu0.product, ", NVLink ",
                      t.nvlink_generation() ? absl::StrCat("gen ", t.nvlink_generation()) : "gen unknown",
                      t.has_nvswitch() ? " through NVSwitch" : "", ", PCIe Gen", t.pcie_generation());
}

std::string IslandsText(const Topology& t) {
  return absl::StrJoin(t.NvLinkIslands(), " ",
                       [](std::string* out, GpuSet s) { absl::StrAppend(out, "{", s.ToString(), "}"); });
}

// The NVLink domain a node's labels name, with the configured label keys; what `topo` shows when it reads a
// node's labels rather than a topology that carries its own clique.
struct LabelledDomain {
  decision::NvlinkDomainLabels keys;
  std::optional<decision::NvlinkDomain> domain;
};

absl::StatusOr<std::optional<LabelledDomain>> DomainFromLabels(const TopoOptions& options) {
  if (options.labels.empty()) return std::nullopt;
  absl::StatusOr<decision::NvlinkDomainLabels> keys =
      options.domain_labels.empty() ? decision::NvlinkDomainLabels::Default()
                                    : decision::NvlinkDomainLabels::Create(options.domain_labels);
  if (!keys.ok()) return keys.status();
  absl::StatusOr<kube::StringMap> labels = ParseLabels(options.labels);
  if (!labels.ok()) return labels.status();
  std::optional<decision::NvlinkDomain> domain = decision::NvlinkDomainOf(*labels, *keys);
  return LabelledDomain{.keys = *std::move(keys), .domain = std::move(domain)};
}

std::string DomainText(const Topology& t, const std::optional<LabelledDomain>& labelled) {
  if (!labelled) return t.domain() ? t.domain()->value : "none";
  if (!labelled->domain) return absl::StrCat("none (no ", absl::StrJoin(labelled->keys.keys(), " or "), " label)");
  return absl::StrCat(labelled->domain->id.value, " (", labelled->domain->label_key, ")");
}

void PrintSummary(const Topology& t, const std::optional<LabelledDomain>& labelled, std::ostream& out) {
  out << "source:         " << t.source() << "\n"
      << "GPUs:           " << Describe(t) << "\n"
      << "NVLink domain:  " << DomainText(t, labelled) << "\n"
      << "NVLink islands: " << IslandsText(t) << "\n\n";
  out << "      ";
  for (int b = 0; b < t.gpu_count(); ++b) out << absl::StrCat("GPU", b) << std::string(b < 10 ? 3 : 2, ' ');
  out << "NUMA\n";
  for (int a = 0; a < t.gpu_count(); ++a) {
    out << absl::StrCat("GPU", a) << std::string(a < 10 ? 2 : 1, ' ');
    for (int b = 0; b < t.gpu_count(); ++b) {
      const std::string token = topology::LinkToken(t.link(GpuId{a}, GpuId{b}));
      out << token << std::string(token.size() < 7 ? 7 - token.size() : 1, ' ');
    }
    const int numa = t.gpu(GpuId{a}).numa_node;
    out << (numa < 0 ? "N/A" : std::to_string(numa)) << "\n";
  }
  for (const topology::NicInfo& nic : t.nics()) {
    out << "NIC" << nic.id.value << " " << (nic.name.empty() ? "(unnamed)" : nic.name) << " NUMA "
        << (nic.numa_node < 0 ? "N/A" : std::to_string(nic.numa_node)) << "\n";
  }
  out << "\nbest set bandwidth by size:";
  for (int k = 2; k <= t.gpu_count(); ++k) {
    out << " " << k << ":" << topology::FormatBandwidth(t.quality().BestBandwidth(k));
  }
  out << "\n";
  for (const std::string& warning : t.warnings()) out << "warning: " << warning << "\n";
}

nlohmann::json SummaryJson(const Topology& t) {
  nlohmann::json islands = nlohmann::json::array();
  for (GpuSet island : t.NvLinkIslands()) islands.push_back(island.ToString());
  nlohmann::json best = nlohmann::json::object();
  for (int k = 2; k <= t.gpu_count(); ++k) best[std::to_string(k)] = t.quality().BestBandwidth(k) / 1000.0;
  return {{"source", t.source()},       {"gpuCount", t.gpu_count()},      {"nvswitch", t.has_nvswitch()},
          {"nvlinkIslands", islands},   {"bestBandwidthGBpsBySize", best}, {"warnings", t.warnings()}};
}

nlohmann::json IdsJson(GpuSet set) {
  nlohmann::json ids = nlohmann::json::array();
  for (GpuId id : set.ids()) ids.push_back(id.value);
  return ids;
}

// Why the chosen set won, in words: its place against the best the shape can give and what it leaves.
std::string Why(const Topology& t, const FitResult& fit, const AllocationRequest& request) {
  const topology::Allocation& a = *fit.chosen;
  const int k = request.gpus;
  std::string why = k == 1 ? "a single GPU runs no collective; chosen to leave the free GPUs most cohesive"
                           : absl::StrCat("highest estimated ring all-reduce bandwidth among the free sets (",
                                          topology::FormatBandwidth(a.quality.bandwidth_mbps), "; an empty node of this shape reaches ",
                                          topology::FormatBandwidth(t.quality().BestBandwidth(k)), " with ", k, " GPUs)");
  absl::StrAppend(&why, "; leaves {", a.leftover.ToString(), "} free with cohesion ",
                  topology::FormatBandwidth(a.leftover_cohesion), " (sum of pair bandwidths)");
  return why;
}

}  // namespace

int RunTopo(const TopoOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  if (options.list_shapes) {
    for (absl::string_view name : topology::CatalogShapeNames()) out << name << "\n";
    return 0;
  }
  absl::StatusOr<Topology> t = LoadTopology(options, in);
  if (!t.ok()) {
    err << "topofit topo: " << t.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::optional<LabelledDomain>> labelled = DomainFromLabels(options);
  if (!labelled.ok()) {
    err << "topofit topo: " << labelled.status().message() << "\n";
    return 1;
  }
  nlohmann::json result = {{"topology", codec::TopologyToJson(*t)}, {"summary", SummaryJson(*t)}};
  if (*labelled) {
    const std::optional<decision::NvlinkDomain>& domain = (*labelled)->domain;
    result["summary"]["nvlinkDomain"] =
        domain ? nlohmann::json{{"label", domain->label_key}, {"value", domain->id.value}} : nlohmann::json(nullptr);
  }
  if (!options.json) PrintSummary(*t, *labelled, out);
  if (options.gpus == 0) {
    if (options.json) out << result.dump(2) << "\n";
    return 0;
  }

  absl::StatusOr<AllocationRequest> request = ParseRequest(options);
  absl::StatusOr<GpuSet> free = options.free.empty() ? absl::StatusOr<GpuSet>(t->all_gpus())
                                                     : GpuSet::Parse(options.free, t->gpu_count());
  absl::StatusOr<FitResult> fit = !request.ok() ? request.status()
                                  : !free.ok()  ? free.status()
                                                : topology::Fit(*t, *free, *request);
  if (!fit.ok()) {
    err << "topofit topo: " << fit.status().message() << "\n";
    return 1;
  }
  nlohmann::json allocation = {{"requested", request->gpus},
                               {"minLink", topology::LinkClassName(request->min_link)},
                               {"minBandwidthGBps", request->min_bandwidth_mbps / 1000.0},
                               {"free", IdsJson(*free)},
                               {"fits", fit->fits()},
                               {"explanation", topology::Explain(*fit)}};
  if (fit->fits()) {
    const topology::Allocation& a = *fit->chosen;
    allocation["gpus"] = IdsJson(a.gpus);
    allocation["bandwidthGBps"] = a.quality.bandwidth_mbps / 1000.0;
    allocation["weakestLink"] = topology::LinkClassName(a.quality.weakest);
    allocation["leftover"] = IdsJson(a.leftover);
    allocation["nodeScore"] = topology::NodeFitScore(*t, a);
    allocation["why"] = Why(*t, *fit, *request);
  }
  if (options.json) {
    result["allocation"] = allocation;
    out << result.dump(2) << "\n";
  } else {
    out << "\nrequest: " << request->gpus << " GPUs, min-link " << topology::LinkClassName(request->min_link)
              << (request->min_bandwidth_mbps ? ", min-bandwidth " + topology::FormatBandwidth(request->min_bandwidth_mbps) : "")
              << ", free {" << free->ToString() << "}\n";
    if (fit->fits()) {
      out << "chosen:  " << topology::Explain(*fit) << ", node score "
                << allocation["nodeScore"].get<int>() << "/" << topology::kMaxNodeScore << "\n"
                << "why:     " << allocation["why"].get<std::string>() << "\n";
    } else {
      out << "no fit:  " << topology::Explain(*fit) << "\n";
    }
  }
  return fit->fits() ? 0 : 2;
}

void AddTopoCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<TopoOptions>();
  CLI::App* topo = app.add_subcommand(
      "topo", "Parse a GPU topology, show its graph, and the best GPU set for --gpus K and why");
  topo->add_option("file", options->file,
                   "nvidia-smi topo -m output or a JSON descriptor (docs/topology-descriptor.md); - for stdin");
  topo->add_option("--shape", options->shape, "a catalog shape or instance type (see --list-shapes)");
  topo->add_option("--label", options->labels,
                   "a node label key=value (repeat); picks the shape as for a node-group template");
  topo->add_option("--allocatable", options->allocatable, "GPUs the node reports allocatable (with --label)");
  topo->add_option("--domain-label", options->domain_labels,
                   "a node label key naming an NVLink domain, most tightly connected first (repeat; with --label; "
                   "default nvidia.com/gpu.clique, then topology.k8s.aws/ultraserver-id)");
  topo->add_option("--product", options->product,
                   "GPU product for nvidia-smi text, e.g. NVIDIA-H100-80GB-HBM3 (sets NVLink/PCIe generation)");
  topo->add_option("--gpus", options->gpus, "choose the best set of K GPUs")->check(CLI::Range(1, 1 << 20));
  topo->add_option("--free", options->free, "free GPU ids, e.g. 0,1,4 (default: all)");
  topo->add_option("--min-link", options->min_link, "weakest link allowed: NV, PIX, PXB, PHB, NODE, SYS");
  topo->add_option("--min-bandwidth", options->min_bandwidth, "lowest acceptable set bandwidth, e.g. 200GB/s");
  topo->add_flag("--json", options->json, "print JSON for scripts");
  topo->add_flag("--list-shapes", options->list_shapes, "list the catalog's shapes and exit");
  topo->callback([options, &exit_code] { exit_code = RunTopo(*options, std::cin, std::cout, std::cerr); });
}

}  // namespace topofit::cli
