#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

#include "replay/workload.h"

namespace topofit::sim {

// Distributions written out over std::mt19937_64 (whose output the standard fixes), so that a seed gives
// the same workload with any standard library, unlike std::*_distribution.
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}

  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  SimTime UniformTime(SimTime end) { return static_cast<SimTime>(Uniform() * static_cast<double>(end)); }
  // Log-normal with this median, clamped to [low, high] so one draw cannot dominate a run.
  SimTime LogNormal(SimTime median, double sigma, SimTime low, SimTime high) {
    const double normal = std::sqrt(-2 * std::log(1 - Uniform())) * std::cos(2 * std::numbers::pi * Uniform());
    const double value = static_cast<double>(median) * std::exp(sigma * normal);
    return std::clamp(static_cast<SimTime>(value), low, high);
  }
  // 1, 2, ... with this mean.
  int64_t Geometric(double mean) {
    return 1 + static_cast<int64_t>(std::log(1 - Uniform()) / std::log(1 - 1 / mean));
  }
  // An index into `weights`, with probability proportional to its weight.
  template <size_t N>
  size_t Pick(const double (&weights)[N]) {
    double total = 0;
    for (double weight : weights) total += weight;
    double draw = Uniform() * total;
    for (size_t i = 0; i + 1 < N; ++i) {
      if (draw < weights[i]) return i;
      draw -= weights[i];
    }
    return N - 1;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace topofit::sim
