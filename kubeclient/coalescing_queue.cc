#include "kubeclient/coalescing_queue.h"

#include "kubeclient/rest_client.h"

namespace topofit::kubeclient {

CoalescingQueue::CoalescingQueue(Work work, CoalescingQueueOptions options)
    : work_(std::move(work)), options_(std::move(options)), worker_([this] { Run(); }) {}

CoalescingQueue::~CoalescingQueue() { Stop(); }

void CoalescingQueue::Add(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (running_ == key) {
    run_again_ = true;
  } else if (!due_.contains(key)) {
    Schedule(key, options_.clock->Monotonic());
  }
}

void CoalescingQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  if (worker_.joinable()) worker_.join();
}

bool CoalescingQueue::WaitIdle(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return due_.empty() && !running_.has_value(); };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

int64_t CoalescingQueue::retries() const {
  absl::MutexLock lock(&mu_);
  return retries_;
}

void CoalescingQueue::Schedule(const std::string& key, absl::Duration due) {
  due_[key] = due;
  order_.emplace(due, key);
  changed_.SignalAll();
}

void CoalescingQueue::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (order_.empty()) {
      changed_.Wait(&mu_);
      continue;
    }
    const auto [due, key] = *order_.begin();
    const absl::Duration now = options_.clock->Monotonic();
    if (due > now) {
      changed_.WaitWithTimeout(&mu_, due - now);
      continue;
    }
    order_.erase(order_.begin());
    due_.erase(key);
    running_ = key;
    run_again_ = false;
    mu_.Unlock();
    const Outcome outcome = work_(key);
    mu_.Lock();
    running_.reset();
    if (outcome == Outcome::kRetry) {
      ++retries_;
      const int failures = ++failures_[key];
      Schedule(key, options_.clock->Monotonic() + JitteredBackoff(failures, options_.initial_backoff, options_.max_backoff,
                                                  options_.uniform_random));
    } else {
      failures_.erase(key);
      if (run_again_) Schedule(key, options_.clock->Monotonic());
    }
    changed_.SignalAll();
  }
}

}  // namespace topofit::kubeclient
