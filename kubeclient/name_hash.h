#pragma once

// The stable hash that keeps derived object names unique when they are cut to a length limit.

#include <cstdint>

#include "absl/strings/string_view.h"

namespace topofit::kubeclient {

// 64-bit FNV-1a: the same on every platform and run, so a name derived once is derived again the same.
inline uint64_t Fnv1a64(absl::string_view text) {
  uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace topofit::kubeclient
