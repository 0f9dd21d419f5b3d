#include "bench/sim/policy.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace topofit::sim {
namespace {

constexpr std::pair<StockExpander, absl::string_view> kExpanderNames[] = {
    {StockExpander::kRandom, "random"},         {StockExpander::kLeastWaste, "least-waste"},
    {StockExpander::kMostPods, "most-pods"},    {StockExpander::kLeastNodes, "least-nodes"},
    {StockExpander::kPrice, "price"},
};

absl::string_view NameOf(StockExpander expander) {
  for (const auto& [value, name] : kExpanderNames) {
    if (value == expander) return name;
  }
  return "?";
}

}  // namespace

absl::StatusOr<std::vector<StockExpander>> ParseExpanderChain(absl::string_view chain) {
  std::vector<StockExpander> parsed;
  for (absl::string_view token : absl::StrSplit(chain, ',', absl::SkipWhitespace())) {
    token = absl::StripAsciiWhitespace(token);
    bool known = false;
    for (const auto& [value, name] : kExpanderNames) {
      if (token == name) {
        parsed.push_back(value);
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("unknown expander \"", token,
                                                     "\"; known: random, least-waste, most-pods, least-nodes, price"));
    }
  }
  return parsed;
}

std::string ExpanderChainName(const std::vector<StockExpander>& chain) {
  return absl::StrJoin(chain, ",", [](std::string* out, StockExpander e) { absl::StrAppend(out, NameOf(e)); });
}

std::vector<Policy> StandardPolicies(const std::vector<StockExpander>& chain) {
  return {
      Policy{"baseline", false, false, chain},
      Policy{"extender-only", true, false, chain},
      Policy{"expander-only", false, true, chain},
      Policy{"topofit", true, true, chain},
  };
}

absl::StatusOr<std::vector<Policy>> SelectPolicies(absl::string_view names, const std::vector<StockExpander>& chain) {
  const std::vector<Policy> standard = StandardPolicies(chain);
  std::vector<Policy> selected;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    bool known = false;
    for (const Policy& policy : standard) {
      if (policy.name == name) {
        selected.push_back(policy);
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown policy \"", name, "\"; known: baseline, extender-only, expander-only, topofit"));
    }
  }
  if (selected.empty()) return absl::InvalidArgumentError("no policy selected");
  return selected;
}

}  // namespace topofit::sim
