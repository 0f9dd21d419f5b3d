#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace topofit::server {

// Runs `task` at once and then every `period`, on a thread of its own, until the object goes (the
// destructor wakes the thread and waits for the task under way to end). For the refreshers of the servers:
// the idle-GPU gauge, the drain guard.
class Periodic {
 public:
  Periodic(absl::Duration period, std::function<void()> task);
  ~Periodic();
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace topofit::server
