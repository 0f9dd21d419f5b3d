#pragma once

#include <random>
#include <string>

namespace topofit::testing {

// `good` with one to three random edits (a byte changed, up to four erased, one inserted): inputs near a
// valid encoding, which reach past its first field, for property tests of the wire readers.
inline std::string Mutated(const std::string& good, std::mt19937& random) {
  std::string bytes = good;
  for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
    const size_t at = random() % bytes.size();
    switch (random() % 3) {
      case 0: bytes[at] = static_cast<char>(random()); break;
      case 1: bytes.erase(at, 1 + random() % 4); break;
      default: bytes.insert(at, 1, static_cast<char>(random())); break;
    }
    if (bytes.empty()) bytes = good;
  }
  return bytes;
}

}  // namespace topofit::testing
