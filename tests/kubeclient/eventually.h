#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace topofit::kubeclient::testing {

// How long a test waits for a watcher's thread: a failing test fails in seconds, not hangs.
inline constexpr absl::Duration kPatience = absl::Seconds(2);

// Waits (really) until `done()` holds, up to kPatience.
template <typename F>
bool Eventually(F done) {
  const absl::Time deadline = absl::Now() + kPatience;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

}  // namespace topofit::kubeclient::testing
