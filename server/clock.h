#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace topofit::server {

// The one source of wall-clock time. Components take a `const Clock&` so tests can drive time by hand
// (tests/server/fake_clock.h); the RealClock is constructed once, in main, and injected from there.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace topofit::server
