#include "topology/products.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace topofit::topology {
namespace {

// The model token of each product as it appears in GFD labels and `nvidia-smi` names, with its facts from
// NVIDIA's datasheets: NVLink generation and links per GPU (SXM modules, or NVLink bridges for PCIe
// cards), PCIe generation, memory (MiB, the smallest variant; a "<N>GB" token in the label overrides it).
struct KnownProduct {
  absl::string_view token;
  bool pcie_card;  // matches only when the label also says PCIE (the PCIe card of an SXM product)
  ProductSpec spec;
};

constexpr KnownProduct kProducts[] = {
    {"GB200", false, {"GB200", 5, 18, 5, 186 * 1024}},
    {"B200", false, {"B200", 5, 18, 5, 180 * 1024}},
    {"H200", false, {"H200", 4, 18, 5, 141 * 1024}},
    {"H100", true, {"H100-PCIe", 4, 12, 5, 80 * 1024}},  // NVLink bridges: 600 GB/s both ways
    {"H100", false, {"H100-SXM", 4, 18, 5, 80 * 1024}},
    {"A100", true, {"A100-PCIe", 3, 12, 4, 40 * 1024}},  // NVLink bridges: 600 GB/s both ways
    {"A100", false, {"A100-SXM", 3, 12, 4, 40 * 1024}},
    {"V100", false, {"V100-SXM2", 2, 6, 3, 16 * 1024}},
    {"P100", false, {"P100-SXM2", 1, 4, 3, 16 * 1024}},
    {"A10G", false, {"A10G", 0, 0, 4, 24 * 1024}},
    {"A10", false, {"A10", 0, 0, 4, 24 * 1024}},
    {"L40S", false, {"L40S", 0, 0, 4, 48 * 1024}},
    {"L40", false, {"L40", 0, 0, 4, 48 * 1024}},
    {"L4", false, {"L4", 0, 0, 4, 24 * 1024}},
    {"T4", false, {"T4", 0, 0, 3, 16 * 1024}},
    {"8000", false, {"RTX-8000", 2, 2, 3, 48 * 1024}},  // Quadro RTX 8000: one 2-link bridge, 100 GB/s both ways
};

}  // namespace

std::optional<ProductSpec> FindProduct(absl::string_view product_label) {
  const std::string upper = absl::AsciiStrToUpper(product_label);
  const std::vector<absl::string_view> tokens = absl::StrSplit(upper, absl::ByAnyChar("-_ "), absl::SkipEmpty());
  auto has = [&tokens](absl::string_view token) {
    return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
  };
  const bool pcie = has("PCIE");
  for (const KnownProduct& known : kProducts) {
    if (!has(known.token)) continue;
    if (known.token == "8000" && !has("RTX")) continue;
    const bool has_pcie_variant =
        std::any_of(std::begin(kProducts), std::end(kProducts),
                    [&](const KnownProduct& other) { return other.token == known.token && other.pcie_card; });
    if (has_pcie_variant && known.pcie_card != pcie) continue;
    ProductSpec spec = known.spec;
    for (absl::string_view token : tokens) {
      int gib = 0;
      if (absl::ConsumeSuffix(&token, "GB") && absl::SimpleAtoi(token, &gib) && gib > 0 && gib <= 1024) {
        spec.memory_mib = int64_t{gib} * 1024;
      }
    }
    return spec;
  }
  return std::nullopt;
}

}  // namespace topofit::topology
