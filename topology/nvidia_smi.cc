#include "topology/nvidia_smi.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "topology/products.h"
#include "topology/quoted.h"

namespace topofit::topology {
namespace {

// Lone '\r' and form feeds count as spaces: what matters is the order of the cells, not their alignment.
constexpr absl::string_view kWhitespace = " \t\r\v\f";

// A run of non-whitespace on one line, with its 1-based column so that errors can point at it.
struct Cell {
  absl::string_view text;
  int column = 0;
};

struct Line {
  int number = 0;  // 1-based
  std::vector<Cell> cells;

  // Where a missing cell would have started: just past the last one.
  int EndColumn() const { return cells.empty() ? 1 : cells.back().column + static_cast<int>(cells.back().text.size()); }
};

std::vector<Line> SplitLines(absl::string_view text) {
  std::vector<Line> lines;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    Line line;
    line.number = static_cast<int>(lines.size()) + 1;
    size_t start = raw.find_first_not_of(kWhitespace);
    while (start != absl::string_view::npos) {
      const size_t end = std::min(raw.find_first_of(kWhitespace, start), raw.size());
      line.cells.push_back(Cell{raw.substr(start, end - start), static_cast<int>(start) + 1});
      start = raw.find_first_not_of(kWhitespace, end);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

absl::Status ErrorAt(int line, int column, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("nvidia-smi topo -m, line ", line, ", column ", column, ": ", what));
}

// Up to 6 plain digits: no sign, no spaces (absl::SimpleAtoi accepts both), no overflow.
constexpr size_t kMaxDigits = 6;
static_assert(999'999 <= kMaxNumaNode, "every NUMA id nvidia-smi gives fits the model and the descriptor");

std::optional<int> ParseDigits(absl::string_view text) {
  if (text.empty() || text.size() > kMaxDigits) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// "GPU12" with prefix "GPU" is 12.
std::optional<int> LabelIndex(absl::string_view text, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&text, prefix)) return std::nullopt;
  return ParseDigits(text);
}

// NIC names as the kernel spells them (mlx5_0, rdmap79s0, ibp12s0): kept to a safe alphabet because they
// end up in JSON, logs and metrics labels.
bool IsDeviceName(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  });
}

// Whether the cells from `first` on spell `words` ("CPU Affinity"), case-insensitively; how many they are.
size_t MatchWords(const std::vector<Cell>& cells, size_t first, absl::string_view words) {
  const std::vector<absl::string_view> expected = absl::StrSplit(words, ' ');
  if (first + expected.size() > cells.size()) return 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!absl::EqualsIgnoreCase(cells[first + i].text, expected[i])) return 0;
  }
  return expected.size();
}

bool IsHeading(const Line& line, absl::string_view words) {
  const size_t matched = MatchWords(line.cells, 0, words);
  return matched > 0 && matched == line.cells.size();
}

// The columns nvidia-smi prints after the device columns. Only NUMA Affinity feeds the model; the others are
// checked so that a shifted row is caught.
enum class InfoColumn : uint8_t { kCpuAffinity, kNumaAffinity, kGpuNumaId };

struct InfoColumnName {
  InfoColumn kind;
  absl::string_view name;
};

constexpr InfoColumnName kInfoColumns[] = {
    {InfoColumn::kCpuAffinity, "CPU Affinity"},
    {InfoColumn::kNumaAffinity, "NUMA Affinity"},
    {InfoColumn::kGpuNumaId, "GPU NUMA ID"},
};

// "N/A" or an id list such as "0-47,96-143". Returns the id when the list names exactly one, else -1.
absl::StatusOr<int> ParseIdList(absl::string_view text) {
  if (text == "N/A") return -1;
  int single = -1;
  int items = 0;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const std::pair<absl::string_view, absl::string_view> range = absl::StrSplit(item, absl::MaxSplits('-', 1));
    const std::optional<int> low = ParseDigits(range.first);
    const std::optional<int> high = absl::StrContains(item, '-') ? ParseDigits(range.second) : low;
    if (!low || !high || *low > *high) {
      return absl::InvalidArgumentError(
          absl::StrCat(Quoted(text), " is not N/A or a list of ids and ranges such as 0-47,96-143"));
    }
    single = *low == *high ? *low : -1;
    ++items;
  }
  return items == 1 ? single : -1;
}

