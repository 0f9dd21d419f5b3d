#include "topology/allocator.h"

#include <cmath>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "topology/combinations.h"
#include "topology/quoted.h"

namespace topofit::topology {
namespace {

// The objective's total order (see Fit): true when `a` is the better allocation.
bool Better(const Allocation& a, const Allocation& b) {
  if (a.quality.bandwidth_mbps != b.quality.bandwidth_mbps) {
    return a.quality.bandwidth_mbps > b.quality.bandwidth_mbps;
  }
  if (a.quality.weakest != b.quality.weakest) return a.quality.weakest < b.quality.weakest;
  if (a.leftover_cohesion != b.leftover_cohesion) return a.leftover_cohesion > b.leftover_cohesion;
  // Lexicographically smaller id list: the set holding the lowest GPU on which the two differ.
  const uint32_t differ = a.gpus.mask() ^ b.gpus.mask();
  return (a.gpus.mask() & differ & (~differ + 1)) != 0;
}

// Whether every pair of `gpus` has the same link class and bandwidth (an NVSwitch node's free GPUs). Then
// every set of one size ties on bandwidth, weakest link and leftover cohesion, which are all functions of
// the pairs (set_quality.h), and only the lexicographically smallest set can win.
bool PairsAlike(const SetQualityTable& table, GpuSet gpus) {
  std::optional<SetQuality> first;
  for (uint32_t a = gpus.mask(); a != 0; a &= a - 1) {
    const uint32_t low = a & (~a + 1);
    for (uint32_t b = a & (a - 1); b != 0; b &= b - 1) {
      const SetQuality pair = table.Of(GpuSet::FromMask(low | (b & (~b + 1))));
      if (!first) first = pair;
      if (pair.bandwidth_mbps != first->bandwidth_mbps || pair.weakest != first->weakest) return false;
    }
  }
  return true;
}

// The `count` lowest GPUs of `gpus`.
GpuSet Lowest(GpuSet gpus, int count) {
  uint32_t mask = gpus.mask();
  uint32_t kept = 0;
  for (int i = 0; i < count; ++i, mask &= mask - 1) kept |= mask & (~mask + 1);
  return GpuSet::FromMask(kept);
}

bool MeetsBandwidth(const SetQuality& quality, int gpus, const AllocationRequest& request) {
  // A single GPU runs no collective, so a bandwidth floor does not apply to it.
  return gpus == 1 || quality.bandwidth_mbps >= request.min_bandwidth_mbps;
}

}  // namespace

absl::StatusOr<FitResult> Fit(const Topology& topology, GpuSet free, const AllocationRequest& request) {
  const int k = request.gpus;
  if (k <= 0) return absl::InvalidArgumentError(absl::StrCat("cannot allocate ", k, " GPUs"));
  if (k > topology.gpu_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(k, " GPUs requested from a node of ", topology.gpu_count()));
  }
  if (!topology.all_gpus().contains(free)) {
    return absl::InvalidArgumentError(absl::StrCat("free GPUs {", free.ToString(), "} are not all on this node (GPUs 0..",
                                                   topology.gpu_count() - 1, ")"));
  }
  if (!free.contains(request.required) || request.required.size() > k) {
    return absl::InvalidArgumentError(absl::StrCat("required GPUs {", request.required.ToString(),
                                                   "} are not all free, or more than ", k));
  }
  FitResult result;
  if (free.size() < k) {
    result.insufficient.push_back(
        {Insufficiency::Kind::kGpuCount, k, free.size()});
    return result;
  }

  const SetQualityTable& table = topology.quality();
  LinkClass best_weakest = LinkClass::kSys, best_weakest_meeting_bandwidth = LinkClass::kSys;
  bool any_meets_bandwidth = false;
  const GpuSet searched = free.without(request.required);
  const int rest_size = k - request.required.size();
  const auto judge = [&](GpuSet rest) {
    const GpuSet set = rest | request.required;
    const GpuSet leftover = free.without(set);
    const Allocation candidate{set, table.Of(set), leftover, table.Cohesion(leftover)};
    if (!result.best_reachable || Better(candidate, *result.best_reachable)) result.best_reachable = candidate;
    const bool meets_link = IsAtLeast(candidate.quality.weakest, request.min_link);
    const bool meets_bandwidth = MeetsBandwidth(candidate.quality, k, request);
    best_weakest = std::min(best_weakest, candidate.quality.weakest);
    if (meets_bandwidth) {
      any_meets_bandwidth = true;
      best_weakest_meeting_bandwidth = std::min(best_weakest_meeting_bandwidth, candidate.quality.weakest);
    }
    if (meets_link && meets_bandwidth && (!result.chosen || Better(candidate, *result.chosen))) {
      result.chosen = candidate;
    }
  };
  // C(16, 8) = 12,870 sets on a 16-GPU NVSwitch node, all alike: the one that can win is judged alone.
  if (PairsAlike(table, free)) {
    judge(Lowest(searched, rest_size));
  } else {
    ForEachSubsetOfSize(searched, rest_size, judge);
  }
  if (result.chosen) return result;

