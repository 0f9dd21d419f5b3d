#include "history/recorder.h"

#include <sqlite3.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/cli/scratch_dir.h"
#include "tests/kube/status_matchers.h"

namespace topofit::history {
namespace {

Record Bind(int i) {
  Record r;
  r.time = absl::FromUnixSeconds(1'750'000'000 + i);
  r.kind = Kind::kBind;
  r.reason = Reason::kBound;
  r.correlation_id = absl::StrCat("uid-", i);
  r.pods = {{r.correlation_id, absl::StrCat("ml/p", i)}};
  r.node = "n1";
  return r;
}

struct Counts {
  std::atomic<int64_t> written{0}, dropped{0}, evicted{0}, failures{0};
  RecorderHooks Hooks() {
    return {.on_written = [this](int64_t n) { written += n; },
            .on_dropped = [this](int64_t n) { dropped += n; },
            .on_evicted = [this](const Evictions& e) { evicted += e.by_age + e.by_rows; },
            .on_write_failed = [this](const absl::Status&) { ++failures; }};
  }
};

TEST_CASE("records are written in batches off the caller's thread and retention runs after them", "[history]") {
  auto store = DecisionStore::Open("", {.max_age = absl::Hours(1), .max_rows = 100});
  REQUIRE_OK(store);
  Counts counts;
  {
    AsyncRecorder recorder(**store, {.queue_capacity = 1000, .batch_size = 64}, counts.Hooks());
    for (int i = 0; i < 300; ++i) recorder.Record(Bind(i));
    recorder.Flush();
    CHECK(counts.written == 300);
    CHECK(counts.dropped == 0);
    CHECK(counts.evicted == 200);
    CHECK(*(*store)->Count() == 100);
    recorder.Record(Bind(300));
  }  // the destructor writes what is queued
  CHECK(counts.written == 301);
  auto page = (*store)->Query({.limit = 1});
  REQUIRE_OK(page);
  CHECK(page->records.front().correlation_id == "uid-300");
}

TEST_CASE("a batch is what arrives within the linger, or a full batch at once, and Flush does not wait it out", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  std::mutex mu;
  std::vector<int64_t> batches;  // the size of each transaction, in order
  std::atomic<int64_t> written{0};
  RecorderHooks hooks{.on_written = [&](int64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    batches.push_back(n);
    written += n;
  }};
  // An hour's linger: only a full batch, Flush or the destructor write.
  AsyncRecorder recorder(**store, {.batch_size = 3, .linger = absl::Hours(1)}, std::move(hooks));
  for (int i = 0; i < 3; ++i) recorder.Record(Bind(i));
  for (int waited = 0; written < 3 && waited < 10'000; ++waited) absl::SleepFor(absl::Milliseconds(1));
  REQUIRE(written == 3);
  recorder.Record(Bind(3));
  recorder.Flush();
  std::lock_guard<std::mutex> lock(mu);
  CHECK(batches == std::vector<int64_t>{3, 1});
}

TEST_CASE("a batch ends before the record that would take it past its candidates and pods", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  std::mutex mu;
  std::vector<int64_t> batches;
  RecorderHooks hooks{.on_written = [&](int64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    batches.push_back(n);
  }};
  AsyncRecorder recorder(**store, {.batch_size = 100, .batch_entries = 7, .linger = absl::Hours(1)}, std::move(hooks));
  for (int i = 0; i < 5; ++i) {
    Record r = Bind(i);  // one pod
    r.candidates.resize(2);  // and two candidates: 3 entries
    recorder.Record(r);
  }
  recorder.Flush();
  std::lock_guard<std::mutex> lock(mu);
  CHECK(batches == std::vector<int64_t>{2, 2, 1});  // 3 + 3 = 6 entries; a third record would make 9 > 7
}

TEST_CASE("the writer thread runs at the nice value given, the caller's thread unchanged", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  const int caller = getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  std::atomic<int> writer{-100};
  {
    AsyncRecorder recorder(**store, {.writer_nice = 10},
                           {.on_written = [&](int64_t) { writer = getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())); }});
    recorder.Record(Bind(0));
    recorder.Flush();
  }
  CHECK(writer == std::max(caller, 10));  // raising a nice value needs no privilege; lowering one does
  CHECK(getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())) == caller);
}

TEST_CASE("a full queue drops and counts instead of waiting", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  Counts counts;
  AsyncRecorder recorder(**store, {.queue_capacity = 0}, counts.Hooks());
  for (int i = 0; i < 5; ++i) recorder.Record(Bind(i));
  recorder.Flush();
  CHECK(counts.dropped == 5);
  CHECK(counts.written == 0);
  CHECK(*(*store)->Count() == 0);
}

TEST_CASE("a write the database refuses drops its batch, is reported, and later writes go on", "[history]") {
  cli::testing::ScratchDir dir("history-recorder-locked");
  const std::string path = dir.path("decisions.db");
  auto store = DecisionStore::Open(path);
  REQUIRE_OK(store);
  Counts counts;
  AsyncRecorder recorder(**store, {}, counts.Hooks());
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK);
  recorder.Record(Bind(0));
  recorder.Flush();
  CHECK(counts.failures == 1);
  CHECK(counts.dropped == 1);
  REQUIRE(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(other);
  recorder.Record(Bind(1));
  recorder.Flush();
  CHECK(counts.written == 1);
  CHECK(*(*store)->Count() == 1);
}

}  // namespace
}  // namespace topofit::history

namespace topofit::history {
namespace {

// Keeps the correlation ids it sees.
class Watcher final : public RecordObserver {
 public:
  void Observe(const history::Record& record) override { seen.push_back(record.correlation_id); }
  std::vector<std::string> seen;
};

class Keeper final : public DecisionRecorder {
 public:
  void Record(history::Record record) override { kept.push_back(std::move(record.correlation_id)); }
  std::vector<std::string> kept;
};

TEST_CASE("an observed recorder shows each record to its observers, then hands it on (or to nobody)", "[history]") {
  Watcher first, second;
  Keeper keeper;
  ObservedRecorder observed(&keeper, {&first, &second});
  Record r;
  r.correlation_id = "uid-a";
  observed.Record(r);
  r.correlation_id = "uid-b";
  observed.Record(r);
  CHECK(first.seen == std::vector<std::string>{"uid-a", "uid-b"});
  CHECK(second.seen == first.seen);
  CHECK(keeper.kept == first.seen);

  Watcher alone;
  ObservedRecorder without_history(nullptr, {&alone});  // the history could not be opened: Events still go
  without_history.Record(r);
  CHECK(alone.seen == std::vector<std::string>{"uid-b"});
}

}  // namespace
}  // namespace topofit::history