// A link cell, where it was, so that an asymmetric pair can be pointed at.
struct ParsedLink {
  Link link;
  int line = 0;
  int column = 0;
};

absl::StatusOr<ParsedLink> ParseLinkCell(const Line& line, const Cell& cell, bool self) {
  absl::StatusOr<Link> link = ParseLinkToken(cell.text);
  if (!link.ok()) return ErrorAt(line.number, cell.column, link.status().message());
  if ((link->link_class == LinkClass::kSelf) != self) {
    return ErrorAt(line.number, cell.column,
                   self ? absl::StrCat("expected X (self) on the diagonal, found \"", cell.text, "\"")
                        : std::string("X (self) is only allowed on the diagonal"));
  }
  return ParsedLink{*link, line.number, cell.column};
}

// A row has one cell per column of the header, after its label.
absl::Status CheckCellCount(const Line& line, size_t values) {
  const size_t found = line.cells.size() - 1;
  if (found == values) return absl::OkStatus();
  const std::string what = absl::StrCat("row ", line.cells[0].text, " has ", found, " values, expected ", values,
                                        " (one per column of the header)");
  return found > values ? ErrorAt(line.number, line.cells[values + 1].column, what)
                        : ErrorAt(line.number, line.EndColumn(), what);
}

// PIX, PXB, PHB and NODE paths stay inside one NUMA node, so a NIC sits on the node of any GPU it reaches
// that way; SYS says nothing. -1 when no such GPU has a known node, or when they disagree.
int InferNicNuma(const std::vector<Link>& nic_links, const std::vector<GpuInfo>& gpus) {
  int numa = -1;
  for (size_t a = 0; a < gpus.size(); ++a) {
    const LinkClass link = nic_links[a].link_class;
    if (link < LinkClass::kPix || link > LinkClass::kNode || gpus[a].numa_node < 0) continue;
    if (numa >= 0 && numa != gpus[a].numa_node) return -1;
    numa = gpus[a].numa_node;
  }
  return numa;
}

// Sets what the product tells (generations, memory); returns its NVLinks per GPU, 0 when unknown.
int ApplyProduct(absl::string_view product, TopologySpec& spec) {
  const std::optional<ProductSpec> known = FindProduct(product);
  if (!known) {
    spec.nvlink_generation = 0;
    spec.pcie_generation = 3;
    spec.warnings.push_back(absl::StrCat(
        product.empty() ? std::string("GPU product not given") : absl::StrCat("unknown GPU product \"", product, "\""),
        ": assuming the slowest NVLink generation and PCIe Gen3"));
    return 0;
  }
  spec.nvlink_generation = known->nvlink_generation;
  spec.pcie_generation = known->pcie_generation;
  for (GpuInfo& gpu : spec.gpus) gpu.memory_mib = known->memory_mib;
  return known->nvlinks_per_gpu;
}

// Reads the table line by line: the header fixes the columns, then rows must come in header order.
class TableParser {
 public:
  absl::Status Parse(absl::string_view text);
  TopologySpec BuildSpec(const std::string& product) const;

 private:
  enum class Section : uint8_t { kMatrix, kLegend, kNicLegend };

  int nic_count() const { return static_cast<int>(nic_labels_.size()); }
  absl::Status ParseHeader(const Line& line);
  absl::Status ParseDeviceColumn(const Line& line, const Cell& cell);
  absl::Status ParseLine(const Line& line);
  absl::Status ParseRow(const Line& line);
  absl::Status ParseGpuRow(const Line& line);
  absl::Status ParseNicRow(const Line& line);
  absl::StatusOr<int> ParseInfoCells(const Line& line, size_t first) const;
  absl::Status ParseNicLegendLine(const Line& line);
  absl::Status EndMatrix(int line, int column);

  Section section_ = Section::kMatrix;
  int gpu_count_ = 0;
  std::vector<std::string> nic_labels_;  // "NIC0", or the device name older drivers print as the column
  std::vector<InfoColumn> info_;
  std::vector<std::vector<ParsedLink>> gpu_links_;  // GPU rows: GPU columns
  std::vector<std::vector<ParsedLink>> gpu_nic_;    // GPU rows: NIC columns
  std::vector<std::vector<ParsedLink>> nic_links_;  // NIC rows: GPU columns
  std::vector<int> gpu_numa_;
  std::vector<int> nic_numa_;
  std::vector<std::string> nic_names_;
};

