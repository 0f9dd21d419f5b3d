#pragma once

#include <chrono>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace topofit::server {

// The one source of time. Components take a `const Clock&` so tests can drive time by hand
// (tests/server/fake_clock.h); main injects SystemClock() from there.
class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time: what records, Kubernetes objects and logs carry.
  virtual absl::Time Now() const = 0;
  // Time that only moves forward, for timeouts, backoff, polling rounds and lease expiry: a step of the
  // wall clock (NTP, a resumed VM) must neither fire nor stall them. From an arbitrary epoch: only the
  // difference of two readings means anything.
  virtual absl::Duration Monotonic() const = 0;
};

// The machine's clocks: the system's wall clock and its steady one.
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  absl::Duration Monotonic() const override {
    return absl::FromChrono(std::chrono::steady_clock::now().time_since_epoch());
  }
};

// The process's RealClock, for components whose options leave the clock at its default.
inline const Clock& SystemClock() {
  static const RealClock* const clock = new RealClock();  // never destroyed: threads may read it at exit
  return *clock;
}

}  // namespace topofit::server
