#include "topology/domain_placement.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace topofit::topology {
namespace {

// Cost of a (partial) placement, compared lexicographically: nodes touched, then touched nodes left
// partly free.
using Cost = std::pair<int, int>;
constexpr Cost kImpossible{1 << 20, 1 << 20};

Cost Add(Cost a, Cost b) { return {a.first + b.first, a.second + b.second}; }

Cost TakeCost(int take, int free) {
  if (take == 0) return {0, 0};
  return {1, take < free ? 1 : 0};
}

absl::Status ValidateMembers(const std::vector<DomainMember>& members) {
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].topology == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("domain member ", i, " has no topology"));
    }
    const std::optional<DomainId>& domain = members[i].topology->domain();
    if (!domain) return absl::InvalidArgumentError(absl::StrCat("domain member ", i, " is in no NVLink domain"));
    if (*domain != *members.front().topology->domain()) {
      return absl::InvalidArgumentError(absl::StrCat("domain member ", i, " is in domain ", domain->value,
                                                     ", member 0 in ", members.front().topology->domain()->value));
    }
    if (!members[i].topology->all_gpus().contains(members[i].free)) {
      return absl::InvalidArgumentError(absl::StrCat("domain member ", i, " lists free GPUs it does not have"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DomainPlacement> PlaceInDomain(const std::vector<DomainMember>& members, int gpus) {
  if (gpus <= 0) return absl::InvalidArgumentError(absl::StrCat("cannot place ", gpus, " GPUs"));
  if (absl::Status status = ValidateMembers(members); !status.ok()) return status;
  int total_free = 0;
  for (const DomainMember& member : members) total_free += member.free.size();
  if (total_free < gpus) {
    return absl::ResourceExhaustedError(
        absl::StrCat(gpus, " GPUs requested, the domain has ", total_free, " free on ", members.size(), " nodes"));
  }

  // best[i][c]: the cheapest way to place c GPUs on members i.. n-1.
  const size_t n = members.size();
  std::vector<std::vector<Cost>> best(n + 1, std::vector<Cost>(gpus + 1, kImpossible));
  best[n][0] = {0, 0};
  for (size_t i = n; i-- > 0;) {
    const int free = members[i].free.size();
    for (int c = 0; c <= gpus; ++c) {
      for (int take = 0; take <= std::min(free, c); ++take) {
        if (best[i + 1][c - take] == kImpossible) continue;
        best[i][c] = std::min(best[i][c], Add(TakeCost(take, free), best[i + 1][c - take]));
      }
    }
  }

  // Walk forward; among equally cheap choices take the most from the earliest member.
  DomainPlacement placement;
  int remaining = gpus;
  for (size_t i = 0; i < n && remaining > 0; ++i) {
    const int free = members[i].free.size();
    for (int take = std::min(free, remaining); take >= 0; --take) {
      if (best[i + 1][remaining - take] == kImpossible) continue;
      if (Add(TakeCost(take, free), best[i + 1][remaining - take]) != best[i][remaining]) continue;
      if (take > 0) {
        absl::StatusOr<Allocation> allocation = Allocate(*members[i].topology, members[i].free, {.gpus = take});
        if (!allocation.ok()) return allocation.status();
        placement.parts.push_back({i, *allocation});
      }
      remaining -= take;
      break;
    }
  }
  return placement;
}

}  // namespace topofit::topology
