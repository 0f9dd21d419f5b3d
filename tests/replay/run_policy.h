#pragma once

// Replays a test workload under a policy named as `topofit bench` names it.

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "replay/policy.h"
#include "replay/simulator.h"

namespace topofit::sim::testing {

// A policy by the name `topofit bench` knows it by (least-waste chain).
inline Policy Named(const std::string& name) {
  const bool baseline = name == "stock" || name == "tuned";
  const absl::StatusOr<std::vector<Policy>> selected =
      SelectPolicies({.baselines = baseline ? name : "", .policies = baseline ? "" : name});
  REQUIRE(selected.ok());
  REQUIRE(selected->size() == 1);
  return selected->front();
}

inline ReplayResult Run(const Workload& workload, const std::string& policy, uint64_t seed = 1) {
  ReplayOptions options;
  options.seed = seed;
  absl::StatusOr<ReplayResult> result = Replay(workload, Named(policy), options);
  REQUIRE(result.ok());
  return *std::move(result);
}

}  // namespace topofit::sim::testing