absl::Status TableParser::Parse(absl::string_view text) {
  const std::vector<Line> lines = SplitLines(text);
  auto line = std::find_if(lines.begin(), lines.end(), [](const Line& l) { return !l.cells.empty(); });
  if (line == lines.end()) return ErrorAt(1, 1, "no header row (GPU0 GPU1 ...): the input is blank");
  if (absl::Status status = ParseHeader(*line); !status.ok()) return status;
  int last_number = line->number;
  for (++line; line != lines.end(); ++line) {
    if (line->cells.empty()) continue;
    last_number = line->number;
    if (absl::Status status = ParseLine(*line); !status.ok()) return status;
  }
  return section_ == Section::kMatrix ? EndMatrix(last_number + 1, 1) : absl::OkStatus();
}

absl::Status TableParser::ParseHeader(const Line& line) {
  const Cell& first = line.cells[0];
  if (first.text != "GPU0") {
    return ErrorAt(line.number, first.column,
                   absl::StrCat("expected the header row, starting with GPU0, found \"", first.text, "\""));
  }
  if (line.cells.size() > 1 && ParseLinkToken(line.cells[1].text).ok()) {
    return ErrorAt(line.number, first.column, "expected the header row (GPU0 GPU1 ...), found a matrix row");
  }
  for (size_t i = 0; i < line.cells.size();) {
    const auto info = std::find_if(std::begin(kInfoColumns), std::end(kInfoColumns),
                                   [&](const InfoColumnName& c) { return MatchWords(line.cells, i, c.name) > 0; });
    if (info == std::end(kInfoColumns)) {
      if (!info_.empty()) return ErrorAt(line.number, line.cells[i].column, "device column after the affinity columns");
      if (absl::Status status = ParseDeviceColumn(line, line.cells[i]); !status.ok()) return status;
      ++i;
      continue;
    }
    if (std::find(info_.begin(), info_.end(), info->kind) != info_.end()) {
      return ErrorAt(line.number, line.cells[i].column, absl::StrCat("column \"", info->name, "\" appears twice"));
    }
    info_.push_back(info->kind);
    i += MatchWords(line.cells, i, info->name);
  }
  return absl::OkStatus();
}

absl::Status TableParser::ParseDeviceColumn(const Line& line, const Cell& cell) {
  if (const std::optional<int> gpu = LabelIndex(cell.text, "GPU")) {
    if (nic_count() > 0) return ErrorAt(line.number, cell.column, "GPU column after the NIC columns");
    if (*gpu != gpu_count_) {
      return ErrorAt(line.number, cell.column, absl::StrCat("expected column GPU", gpu_count_, ", found ", cell.text));
    }
    if (gpu_count_ == kMaxGpusPerNode) {
      return ErrorAt(line.number, cell.column, absl::StrCat("more than ", kMaxGpusPerNode, " GPUs on one node"));
    }
    ++gpu_count_;
    return absl::OkStatus();
  }
  if (const std::optional<int> nic = LabelIndex(cell.text, "NIC")) {
    if (*nic != nic_count()) {
      return ErrorAt(line.number, cell.column, absl::StrCat("expected column NIC", nic_count(), ", found ", cell.text));
    }
  } else if (!IsDeviceName(cell.text) || !absl::ascii_islower(static_cast<unsigned char>(cell.text[0]))) {
    // Older drivers name NIC columns by device (mlx5_0); anything else is not a column nvidia-smi prints.
    return ErrorAt(line.number, cell.column,
                   absl::StrCat("unknown column \"", cell.text,
                                "\"; expected GPU#, NIC#, a NIC device name, CPU Affinity, NUMA Affinity or "
                                "GPU NUMA ID"));
  }
  nic_labels_.emplace_back(cell.text);
  // A device-named column names its NIC; NIC# columns are named by the NIC legend, if there is one.
  nic_names_.push_back(absl::StartsWith(cell.text, "NIC") ? std::string() : std::string(cell.text));
  return absl::OkStatus();
}

