#pragma once

#include <mutex>
#include <vector>

#include "history/recorder.h"

namespace topofit::history::testing {

// Keeps what a component records, in order, for tests of what it records.
class MemoryRecorder final : public DecisionRecorder {
 public:
  void Record(history::Record record) override {
    std::lock_guard<std::mutex> lock(mu_);
    records_.push_back(std::move(record));
  }
  std::vector<history::Record> records() const {
    std::lock_guard<std::mutex> lock(mu_);
    return records_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<history::Record> records_;
};

}  // namespace topofit::history::testing
