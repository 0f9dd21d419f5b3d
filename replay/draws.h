#pragma once

// Common random numbers across the policies of one seed (issue 31). Every random choice a replay makes is
// a function of the seed and of what is being decided — the k-th node of a group, the nodes tied for one
// pod, the options tied in one CA loop — never of how many draws came before. Two policies replaying one
// seed then see the same boot delay for the third p4d node they request and the same failure on it, and a
// difference between them is the policies', not the dice's. A single shared stream would hand out its draws
// in decision order, so one extra tie in one world would shift every boot delay after it.

#include <cstdint>
#include <initializer_list>

namespace topofit::sim {

// What a draw decides; part of its key, so that draws of different purposes never coincide.
enum class DrawPurpose : uint64_t {
  kBootDelay = 1,     // a node's provisioning delay: (group, its ordinal among the group's requested nodes)
  kBootFailure = 2,   // whether that node never becomes Ready
  kSchedulerTie = 3,  // kube-scheduler's tie between nodes of equal score: (pod, node)
  kDeviceGpu = 4,     // the device plugin's pick of one free GPU: (pod, node, GPU id)
  kExpanderTie = 5,   // CA's random choice among options left tied: (loop time, group)
};

class Draws {
 public:
  explicit Draws(uint64_t seed) : seed_(seed) {}

  // A 64-bit value, uniform over keys: equal keys give equal values.
  uint64_t Bits(DrawPurpose purpose, std::initializer_list<uint64_t> key) const;
  // Uniform in [0, 1).
  double Unit(DrawPurpose purpose, std::initializer_list<uint64_t> key) const;
  // Uniform in [low, high] (high < low is read as low).
  int64_t Between(int64_t low, int64_t high, DrawPurpose purpose, std::initializer_list<uint64_t> key) const;

 private:
  uint64_t seed_;
};

}  // namespace topofit::sim
