#pragma once

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/clock.h"

namespace topofit::server {

// A clock that moves only when the test says so. Thread-safe, because the code under test may read it
// from server threads while the test advances it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}

  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace topofit::server
