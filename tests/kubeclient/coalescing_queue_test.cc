#include "kubeclient/coalescing_queue.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "tests/kubeclient/eventually.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using testing::kPatience;

CoalescingQueueOptions FastRetries() {
  CoalescingQueueOptions options;
  options.initial_backoff = absl::Milliseconds(1);
  options.max_backoff = absl::Milliseconds(2);
  options.uniform_random = [] { return 0.5; };
  return options;
}

TEST_CASE("CoalescingQueue: a key runs once for the adds while it waits, once more for those while it runs",
          "[coalescing-queue]") {
  absl::Mutex mu;
  std::map<std::string, int> runs;
  absl::Notification started, release;
  CoalescingQueue queue(
      [&](const std::string& key) {
        if (key == "a" && !started.HasBeenNotified()) {
          started.Notify();
          release.WaitForNotification();
        }
        absl::MutexLock lock(&mu);
        ++runs[key];
        return CoalescingQueue::Outcome::kDone;
      },
      FastRetries());
  queue.Add("a");
  REQUIRE(started.WaitForNotificationWithTimeout(kPatience));
  for (int i = 0; i < 3; ++i) queue.Add("a");  // while "a" runs: once more afterwards
  for (int i = 0; i < 3; ++i) queue.Add("b");  // while "b" waits: once
  release.Notify();
  REQUIRE(queue.WaitIdle(kPatience));
  absl::MutexLock lock(&mu);
  CHECK(runs == std::map<std::string, int>{{"a", 2}, {"b", 1}});
}

TEST_CASE("CoalescingQueue: work that fails runs again after a backoff until it succeeds", "[coalescing-queue]") {
  absl::Mutex mu;
  int attempts = 0;
  CoalescingQueue queue(
      [&](const std::string&) {
        absl::MutexLock lock(&mu);
        return ++attempts < 3 ? CoalescingQueue::Outcome::kRetry : CoalescingQueue::Outcome::kDone;
      },
      FastRetries());
  queue.Add("a");
  REQUIRE(queue.WaitIdle(kPatience));
  CHECK(queue.retries() == 2);
  absl::MutexLock lock(&mu);
  CHECK(attempts == 3);
}

TEST_CASE("CoalescingQueue: Stop leaves what waits undone", "[coalescing-queue]") {
  CoalescingQueueOptions slow = FastRetries();
  slow.initial_backoff = slow.max_backoff = absl::Hours(1);
  CoalescingQueue queue([](const std::string&) { return CoalescingQueue::Outcome::kRetry; }, slow);
  queue.Add("a");
  REQUIRE(testing::Eventually([&] { return queue.retries() == 1; }));
  CHECK_FALSE(queue.WaitIdle(absl::ZeroDuration()));  // "a" waits an hour for its retry
  queue.Stop();                                       // at once, not in an hour
  CHECK(queue.retries() == 1);
}

TEST_CASE("CoalescingQueue: a retry is due by monotonic time, whatever the wall clock does", "[coalescing-queue]") {
  server::FakeClock clock;
  CoalescingQueueOptions hourly = FastRetries();
  hourly.initial_backoff = hourly.max_backoff = absl::Hours(1);
  hourly.clock = &clock;
  absl::Mutex mu;
  std::map<std::string, int> runs;
  CoalescingQueue queue(
      [&](const std::string& key) {
        absl::MutexLock lock(&mu);
        return ++runs[key] == 1 && key == "a" ? CoalescingQueue::Outcome::kRetry : CoalescingQueue::Outcome::kDone;
      },
      hourly);
  queue.Add("a");
  REQUIRE(testing::Eventually([&] { return queue.retries() == 1; }));
  // NTP steps the wall clock two hours on: the retry is not due. Adding "b" wakes the worker to look.
  clock.Step(absl::Hours(2));
  queue.Add("b");
  REQUIRE(testing::Eventually([&] {
    absl::MutexLock lock(&mu);
    return runs["b"] == 1;
  }));
  CHECK_FALSE(queue.WaitIdle(absl::ZeroDuration()));
  // An hour passes (the backoff is 45 minutes, jittered at the middle): it is.
  clock.Advance(absl::Hours(1));
  queue.Add("b");
  REQUIRE(queue.WaitIdle(kPatience));
  absl::MutexLock lock(&mu);
  CHECK(runs == std::map<std::string, int>{{"a", 2}, {"b", 2}});
}

}  // namespace
}  // namespace topofit::kubeclient
