#pragma once

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/clock.h"

namespace topofit::server {

// A clock that moves only when the test says so. Thread-safe, because the code under test may read it
// from server threads while the test advances it. Advance moves both its times; Set steps the wall clock
// alone, as NTP would, and the monotonic time only by as much as that moved it forward.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}

  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  absl::Duration Monotonic() const override {
    absl::MutexLock lock(&mu_);
    return monotonic_;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    if (t > now_) monotonic_ += t - now_;
    now_ = t;
  }
  // A wall-clock step, backward or forward, that leaves the monotonic time where it is.
  void Step(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
    monotonic_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_;
  absl::Duration monotonic_ = absl::Hours(1);  // an arbitrary epoch, as the steady clock's is
};

}  // namespace topofit::server
