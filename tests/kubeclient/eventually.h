#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace topofit::kubeclient::testing {

// How long a test waits for a watcher's thread: a failing test fails in seconds, not hangs. A passing
// test never waits it out, so it is sized for the slowest machine that runs the suite: 2 s was exceeded
// once on the 2-core machine with the suite running two at a time (a pod Event recorder test).
inline constexpr absl::Duration kPatience = absl::Seconds(10);

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
