#pragma once

// Several seeds of one comparison: which seeds (`topofit bench --seeds 1-5`) and how a figure spreads
// across them.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::sim {

// "1-5", "7", "1,3,9-10" -> the seeds in that order; InvalidArgument for anything else (an empty list, a
// reversed range, a seed listed twice, more than 1,000 seeds).
absl::StatusOr<std::vector<uint64_t>> ParseSeeds(absl::string_view text);

// The mean and the sample standard deviation (n - 1 in the denominator; 0 for fewer than two values).
struct Spread {
  double mean = 0;
  double sd = 0;
};
Spread SpreadOf(const std::vector<double>& values);

}  // namespace topofit::sim
