#include "history/recorder.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace topofit::history {

AsyncRecorder::AsyncRecorder(DecisionStore& store, RecorderOptions options, RecorderHooks hooks)
    : store_(store), options_(options), hooks_(std::move(hooks)), writer_([this] { Run(); }) {}

AsyncRecorder::~AsyncRecorder() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void AsyncRecorder::Record(history::Record record) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() < options_.queue_capacity && !stop_) {
      queue_.push_back(std::move(record));
      ++queued_;
      if (queue_.size() == 1 || queue_.size() == options_.batch_size) wake_.notify_one();
      return;
    }
  }
  if (hooks_.on_dropped) hooks_.on_dropped(1);
}

void AsyncRecorder::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = queued_;
  ++flushing_;
  wake_.notify_one();
  written_.wait(lock, [&] { return handled_ >= target; });
  --flushing_;
}

void AsyncRecorder::Run() {
  // Linux: the nice value of this thread alone. Failing (a sandbox refusing it) leaves it at the caller's.
  if (options_.writer_nice != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), options_.writer_nice);
  std::vector<history::Record> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is written
      const auto ready = [&] { return stop_ || flushing_ > 0 || queue_.size() >= options_.batch_size; };
      if (!ready()) wake_.wait_for(lock, absl::ToChronoNanoseconds(options_.linger), ready);
      size_t n = 0;
      for (size_t entries = 0; n < queue_.size() && n < options_.batch_size; ++n) {
        entries += queue_[n].candidates.size() + queue_[n].pods.size();
        if (n > 0 && entries > options_.batch_entries) break;
      }
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
      queue_.erase(queue_.begin(), queue_.begin() + n);
    }
    absl::Time newest = absl::InfinitePast();
    for (const history::Record& r : batch) newest = std::max(newest, r.time);
    const absl::Status written = store_.Append(batch);
    if (written.ok()) {
      if (hooks_.on_written) hooks_.on_written(static_cast<int64_t>(batch.size()));
      absl::StatusOr<Evictions> evicted = store_.Retain(newest);
      if (!evicted.ok() && hooks_.on_write_failed) hooks_.on_write_failed(evicted.status());
      if (evicted.ok() && (evicted->by_age > 0 || evicted->by_rows > 0 || evicted->by_bytes > 0) && hooks_.on_evicted) {
        hooks_.on_evicted(*evicted);
      }
      if (hooks_.on_bytes) {
        if (absl::StatusOr<int64_t> bytes = store_.Bytes(); bytes.ok()) hooks_.on_bytes(*bytes);
      }
    } else {
      if (hooks_.on_write_failed) hooks_.on_write_failed(written);
      if (hooks_.on_dropped) hooks_.on_dropped(static_cast<int64_t>(batch.size()));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      handled_ += batch.size();
    }
    written_.notify_all();
  }
}

}  // namespace topofit::history
