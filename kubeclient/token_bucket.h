#pragma once

#include <algorithm>

#include "absl/time/time.h"

namespace topofit::kubeclient {

// Client-side rate limit, as client-go's QPS/Burst: `burst` tokens, refilled at `qps` per second. Not
// thread-safe; the caller holds a lock. Reserve() always takes a token, possibly going into debt, and
// says how long to wait before using it, so the caller can sleep without holding its lock.
class TokenBucket {
 public:
  // qps <= 0 disables the limit.
  TokenBucket(double qps, int burst, absl::Duration now)
      : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

  absl::Duration Reserve(absl::Duration now) {
    if (qps_ <= 0) return absl::ZeroDuration();
    if (now > last_) {
      tokens_ = std::min<double>(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
      last_ = now;
    }
    tokens_ -= 1;
    if (tokens_ >= 0) return absl::ZeroDuration();
    return absl::Seconds(-tokens_ / qps_);
  }

 private:
  double qps_;
  int burst_;
  double tokens_;
  absl::Duration last_;
};

}  // namespace topofit::kubeclient
