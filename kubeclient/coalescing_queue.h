#pragma once

// A per-key coalescing work queue with one worker thread, for writes where only the latest state of an
// object matters (the ledger's pod annotations): a key added while it waits is not added twice, a key
// added while its work runs runs once more afterwards, and work that fails runs again after a backoff of
// its own (exponential with equal jitter, per key, reset by a success). The work reads the object's
// state when it runs, so a key that waited publishes what is current then, never an older state.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/clock.h"

namespace topofit::kubeclient {

struct CoalescingQueueOptions {
  absl::Duration initial_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Seconds(30);
  std::function<double()> uniform_random;  // in [0, 1); null: a real generator
  const server::Clock* clock = &server::SystemClock();  // its monotonic time dates the work; must outlive the queue
};

class CoalescingQueue {
 public:
  enum class Outcome { kDone, kRetry };
  // Runs on the worker thread, never under the queue's lock.
  using Work = std::function<Outcome(const std::string& key)>;

  // Starts the worker.
  CoalescingQueue(Work work, CoalescingQueueOptions options);
  ~CoalescingQueue();  // Stop()s
  CoalescingQueue(const CoalescingQueue&) = delete;
  CoalescingQueue& operator=(const CoalescingQueue&) = delete;

  void Add(const std::string& key);
  // Ends the worker after the work that is running; what is still queued is not done. Idempotent.
  void Stop();
  // Waits up to `timeout` until nothing is queued or running (retries included); true when idle.
  bool WaitIdle(absl::Duration timeout) const;
  int64_t retries() const;

 private:
  void Run();
  void Schedule(const std::string& key, absl::Duration due) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Work work_;
  const CoalescingQueueOptions options_;
  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  std::map<std::string, absl::Duration> due_ ABSL_GUARDED_BY(mu_);      // queued keys, by monotonic time
  std::set<std::pair<absl::Duration, std::string>> order_ ABSL_GUARDED_BY(mu_);  // the same, soonest first
  std::map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);           // consecutive, per key
  std::optional<std::string> running_ ABSL_GUARDED_BY(mu_);
  bool run_again_ ABSL_GUARDED_BY(mu_) = false;  // the running key was added meanwhile
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t retries_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread worker_;
};

}  // namespace topofit::kubeclient
