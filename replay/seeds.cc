#include "replay/seeds.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace topofit::sim {

absl::StatusOr<std::vector<uint64_t>> ParseSeeds(absl::string_view text) {
  constexpr size_t kMaxSeeds = 1000;
  std::vector<uint64_t> seeds;
  std::set<uint64_t> seen;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    const std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    uint64_t first = 0, last = 0;
    if (!absl::SimpleAtoi(ends[0], &first) || !absl::SimpleAtoi(ends.size() == 2 ? ends[1] : ends[0], &last) ||
        last < first) {
      return absl::InvalidArgumentError(
          absl::StrCat("seeds \"", text, "\": want seeds and ranges such as 1-5 or 1,3,9-10, not \"", item, "\""));
    }
    for (uint64_t seed = first; seed <= last; ++seed) {
      if (!seen.insert(seed).second) {
        return absl::InvalidArgumentError(absl::StrCat("seeds \"", text, "\": seed ", seed, " is listed twice"));
      }
      if (seeds.size() >= kMaxSeeds) {
        return absl::InvalidArgumentError(absl::StrCat("seeds \"", text, "\": more than ", kMaxSeeds, " seeds"));
      }
      seeds.push_back(seed);
    }
  }
  return seeds;
}

Spread SpreadOf(const std::vector<double>& values) {
  Spread spread;
  if (values.empty()) return spread;
  for (double value : values) spread.mean += value;
  spread.mean /= static_cast<double>(values.size());
  if (values.size() < 2) return spread;
  double squares = 0;
  for (double value : values) squares += (value - spread.mean) * (value - spread.mean);
  spread.sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return spread;
}

}  // namespace topofit::sim
