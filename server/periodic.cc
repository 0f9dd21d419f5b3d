#include "server/periodic.h"

#include <utility>

namespace topofit::server {

Periodic::Periodic(absl::Duration period, std::function<void()> task)
    : thread_([this, period, task = std::move(task)] {
        std::unique_lock<std::mutex> lock(mu_);
        while (!stop_) {
          lock.unlock();
          task();
          lock.lock();
          wake_.wait_for(lock, absl::ToChronoMilliseconds(period), [this] { return stop_; });
        }
      }) {}

Periodic::~Periodic() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

}  // namespace topofit::server
