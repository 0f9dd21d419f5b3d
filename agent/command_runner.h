#pragma once

// Running a program and reading what it prints: how the agent asks nvidia-smi. An interface so tests can
// give a scripted nvidia-smi without a process (the real runner is tested against shell scripts).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace topofit::agent {

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] (a path, or a name looked up on PATH) with the rest as arguments and returns its standard
  // output. Errors: NotFound when the program cannot be started, Unavailable when it exits non-zero or
  // is killed (the message carries the exit code and the start of its standard error), DeadlineExceeded
  // when it runs longer than the runner's timeout (it is killed).
  virtual absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) = 0;
};

// fork + execvp, standard output and error through pipes, killed after `timeout`.
class ProcessRunner final : public CommandRunner {
 public:
  explicit ProcessRunner(absl::Duration timeout) : timeout_(timeout) {}
  absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) override;

 private:
  const absl::Duration timeout_;
};

}  // namespace topofit::agent
