#include "codec/topology_json.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codec/bounded_json.h"
#include "topology/link.h"
#include "topology/products.h"

namespace topofit::codec {
namespace {

using Json = nlohmann::json;
using topology::GpuId;
using topology::GpuInfo;
using topology::Link;
using topology::LinkClass;
using topology::NicId;
using topology::NicInfo;
using topology::TopologySpec;

constexpr Link kSysLink{LinkClass::kSys, 0, false};

// Paths are written the way a reader finds the spot in the document: "links[3].gpus[1]".
std::string Field(const std::string& path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}
std::string Element(const std::string& path, size_t index) { return absl::StrCat(path, "[", index, "]"); }

absl::Status PathError(const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(path.empty() ? absl::StrCat("topology descriptor: ", what)
                                                 : absl::StrCat("topology descriptor: ", path, ": ", what));
}

// nlohmann reports syntax errors by throwing; this is the one place they are caught. The rest of the file
// only calls accessors that cannot throw (type checks first, then get<> of that type, find()). A descriptor
// is a node annotation, so it is held to the limits of JSON inside an object before anything is built; then
// parsed with exceptions rather than through ParseBoundedJson, for the line and column a hand-written
// descriptor's error names.
absl::StatusOr<Json> ParseJson(absl::string_view text) {
  if (absl::Status within = CheckJsonLimits(text, kObjectJsonLimits, "topology descriptor"); !within.ok()) {
    return within;
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("topology descriptor: not valid JSON: ", e.what()));
  }
}

// Rejects what is not an object, and fields the schema lacks: a misspelt optional field would otherwise
// silently take its default.
absl::Status CheckObject(const Json& value, const std::string& path, std::initializer_list<absl::string_view> fields) {
  if (!value.is_object()) return PathError(path, absl::StrCat("expected an object, found ", value.type_name()));
  for (const auto& item : value.items()) {
    if (std::find(fields.begin(), fields.end(), absl::string_view(item.key())) == fields.end()) {
      return PathError(Field(path, item.key()), absl::StrCat("unknown field; expected ", absl::StrJoin(fields, ", ")));
    }
  }
  return absl::OkStatus();
}

const Json* Find(const Json& object, absl::string_view key) {
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

absl::StatusOr<int64_t> ReadInt(const Json& value, const std::string& path, int64_t min, int64_t max) {
  if (!value.is_number_integer()) {
    return PathError(path, absl::StrCat("expected an integer, found ", value.type_name()));
  }
  // Unsigned values above INT64_MAX would wrap in get<int64_t>.
  const bool too_large = value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max);
  const int64_t number = too_large ? max : value.get<int64_t>();
  if (too_large || number < min || number > max) {
    return PathError(path, absl::StrCat("must be ", min, " to ", max, ", found ", value.dump()));
  }
  return number;
}

absl::StatusOr<std::string> ReadString(const Json& value, const std::string& path) {
  if (!value.is_string()) return PathError(path, absl::StrCat("expected a string, found ", value.type_name()));
  return value.get<std::string>();
}

// A link token ("NV12", "PIX", ...) between two distinct devices, so never X.
absl::StatusOr<Link> ReadLink(const Json& value, const std::string& path) {
  absl::StatusOr<std::string> token = ReadString(value, path);
  if (!token.ok()) return token.status();
  absl::StatusOr<Link> link = topology::ParseLinkToken(*token);
  if (!link.ok()) return PathError(path, link.status().message());
  if (link->link_class == LinkClass::kSelf) return PathError(path, "X (self) is not a link between two devices");
  return *link;
}

// Optional scalar fields: `out` keeps its default when the field is absent.
template <typename Int>
absl::Status ReadOptionalInt(const Json& object, const std::string& path, absl::string_view key, int64_t min,
                             int64_t max, Int& out) {
  const Json* value = Find(object, key);
  if (value == nullptr) return absl::OkStatus();
  absl::StatusOr<int64_t> number = ReadInt(*value, Field(path, key), min, max);
  if (!number.ok()) return number.status();
  out = static_cast<Int>(*number);
  return absl::OkStatus();
}

absl::Status ReadOptionalString(const Json& object, const std::string& path, absl::string_view key, std::string& out) {
  const Json* value = Find(object, key);
  if (value == nullptr) return absl::OkStatus();
  absl::StatusOr<std::string> text = ReadString(*value, Field(path, key));
  if (!text.ok()) return text.status();
  out = std::move(*text);
  return absl::OkStatus();
}

absl::StatusOr<GpuInfo> ParseGpu(const Json& value, int index, const std::string& path,
                                 const std::string& fallback_product) {
  if (absl::Status s = CheckObject(value, path, {"index", "uuid", "product", "memoryMiB", "numaNode", "pciBusId"});
      !s.ok()) {
    return s;
  }
  GpuInfo gpu;
  gpu.id = GpuId{index};
  gpu.product = fallback_product;
  int listed_index = index;
  gpu.memory_mib = -1;  // not given: from the product below
  // Every read runs; the first failure in field order is the one reported.
  for (absl::Status s :
       {ReadOptionalInt(value, path, "index", 0, topology::kMaxGpusPerNode - 1, listed_index),
        ReadOptionalString(value, path, "uuid", gpu.uuid), ReadOptionalString(value, path, "product", gpu.product),
        ReadOptionalInt(value, path, "memoryMiB", 0, int64_t{1} << 40, gpu.memory_mib),
        ReadOptionalInt(value, path, "numaNode", -1, topology::kMaxNumaNode, gpu.numa_node),
        ReadOptionalString(value, path, "pciBusId", gpu.pci_bus_id)}) {
    if (!s.ok()) return s;
  }
  // Indices are positions: a descriptor listing GPUs out of order would silently renumber them.
  if (listed_index != index) {
    return PathError(Field(path, "index"),
                     absl::StrCat("GPUs are listed in index order: expected ", index, ", found ", listed_index));
  }
  if (gpu.memory_mib < 0) {
    const std::optional<topology::ProductSpec> product = topology::FindProduct(gpu.product);
    gpu.memory_mib = product ? product->memory_mib : 0;
  }
  return gpu;
}

absl::StatusOr<std::vector<GpuInfo>> ParseGpus(const Json& root, const std::string& fallback_product) {
  const Json* gpus = Find(root, "gpus");
  if (gpus == nullptr) return PathError("gpus", "required: one entry per GPU");
  if (!gpus->is_array() || gpus->empty() || gpus->size() > topology::kMaxGpusPerNode) {
    return PathError("gpus", absl::StrCat("expected an array of 1 to ", topology::kMaxGpusPerNode, " GPUs"));
  }
  std::vector<GpuInfo> out;
  for (size_t i = 0; i < gpus->size(); ++i) {
    absl::StatusOr<GpuInfo> gpu = ParseGpu((*gpus)[i], static_cast<int>(i), Element("gpus", i), fallback_product);
    if (!gpu.ok()) return gpu.status();
    out.push_back(std::move(*gpu));
  }
  return out;
}

// Explicit generations win; otherwise the product of GPU 0 (a node has one product) tells them. Returns the
// product's NVLinks per GPU for NVSwitch inference, 0 when unknown.
absl::StatusOr<int> ApplyGenerations(const Json& root, TopologySpec& spec) {
  const std::optional<topology::ProductSpec> product = topology::FindProduct(spec.gpus[0].product);
  spec.nvlink_generation = product ? product->nvlink_generation : 0;
  spec.pcie_generation = product ? product->pcie_generation : 3;
  for (absl::Status s : {ReadOptionalInt(root, "", "nvlinkGeneration", 0, 5, spec.nvlink_generation),
                         ReadOptionalInt(root, "", "pcieGeneration", 1, 6, spec.pcie_generation)}) {
    if (!s.ok()) return s;
  }
  if (!product && (Find(root, "nvlinkGeneration") == nullptr || Find(root, "pcieGeneration") == nullptr)) {
    spec.warnings.push_back(absl::StrCat("unknown GPU product \"", spec.gpus[0].product,
                                         "\" and no explicit generations: assuming NVLink generation ",
                                         spec.nvlink_generation, " and PCIe Gen", spec.pcie_generation));
  }
  return product ? product->nvlinks_per_gpu : 0;
}

struct LinkEntry {
  int a = 0;
  int b = 0;
  Link link;
  bool says_nvswitch = false;  // the entry has an "nvswitch" field, true or false
};

absl::StatusOr<LinkEntry> ParseLinkEntry(const Json& value, const std::string& path, int gpu_count) {
  if (absl::Status s = CheckObject(value, path, {"gpus", "link", "nvswitch"}); !s.ok()) return s;
  const Json* gpus = Find(value, "gpus");
  const std::string gpus_path = Field(path, "gpus");
  if (gpus == nullptr || !gpus->is_array() || gpus->size() != 2) {
    return PathError(gpus_path, "required: the two GPU indices the link joins, e.g. [0, 1]");
  }
  int ends[2] = {0, 0};
  for (size_t k = 0; k < 2; ++k) {
    absl::StatusOr<int64_t> end = ReadInt((*gpus)[k], Element(gpus_path, k), 0, gpu_count - 1);
    if (!end.ok()) return end.status();
    ends[k] = static_cast<int>(*end);
  }
  if (ends[0] == ends[1]) return PathError(Element(gpus_path, 1), "a GPU is not linked to itself");
  const Json* token = Find(value, "link");
  if (token == nullptr) return PathError(Field(path, "link"), "required: a link token such as NV12 or PIX");
  absl::StatusOr<Link> link = ReadLink(*token, Field(path, "link"));
  if (!link.ok()) return link.status();
  LinkEntry entry{ends[0], ends[1], *link, false};
  if (const Json* nvswitch = Find(value, "nvswitch")) {
    if (!nvswitch->is_boolean()) return PathError(Field(path, "nvswitch"), "expected true or false");
    entry.says_nvswitch = true;
    entry.link.via_nvswitch = nvswitch->get<bool>();
    if (entry.link.via_nvswitch && entry.link.link_class != LinkClass::kNvLink) {
      return PathError(Field(path, "nvswitch"), "only NVLink (NV#) links go through an NVSwitch");
    }
  }
  return entry;
}

// Overrides the default link for the listed pairs. Returns whether any entry states "nvswitch": then the
// descriptor is explicit about switches and nothing is inferred.
absl::StatusOr<bool> ParseLinks(const Json& root, TopologySpec& spec) {
  const Json* links = Find(root, "links");
  if (links == nullptr) return false;
  if (!links->is_array()) return PathError("links", "expected an array of {\"gpus\": [a, b], \"link\": ...}");
  const int n = static_cast<int>(spec.gpus.size());
  std::vector<int> listed_by(n * n, -1);  // which entry set a pair, to name it in the duplicate error
  bool says_nvswitch = false;
  for (size_t i = 0; i < links->size(); ++i) {
    absl::StatusOr<LinkEntry> entry = ParseLinkEntry((*links)[i], Element("links", i), n);
    if (!entry.ok()) return entry.status();
    int& first = listed_by[entry->a * n + entry->b];
    if (first >= 0) {
      return PathError(Field(Element("links", i), "gpus"),
                       absl::StrCat("GPUs ", entry->a, " and ", entry->b, " are already linked by links[", first, "]"));
    }
    first = listed_by[entry->b * n + entry->a] = static_cast<int>(i);
    spec.gpu_links[entry->a][entry->b] = spec.gpu_links[entry->b][entry->a] = entry->link;
    says_nvswitch = says_nvswitch || entry->says_nvswitch;
  }
  return says_nvswitch;
}

absl::Status ParseNic(const Json& value, int index, const std::string& path, TopologySpec& spec) {
  if (absl::Status s = CheckObject(value, path, {"name", "numaNode", "links"}); !s.ok()) return s;
  NicInfo nic{NicId{index}, "", -1};
  for (absl::Status s : {ReadOptionalString(value, path, "name", nic.name),
                         ReadOptionalInt(value, path, "numaNode", -1, topology::kMaxNumaNode, nic.numa_node)}) {
    if (!s.ok()) return s;
  }
  const Json* links = Find(value, "links");
  const std::string links_path = Field(path, "links");
  if (links == nullptr || !links->is_array() || links->size() != spec.gpus.size()) {
    return PathError(links_path, absl::StrCat("required: one link token per GPU (", spec.gpus.size(), ")"));
  }
  std::vector<Link> row;
  for (size_t a = 0; a < links->size(); ++a) {
    absl::StatusOr<Link> link = ReadLink((*links)[a], Element(links_path, a));
    if (!link.ok()) return link.status();
    row.push_back(*link);
  }
  spec.nics.push_back(std::move(nic));
  spec.nic_links.push_back(std::move(row));
  return absl::OkStatus();
}

absl::Status ParseNics(const Json& root, TopologySpec& spec) {
  const Json* nics = Find(root, "nics");
  if (nics == nullptr) return absl::OkStatus();
  if (!nics->is_array()) return PathError("nics", "expected an array of NICs");
  for (size_t j = 0; j < nics->size(); ++j) {
    if (absl::Status s = ParseNic((*nics)[j], static_cast<int>(j), Element("nics", j), spec); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ParseClique(const Json& root, TopologySpec& spec) {
  std::string clique;
  if (absl::Status s = ReadOptionalString(root, "", "clique", clique); !s.ok()) return s;
  if (Find(root, "clique") != nullptr && clique.empty()) return PathError("clique", "must not be empty");
  if (!clique.empty()) spec.domain = topology::DomainId{std::move(clique)};
  return absl::OkStatus();
}

absl::StatusOr<topology::Topology> ParseDescriptor(absl::string_view text, const std::string& fallback_product) {
  absl::StatusOr<Json> root = ParseJson(text);
  if (!root.ok()) return root.status();
  if (absl::Status s = CheckObject(
          *root, "", {"gpus", "nvlinkGeneration", "pcieGeneration", "defaultLink", "links", "nics", "clique"});
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::vector<GpuInfo>> gpus = ParseGpus(*root, fallback_product);
  if (!gpus.ok()) return gpus.status();
  // Unlisted pairs take the default link; SYS, the weakest, unless the descriptor says otherwise.
  absl::StatusOr<Link> default_link = kSysLink;
  if (const Json* value = Find(*root, "defaultLink")) default_link = ReadLink(*value, "defaultLink");
  if (!default_link.ok()) return default_link.status();

  TopologySpec spec = topology::UniformSpec(static_cast<int>(gpus->size()), *default_link, "");
  spec.gpus = std::move(*gpus);
  spec.source = "json";
  absl::StatusOr<int> nvlinks_per_gpu = ApplyGenerations(*root, spec);
  if (!nvlinks_per_gpu.ok()) return nvlinks_per_gpu.status();
  absl::StatusOr<bool> explicit_nvswitch = ParseLinks(*root, spec);
  if (!explicit_nvswitch.ok()) return explicit_nvswitch.status();
  for (absl::Status s : {ParseNics(*root, spec), ParseClique(*root, spec)}) {
    if (!s.ok()) return s;
  }
  if (!*explicit_nvswitch) topology::InferNvSwitch(spec, *nvlinks_per_gpu);
  return topology::Topology::Create(std::move(spec));
}

Json GpuToJson(const GpuInfo& gpu) {
  Json out = {{"index", gpu.id.value}, {"memoryMiB", gpu.memory_mib}, {"numaNode", gpu.numa_node}};
  if (!gpu.uuid.empty()) out["uuid"] = gpu.uuid;
  if (!gpu.product.empty()) out["product"] = gpu.product;
  if (!gpu.pci_bus_id.empty()) out["pciBusId"] = gpu.pci_bus_id;
  return out;
}

}  // namespace

absl::StatusOr<topology::Topology> ParseTopologyDescriptor(absl::string_view json) { return ParseDescriptor(json, ""); }

Json TopologyToJson(const topology::Topology& topology) {
  Json out = Json::object();
  out["gpus"] = Json::array();
  for (const GpuInfo& gpu : topology.gpus()) out["gpus"].push_back(GpuToJson(gpu));
  out["nvlinkGeneration"] = topology.nvlink_generation();
  out["pcieGeneration"] = topology.pcie_generation();
  out["defaultLink"] = topology::LinkToken(kSysLink);
  out["links"] = Json::array();
  for (int a = 0; a < topology.gpu_count(); ++a) {
    for (int b = a + 1; b < topology.gpu_count(); ++b) {
      const Link& link = topology.link(GpuId{a}, GpuId{b});
      if (link == kSysLink) continue;
      Json entry = {{"gpus", {a, b}}, {"link", topology::LinkToken(link)}};
      // Always stated for NVLink, so that reading the descriptor back infers nothing.
      if (link.link_class == LinkClass::kNvLink) entry["nvswitch"] = link.via_nvswitch;
      out["links"].push_back(std::move(entry));
    }
  }
  out["nics"] = Json::array();
  for (const NicInfo& nic : topology.nics()) {
    Json links = Json::array();
    for (int a = 0; a < topology.gpu_count(); ++a) {
      links.push_back(topology::LinkToken(topology.nic_link(nic.id, GpuId{a})));
    }
    Json entry = {{"numaNode", nic.numa_node}, {"links", std::move(links)}};
    if (!nic.name.empty()) entry["name"] = nic.name;
    out["nics"].push_back(std::move(entry));
  }
  if (topology.domain()) out["clique"] = topology.domain()->value;
  return out;
}

absl::StatusOr<topology::Topology> ParseTopologyAnnotation(absl::string_view text,
                                                           const topology::NvidiaSmiHints& hints) {
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(text), "{")) return ParseDescriptor(text, hints.product);
  return topology::ParseNvidiaSmiTopo(text, hints);
}

}  // namespace topofit::codec
