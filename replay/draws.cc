#include "replay/draws.h"

#include <algorithm>

namespace topofit::sim {
namespace {

// SplitMix64's finaliser: a bijection of 64-bit values whose output bits each depend on every input bit.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t Draws::Bits(DrawPurpose purpose, std::initializer_list<uint64_t> key) const {
  // Chained, not XORed: (a, b) and (b, a) are different keys.
  uint64_t h = Mix(seed_ ^ Mix(static_cast<uint64_t>(purpose)));
  for (uint64_t part : key) h = Mix(h ^ part);
  return h;
}

double Draws::Unit(DrawPurpose purpose, std::initializer_list<uint64_t> key) const {
  return static_cast<double>(Bits(purpose, key) >> 11) * 0x1.0p-53;  // the top 53 bits: every double exact
}

int64_t Draws::Between(int64_t low, int64_t high, DrawPurpose purpose, std::initializer_list<uint64_t> key) const {
  const uint64_t span = static_cast<uint64_t>(std::max(high, low) - low) + 1;
  // The modulo's bias is below span / 2^64: nothing a replay's delays (a few thousand values) could show.
  return low + static_cast<int64_t>(Bits(purpose, key) % span);
}

}  // namespace topofit::sim
