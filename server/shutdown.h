#pragma once

// Graceful shutdown on SIGTERM (Kubernetes' stop signal) and SIGINT (Ctrl-C).
//
// The signals are blocked and then received synchronously with sigwait(), so no code runs inside a signal
// handler and the callback may do anything (stop servers, flush logs). main calls BlockShutdownSignals()
// before it starts any thread, because threads inherit the mask: a thread with the signals unblocked would
// otherwise take the signal and the process would die with the default action.

#include <functional>

#include "absl/status/status.h"

namespace topofit::server {

// Blocks SIGTERM and SIGINT in the calling thread (and so in every thread it creates afterwards).
absl::Status BlockShutdownSignals();

// Waits until SIGTERM or SIGINT is delivered, then calls `on_signal` with its number and returns.
// BlockShutdownSignals() must have been called first.
absl::Status WaitForShutdownSignal(const std::function<void(int signal)>& on_signal);

}  // namespace topofit::server