absl::Status TableParser::ParseLine(const Line& line) {
  const bool nic_legend = IsHeading(line, "NIC Legend:");
  if (nic_legend || IsHeading(line, "Legend:")) {
    if (section_ == Section::kMatrix) {
      if (absl::Status status = EndMatrix(line.number, line.cells[0].column); !status.ok()) return status;
    }
    section_ = nic_legend ? Section::kNicLegend : Section::kLegend;
    return absl::OkStatus();
  }
  switch (section_) {
    case Section::kMatrix:
      return ParseRow(line);
    case Section::kLegend:
      return absl::OkStatus();  // prose explaining the tokens
    case Section::kNicLegend:
      return ParseNicLegendLine(line);
  }
  return absl::OkStatus();
}

absl::Status TableParser::ParseRow(const Line& line) {
  const Cell& label = line.cells[0];
  const int gpu_rows = static_cast<int>(gpu_links_.size());
  const int nic_rows = static_cast<int>(nic_links_.size());
  const std::string expected = gpu_rows < gpu_count_    ? absl::StrCat("GPU", gpu_rows)
                               : nic_rows < nic_count() ? nic_labels_[nic_rows]
                                                        : std::string();
  if (expected.empty()) {
    return ErrorAt(line.number, label.column,
                   absl::StrCat("unexpected row \"", label.text, "\": every GPU and NIC already has its row"));
  }
  if (label.text != expected) {
    return ErrorAt(line.number, label.column, absl::StrCat("expected row ", expected, ", found \"", label.text, "\""));
  }
  return gpu_rows < gpu_count_ ? ParseGpuRow(line) : ParseNicRow(line);
}

absl::Status TableParser::ParseGpuRow(const Line& line) {
  const int gpu = static_cast<int>(gpu_links_.size());
  if (absl::Status status = CheckCellCount(line, gpu_count_ + nic_count() + info_.size()); !status.ok()) {
    return status;
  }
  std::vector<ParsedLink> gpus;
  std::vector<ParsedLink> nics;
  for (int column = 0; column < gpu_count_ + nic_count(); ++column) {
    absl::StatusOr<ParsedLink> link = ParseLinkCell(line, line.cells[1 + column], column == gpu);
    if (!link.ok()) return link.status();
    (column < gpu_count_ ? gpus : nics).push_back(*link);
  }
  absl::StatusOr<int> numa = ParseInfoCells(line, 1 + gpu_count_ + nic_count());
  if (!numa.ok()) return numa.status();
  // The matrix is symmetric: this row's cell for an earlier GPU must repeat that GPU's cell for this one.
  for (int earlier = 0; earlier < gpu; ++earlier) {
    const ParsedLink& mirror = gpu_links_[earlier][gpu];
    if (!(gpus[earlier].link == mirror.link)) {
      return ErrorAt(line.number, gpus[earlier].column,
                     absl::StrCat("GPU", gpu, "-GPU", earlier, " is ", LinkToken(gpus[earlier].link), " but GPU",
                                  earlier, "-GPU", gpu, " (line ", mirror.line, ", column ", mirror.column, ") is ",
                                  LinkToken(mirror.link), "; the matrix must be symmetric"));
    }
  }
  gpu_links_.push_back(std::move(gpus));
  gpu_nic_.push_back(std::move(nics));
  gpu_numa_.push_back(*numa);
  return absl::OkStatus();
}

absl::Status TableParser::ParseNicRow(const Line& line) {
  const int nic = static_cast<int>(nic_links_.size());
  // Drivers leave the affinity cells of NIC rows blank; accept them filled in too.
  const size_t devices = gpu_count_ + nic_count();
  const size_t values = line.cells.size() - 1 <= devices ? devices : devices + info_.size();
  if (absl::Status status = CheckCellCount(line, values); !status.ok()) return status;
  std::vector<ParsedLink> gpus;
  for (size_t column = 0; column < devices; ++column) {
    absl::StatusOr<ParsedLink> link =
        ParseLinkCell(line, line.cells[1 + column], column == static_cast<size_t>(gpu_count_ + nic));
    if (!link.ok()) return link.status();
    if (column >= static_cast<size_t>(gpu_count_)) continue;  // NIC-to-NIC paths are not modelled
    const ParsedLink& mirror = gpu_nic_[column][nic];
    if (!(link->link == mirror.link)) {
      return ErrorAt(line.number, link->column,
                     absl::StrCat(nic_labels_[nic], "-GPU", column, " is ", LinkToken(link->link), " but GPU", column,
                                  "-", nic_labels_[nic], " (line ", mirror.line, ", column ", mirror.column, ") is ",
                                  LinkToken(mirror.link), "; the matrix must be symmetric"));
    }
    gpus.push_back(*link);
  }
  int numa = -1;
  if (values > devices) {
    absl::StatusOr<int> parsed = ParseInfoCells(line, 1 + devices);
    if (!parsed.ok()) return parsed.status();
    numa = *parsed;
  }
  nic_links_.push_back(std::move(gpus));
  nic_numa_.push_back(numa);
  return absl::OkStatus();
}

