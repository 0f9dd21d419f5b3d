#include "replay/policy.h"

#include <algorithm>
#include <string>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace topofit::sim {
namespace {

constexpr std::pair<StockExpander, absl::string_view> kExpanderNames[] = {
    {StockExpander::kRandom, "random"},         {StockExpander::kLeastWaste, "least-waste"},
    {StockExpander::kMostPods, "most-pods"},    {StockExpander::kLeastNodes, "least-nodes"},
    {StockExpander::kPrice, "price"},           {StockExpander::kPriority, "priority"},
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
                                                     "\"; known: random, least-waste, most-pods, least-nodes, price, priority"));
    }
  }
  return parsed;
}

std::string ExpanderChainName(const std::vector<StockExpander>& chain) {
  return absl::StrJoin(chain, ",", [](std::string* out, StockExpander e) { absl::StrAppend(out, NameOf(e)); });
}

std::optional<int> ExpanderPriorities::Highest(absl::string_view group) const {
  for (auto it = by_priority.rbegin(); it != by_priority.rend(); ++it) {
    for (const std::regex& re : it->second) {
      if (std::regex_search(group.begin(), group.end(), re)) return it->first;
    }
  }
  return std::nullopt;
}

absl::StatusOr<ExpanderPriorities> ParseExpanderPriorities(absl::string_view yaml) {
  // Upstream's parsePrioritiesYAMLString (cluster-autoscaler/expander/priority/priority.go): yaml.Unmarshal
  // into map[int][]string, then regexp.Compile each entry; an empty text is an error.
  ExpanderPriorities priorities;
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    if (root.IsMap() && root["data"] && root["data"].IsMap() && root["data"]["priorities"]) {
      root = YAML::Load(root["data"]["priorities"].as<std::string>());  // a whole ConfigMap
    }
    if (root.IsNull()) return absl::InvalidArgumentError("the priorities are empty");
    if (!root.IsMap()) {
      return absl::InvalidArgumentError("expected a YAML map of priority (an integer) to a list of regexes");
    }
    for (const auto& entry : root) {
      int priority = 0;
      if (!YAML::convert<int>::decode(entry.first, priority)) {
        return absl::InvalidArgumentError(
            absl::StrCat("priority \"", entry.first.Scalar(), "\" is not an integer (line ", entry.first.Mark().line + 1, ")"));
      }
      if (priorities.by_priority.count(priority) > 0) {
        return absl::InvalidArgumentError(absl::StrCat("priority ", priority, " is listed twice"));
      }
      std::vector<std::regex>& regexes = priorities.by_priority[priority];
      if (entry.second.IsNull()) continue;  // "10:" with no list: no regexes, as yaml.v2 gives a nil slice
      if (!entry.second.IsSequence()) {
        return absl::InvalidArgumentError(absl::StrCat("priority ", priority, ": expected a list of regexes"));
      }
      for (const YAML::Node& pattern : entry.second) {
        if (!pattern.IsScalar()) {
          return absl::InvalidArgumentError(absl::StrCat("priority ", priority, ": expected a list of regexes"));
        }
        try {
          regexes.emplace_back(pattern.Scalar(), std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          return absl::InvalidArgumentError(
              absl::StrCat("priority ", priority, ": bad regex \"", pattern.Scalar(), "\": ", e.what()));
        }
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not valid YAML: ", e.what()));
  }
  return priorities;
}

Policy UseDra(Policy policy) {
  policy.gpu_api = GpuApi::kDra;
  if (policy.topofit_extender) {
    policy.capacity_wait.max_wait = absl::ZeroDuration();
    policy.provisioning_requests = false;
    policy.drain_guard = false;
    policy.operator_affinity = false;
  }
  return policy;
}

Policy StockPolicy(const std::vector<StockExpander>& chain, const ExpanderPriorities& priorities) {
  return Policy{.name = "stock", .chain = chain, .priorities = priorities};
}

Policy TunedPolicy(std::string name, const std::vector<StockExpander>& chain, const ExpanderPriorities& priorities) {
  return Policy{.name = std::move(name),
                .chain = chain,
                .priorities = priorities,
                .operator_affinity = true,
                .operator_preferred_affinity = true,
                .scoring = ResourceScoring::kMostAllocatedWithGpus,
                .gang_scheduler = true};
}

namespace {

// topofit's worlds are the tuned operator's with topofit added (issue 31): their kube-scheduler profiles
// bin-pack as tuned's do, so a difference against tuned is topofit's, not the scoring's.
std::vector<Policy> TopofitPolicies(const std::vector<StockExpander>& chain, const ExpanderPriorities& priorities) {
  std::vector<Policy> policies = {
      Policy{.name = "extender-only", .topofit_extender = true, .chain = chain, .priorities = priorities},
      Policy{.name = "expander-only", .topofit_expander = true, .chain = chain, .priorities = priorities},
      Policy{.name = "topofit", .topofit_extender = true, .topofit_expander = true, .chain = chain,
             .priorities = priorities},
  };
  for (Policy& policy : policies) policy.scoring = ResourceScoring::kMostAllocatedWithGpus;
  return policies;
}

// topofit with one mechanism of its extender off, each: what that mechanism is worth.
std::vector<Policy> AblationPolicies(const std::vector<StockExpander>& chain, const ExpanderPriorities& priorities) {
  const Policy topofit = TopofitPolicies(chain, priorities).back();
  std::vector<Policy> ablations(5, topofit);
  ablations[0].name = "topofit-no-wait";
  ablations[0].capacity_wait.max_wait = absl::ZeroDuration();
  ablations[1].name = "topofit-no-holds";
  ablations[1].capacity_holds = false;
  ablations[2].name = "topofit-no-score";
  ablations[2].topology_score = false;
  ablations[3].name = "topofit-no-requests";
  ablations[3].provisioning_requests = false;
  ablations[4].name = "topofit-no-guard";
  ablations[4].drain_guard = false;
  return ablations;
}

// topofit whose score does not keep the buffers' sets whole: what keeping them is worth where there is headroom
// (without, the same as topofit; not one of the ablations for that reason).
Policy WithoutKeepingBufferedSets(Policy topofit) {
  topofit.name = "topofit-no-keep";
  topofit.keep_buffered_sets = false;
  return topofit;
}

// topofit whose required pods carry the node affinity the tuned operator writes (operator_tuning.h), as a
// mutating webhook would: CA then counts them only onto the groups that can give their topology.
Policy WithOperatorAffinity(Policy topofit) {
  topofit.name = "topofit-affinity";
  topofit.operator_affinity = true;
  return topofit;
}

// Appends `policy` unless one of that name is there.
void AddOnce(std::vector<Policy>& policies, Policy policy) {
  for (const Policy& p : policies) {
    if (p.name == policy.name) return;
  }
  policies.push_back(std::move(policy));
}

}  // namespace

std::vector<Policy> StandardPolicies(const std::vector<StockExpander>& chain, const ExpanderPriorities& priorities) {
  std::vector<Policy> policies = {StockPolicy(chain, priorities), TunedPolicy("tuned", chain, priorities)};
  for (Policy& policy : TopofitPolicies(chain, priorities)) policies.push_back(std::move(policy));
  return policies;
}

std::vector<std::vector<StockExpander>> SweepChains() {
  return {{StockExpander::kRandom},
          {StockExpander::kLeastWaste},
          {StockExpander::kPrice},
          {StockExpander::kPriority, StockExpander::kLeastWaste}};
}

absl::StatusOr<std::vector<Policy>> SelectPolicies(const PolicySelection& selection,
                                                   const ExpanderPriorities& priorities) {
  std::vector<Policy> selected;
  for (absl::string_view name : absl::StrSplit(selection.baselines, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    if (name == "stock") {
      AddOnce(selected, StockPolicy(selection.chain, priorities));
    } else if (name == "tuned") {
      AddOnce(selected, TunedPolicy("tuned", selection.chain, priorities));
    } else if (name == "sweep") {
      for (const std::vector<StockExpander>& chain : SweepChains()) {
        const std::string policy = chain == selection.chain ? "tuned" : absl::StrCat("tuned:", ExpanderChainName(chain));
        AddOnce(selected, TunedPolicy(policy, chain, priorities));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown baseline \"", name, "\"; known: stock, tuned, sweep"));
    }
  }
  std::vector<Policy> ours = TopofitPolicies(selection.chain, priorities);
  const std::vector<Policy> ablations = AblationPolicies(selection.chain, priorities);
  Policy with_affinity = WithOperatorAffinity(ours.back());
  Policy without_keeping = WithoutKeepingBufferedSets(ours.back());
  ours.insert(ours.end(), ablations.begin(), ablations.end());
  ours.push_back(std::move(with_affinity));
  ours.push_back(std::move(without_keeping));
  for (absl::string_view name : absl::StrSplit(selection.policies, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    if (name == "ablations") {
      for (const Policy& ablation : ablations) AddOnce(selected, ablation);
      continue;
    }
    const auto it = std::find_if(ours.begin(), ours.end(), [&](const Policy& p) { return p.name == name; });
    if (it == ours.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown policy \"", name,
          "\"; known: extender-only, expander-only, topofit, ablations (topofit-no-wait, topofit-no-holds, "
          "topofit-no-score, topofit-no-requests, topofit-no-guard), topofit-affinity, topofit-no-keep"));
    }
    AddOnce(selected, *it);
  }
  if (selected.empty()) return absl::InvalidArgumentError("no policy selected");
  std::vector<Headroom> headrooms;
  for (absl::string_view text : absl::StrSplit(selection.headroom, ',', absl::SkipWhitespace())) {
    absl::StatusOr<Headroom> headroom = ParseHeadroom(absl::StripAsciiWhitespace(text));
    if (!headroom.ok()) return headroom.status();
    headrooms.push_back(*headroom);
  }
  if (headrooms.empty()) return absl::InvalidArgumentError("no headroom selected (none keeps the policies as they are)");
  std::vector<Policy> with_headroom;
  for (const Policy& policy : selected) {
    for (const Headroom& headroom : headrooms) {
      Policy variant = policy;
      variant.headroom = headroom;
      if (headroom.sizing != Headroom::Sizing::kNone) variant.name = absl::StrCat(policy.name, "+", headroom.Name());
      AddOnce(with_headroom, std::move(variant));
    }
  }
  return with_headroom;
}

std::string Headroom::Name() const {
  switch (sizing) {
    case Sizing::kNone:
      return "";
    case Sizing::kStatic:
      return absl::StrCat("buffer:", replicas);
    case Sizing::kAdaptive:
      return fill_rate_named ? absl::StrCat("buffer:adaptive:", adaptive.quantile) : "buffer:adaptive";
  }
  return "";
}

absl::StatusOr<Headroom> ParseHeadroom(absl::string_view text) {
  Headroom headroom;
  if (text == "none") return headroom;
  int replicas = 0;
  double fill_rate = 0;
  if (text == "buffer:adaptive") {
    headroom.sizing = Headroom::Sizing::kAdaptive;
  } else if (absl::string_view rest = text; absl::ConsumePrefix(&rest, "buffer:adaptive:") &&
             absl::SimpleAtod(rest, &fill_rate) && fill_rate > 0 && fill_rate <= 1) {
    headroom.sizing = Headroom::Sizing::kAdaptive;
    headroom.adaptive.quantile = fill_rate;
    headroom.fill_rate_named = true;
  } else if (absl::ConsumePrefix(&text, "buffer:") && absl::SimpleAtoi(text, &replicas) && replicas > 0) {
    headroom.sizing = Headroom::Sizing::kStatic;
    headroom.replicas = replicas;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown headroom \"", text,
                     "\"; known: none, buffer:N (N > 0 pods per bursty shape), buffer:adaptive, buffer:adaptive:F "
                     "(a fill rate in (0, 1])"));
  }
  return headroom;
}

bool AnyUsesPriority(const std::vector<Policy>& policies) {
  return std::any_of(policies.begin(), policies.end(), [](const Policy& p) {
    return std::find(p.chain.begin(), p.chain.end(), StockExpander::kPriority) != p.chain.end();
  });
}

}  // namespace topofit::sim
