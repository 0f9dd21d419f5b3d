#include "agent/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/clock.h"

namespace topofit::agent {
namespace {

// Bytes of standard error quoted in an error message.
constexpr size_t kStderrQuote = 200;

void CloseBoth(int fds[2]) {
  close(fds[0]);
  close(fds[1]);
}

}  // namespace

absl::StatusOr<std::string> ProcessRunner::Run(const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("no command");
  int out[2];
  int err[2];
  int exec_failed[2];  // close-on-exec: EOF means exec succeeded, an errno means it did not
  if (pipe2(out, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    CloseBoth(out);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (pipe2(exec_failed, O_CLOEXEC) != 0) {
    CloseBoth(out);
    CloseBoth(err);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    CloseBoth(out);
    CloseBoth(err);
    CloseBoth(exec_failed);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec. The agent blocks SIGTERM in every thread;
    // nvidia-smi gets the default mask back.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    execvp(args[0], args.data());
    const int code = errno;
    (void)!write(exec_failed[1], &code, sizeof(code));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(exec_failed[1]);

  int exec_errno = 0;
  const bool exec_error = read(exec_failed[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno);
  close(exec_failed[0]);

  std::string stdout_text;
  std::string stderr_text;
  // A timeout, so monotonic time: a step of the wall clock must neither kill nor spare the command.
  const server::Clock& clock = server::SystemClock();
  const absl::Duration deadline = clock.Monotonic() + timeout_;
  bool timed_out = false;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    const absl::Duration left = deadline - clock.Monotonic();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (pollfd& fd : fds) {
      if (fd.fd < 0 || fd.revents == 0) continue;
      char buffer[4096];
      const ssize_t n = read(fd.fd, buffer, sizeof(buffer));
      if (n > 0) {
        (fd.fd == out[0] ? stdout_text : stderr_text).append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fd.fd);
        fd.fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  if (timed_out) kill(pid, SIGKILL);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }

  if (exec_error) {
    return absl::NotFoundError(absl::StrCat("cannot run ", argv[0], ": ", std::strerror(exec_errno)));
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " did not finish within ", absl::FormatDuration(timeout_), "; killed"));
  }
  const absl::string_view quoted = absl::string_view(stderr_text).substr(0, kStderrQuote);
  if (WIFSIGNALED(wait_status)) {
    return absl::UnavailableError(absl::StrCat(argv[0], " killed by signal ", WTERMSIG(wait_status), ": ", quoted));
  }
  if (WEXITSTATUS(wait_status) != 0) {
    return absl::UnavailableError(
        absl::StrCat(argv[0], " exited with status ", WEXITSTATUS(wait_status), ": ", quoted));
  }
  return stdout_text;
}

}  // namespace topofit::agent