// The NUMA node the row's affinity cells give (-1 when they do not say), after checking every cell's form.
absl::StatusOr<int> TableParser::ParseInfoCells(const Line& line, size_t first) const {
  int numa = -1;
  for (size_t i = 0; i < info_.size(); ++i) {
    const Cell& cell = line.cells[first + i];
    absl::StatusOr<int> ids = ParseIdList(cell.text);
    if (!ids.ok()) return ErrorAt(line.number, cell.column, ids.status().message());
    // A NUMA Affinity spanning several nodes (some VMs print "0-1") pins the GPU to none of them.
    if (info_[i] == InfoColumn::kNumaAffinity) numa = *ids;
  }
  return numa;
}

absl::Status TableParser::ParseNicLegendLine(const Line& line) {
  const Cell& key = line.cells[0];
  absl::string_view label = key.text;
  const std::optional<int> nic = absl::ConsumeSuffix(&label, ":") ? LabelIndex(label, "NIC") : std::nullopt;
  if (!nic) return ErrorAt(line.number, key.column, "expected \"NIC#: <name>\" in the NIC legend");
  if (*nic >= nic_count()) {
    return ErrorAt(line.number, key.column,
                   absl::StrCat("the NIC legend names NIC", *nic, " but the matrix has ", nic_count(), " NICs"));
  }
  if (line.cells.size() != 2 || !IsDeviceName(line.cells[1].text)) {
    const int column = line.cells.size() < 2 ? line.EndColumn() : line.cells[1].column;
    return ErrorAt(line.number, column, absl::StrCat("expected one NIC name (letters, digits, _-.:) after ", key.text));
  }
  if (!nic_names_[*nic].empty()) {
    return ErrorAt(line.number, key.column, absl::StrCat("NIC", *nic, " is named twice"));
  }
  nic_names_[*nic] = std::string(line.cells[1].text);
  return absl::OkStatus();
}

absl::Status TableParser::EndMatrix(int line, int column) {
  const int gpu_rows = static_cast<int>(gpu_links_.size());
  const int nic_rows = static_cast<int>(nic_links_.size());
  if (gpu_rows < gpu_count_) return ErrorAt(line, column, absl::StrCat("missing row GPU", gpu_rows));
  if (nic_rows < nic_count()) return ErrorAt(line, column, absl::StrCat("missing row ", nic_labels_[nic_rows]));
  return absl::OkStatus();
}

TopologySpec TableParser::BuildSpec(const std::string& product) const {
  TopologySpec spec = UniformSpec(gpu_count_, Link{}, product);
  for (int a = 0; a < gpu_count_; ++a) {
    for (int b = 0; b < gpu_count_; ++b) spec.gpu_links[a][b] = gpu_links_[a][b].link;
    spec.gpus[a].numa_node = gpu_numa_[a];
  }
  for (int j = 0; j < nic_count(); ++j) {
    std::vector<Link> links;
    for (const ParsedLink& link : nic_links_[j]) links.push_back(link.link);
    const int numa = nic_numa_[j] >= 0 ? nic_numa_[j] : InferNicNuma(links, spec.gpus);
    spec.nics.push_back(NicInfo{NicId{j}, nic_names_[j], numa});
    spec.nic_links.push_back(std::move(links));
  }
  spec.source = "nvidia-smi";
  return spec;
}

}  // namespace

absl::StatusOr<Topology> ParseNvidiaSmiTopo(absl::string_view text, const NvidiaSmiHints& hints) {
  TableParser parser;
  if (absl::Status status = parser.Parse(text); !status.ok()) return status;
  TopologySpec spec = parser.BuildSpec(hints.product);
  const int nvlinks_per_gpu = ApplyProduct(hints.product, spec);
  InferNvSwitch(spec, nvlinks_per_gpu);
  return Topology::Create(std::move(spec));
}

}  // namespace topofit::topology