  if (!any_meets_bandwidth) {
    result.insufficient.push_back({Insufficiency::Kind::kMinBandwidth, request.min_bandwidth_mbps,
                                   result.best_reachable->quality.bandwidth_mbps});
  }
  // Report the link either because no set has it, or because none has it together with the bandwidth.
  const LinkClass reachable = any_meets_bandwidth ? best_weakest_meeting_bandwidth : best_weakest;
  if (!IsAtLeast(reachable, request.min_link)) {
    result.insufficient.push_back({Insufficiency::Kind::kMinLink, static_cast<int64_t>(request.min_link),
                                   static_cast<int64_t>(reachable)});
  }
  return result;
}

absl::StatusOr<Allocation> Allocate(const Topology& topology, GpuSet free, const AllocationRequest& request) {
  absl::StatusOr<FitResult> fit = Fit(topology, free, request);
  if (!fit.ok()) return fit.status();
  if (fit->chosen) return *fit->chosen;
  const bool too_few = fit->insufficient.front().kind == Insufficiency::Kind::kGpuCount;
  const std::string message = Explain(*fit);
  return too_few ? absl::ResourceExhaustedError(message) : absl::FailedPreconditionError(message);
}

absl::StatusOr<FitResult> FitEmptyNode(const Topology& topology, const AllocationRequest& request) {
  return Fit(topology, topology.all_gpus(), request);
}

std::string Explain(const FitResult& result) {
  if (result.chosen) {
    return absl::StrCat("GPUs ", AllocationText(*result.chosen));
  }
  std::string out;
  for (const Insufficiency& i : result.insufficient) {
    if (!out.empty()) out += "; ";
    out += ShortfallText(i);
  }
  if (result.best_reachable) {
    absl::StrAppend(&out, " (best set ", AllocationText(*result.best_reachable), ")");
  }
  return out;
}

std::string AllocationText(const Allocation& allocation) {
  return absl::StrCat(allocation.gpus.ToString(), ": ", FormatBandwidth(allocation.quality.bandwidth_mbps),
                      ", weakest link ", LinkClassName(allocation.quality.weakest));
}

std::string ShortfallText(const Insufficiency& shortfall) {
  switch (shortfall.kind) {
    case Insufficiency::Kind::kGpuCount:
      return absl::StrCat("needs ", shortfall.requested, " GPUs, ", shortfall.available, " free");
    case Insufficiency::Kind::kMinLink:
      return absl::StrCat("needs links of ", LinkClassName(static_cast<LinkClass>(shortfall.requested)),
                          " or better, best reachable is ", LinkClassName(static_cast<LinkClass>(shortfall.available)));
    case Insufficiency::Kind::kMinBandwidth:
      return absl::StrCat("needs ", FormatBandwidth(shortfall.requested), " of bandwidth, best reachable is ",
                          FormatBandwidth(shortfall.available));
  }
  return "";
}

std::string FormatBandwidth(int64_t mbps) {
  if (mbps % 1000 == 0) return absl::StrCat(mbps / 1000, "GB/s");
  return absl::StrFormat("%.1fGB/s", static_cast<double>(mbps) / 1000.0);
}

absl::StatusOr<int64_t> ParseBandwidth(absl::string_view text) {
  std::string s = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(text));
  size_t unit_at = 0;
  while (unit_at < s.size() && (absl::ascii_isdigit(s[unit_at]) || s[unit_at] == '.')) ++unit_at;
  double value = 0;
  absl::string_view unit = absl::StripAsciiWhitespace(absl::string_view(s).substr(unit_at));
  if (!absl::SimpleAtod(s.substr(0, unit_at), &value) || !std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat("not a bandwidth: ", Quoted(text), " (expected e.g. 200GB/s)"));
  }
  double scale = 0;
  if (unit == "MB/S" || unit == "MB" || unit == "M") scale = 1;
  if (unit == "GB/S" || unit == "GB" || unit == "G") scale = 1e3;
  if (unit == "TB/S" || unit == "TB" || unit == "T") scale = 1e6;
  if (scale == 0 || value * scale > 1e12) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a bandwidth: ", Quoted(text), " (units: MB/s, GB/s, TB/s; e.g. 200GB/s)"));
  }
  return static_cast<int64_t>(std::llround(value * scale));
}

}  // namespace topofit::topology
