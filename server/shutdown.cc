#include "server/shutdown.h"

#include <pthread.h>
#include <signal.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace topofit::server {
namespace {

sigset_t ShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

absl::Status BlockShutdownSignals() {
  const sigset_t set = ShutdownSignals();
  if (int err = pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0) {
    return absl::InternalError(absl::StrCat("pthread_sigmask: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::Status WaitForShutdownSignal(const std::function<void(int signal)>& on_signal) {
  const sigset_t set = ShutdownSignals();
  int signal = 0;
  if (int err = sigwait(&set, &signal); err != 0) {
    return absl::InternalError(absl::StrCat("sigwait: ", std::strerror(err)));
  }
  on_signal(signal);
  return absl::OkStatus();
}

}  // namespace topofit::server
