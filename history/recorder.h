#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "history/record.h"
#include "history/store.h"

namespace topofit::history {

// Where the extender, the expander and the replay hand their decisions. Must never block a decision:
// an implementation queues, or drops and counts.
class DecisionRecorder {
 public:
  virtual ~DecisionRecorder() = default;
  virtual void Record(history::Record record) = 0;
};

// Sees each record on the caller's thread, by reference, before it is stored (the pod Events): must not
// block, and copies only what it keeps.
class RecordObserver {
 public:
  virtual ~RecordObserver() = default;
  virtual void Observe(const history::Record& record) = 0;
};

// Shows each record to `observers`, then hands it to `next` (null: no history is kept).
class ObservedRecorder final : public DecisionRecorder {
 public:
  ObservedRecorder(DecisionRecorder* next, std::vector<RecordObserver*> observers)
      : next_(next), observers_(std::move(observers)) {}
  void Record(history::Record record) override {
    for (RecordObserver* observer : observers_) observer->Observe(record);
    if (next_ != nullptr) next_->Record(std::move(record));
  }

 private:
  DecisionRecorder* const next_;
  const std::vector<RecordObserver*> observers_;
};

// What the writer reports, for metrics and logs (called on the writer thread, or on the caller's for drops).
struct RecorderHooks {
  std::function<void(int64_t)> on_written{};        // records committed
  std::function<void(int64_t)> on_dropped{};        // records dropped: the queue was full or a write failed
  std::function<void(const Evictions&)> on_evicted{};
  std::function<void(const absl::Status&)> on_write_failed{};
  std::function<void(int64_t)> on_bytes{};           // the database's bytes after a batch and its retention
};

struct RecorderOptions {
  size_t queue_capacity = 65'536;  // records waiting for the writer; past it Record drops
  size_t batch_size = 512;          // records per transaction at most
  // Candidates and pods per transaction at most (a record with more is a batch alone): a refusal over 5,000
  // nodes is about 0.9 MB, and a transaction grows the WAL and the database by what it writes before
  // retention runs (DecisionStore's byte cap leaves room for a few MB of it).
  size_t batch_entries = 20'000;
  // How long the writer lets a batch gather once a record is queued. A transaction costs SQLite about
  // as much as the few records in it (the commit's WAL writes, the retention pass after it): written one
  // by one, a 100-node filter's record cost the process a third as much CPU again as the filter itself.
  absl::Duration linger = absl::Milliseconds(100);
  // The writer thread's nice value: history yields the CPU to the decisions it records. On a busy machine
  // a batch written at the same priority as the requests delayed the one it coincided with (a 100-node
  // filter's p99 doubled); at 10 the kernel lets it take about a tenth of a contended core, and the queue
  // absorbs the lag. 0 where the writer must keep up (a replay, whose queue is unbounded).
  int writer_nice = 10;
};

// Queues records and writes them to a DecisionStore in batches on its own thread, off the request path:
// Record takes a lock for a push and never waits for the database. A batch is what arrived within
// `linger` of its first record, or `batch_size` records, whichever comes first. A full queue drops the record and
// counts it; a failed write (the file locked by another process, the disk full) drops its batch, counts
// and reports it, and the writer goes on with the next. After each batch, retention runs against the
// newest record's time. Flush waits until everything queued so far is written (tests, the replay's end);
// the destructor flushes and stops the writer.
class AsyncRecorder final : public DecisionRecorder {
 public:
  AsyncRecorder(DecisionStore& store, RecorderOptions options = {}, RecorderHooks hooks = {});
  ~AsyncRecorder() override;

  void Record(history::Record record) override;
  void Flush();

 private:
  void Run();

  DecisionStore& store_;
  const RecorderOptions options_;
  const RecorderHooks hooks_;
  std::mutex mu_;
  std::condition_variable wake_;      // the writer: records queued, or stop
  std::condition_variable written_;   // Flush: the writer caught up
  std::deque<history::Record> queue_;
  uint64_t queued_ = 0;   // records ever accepted
  uint64_t handled_ = 0;  // of those, written or dropped by the writer
  int flushing_ = 0;      // Flush calls waiting: the writer does not linger for them
  bool stop_ = false;
  std::thread writer_;
};

}  // namespace topofit::history
