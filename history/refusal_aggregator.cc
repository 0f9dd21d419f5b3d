#include "history/refusal_aggregator.h"

#include "absl/hash/hash.h"

namespace topofit::history {

bool RefusalAggregator::Keep(Record& record) {
  // A filter that fits is always kept: only a refusal needs its signature (and pays for it).
  std::optional<size_t> refusal;
  if (record.reason != Reason::kFits) refusal = absl::HashOf(record.reason, record.gpus, record.candidates);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = last_.try_emplace(record.correlation_id);
  Last& last = it->second;
  if (added) {
    order_.push_back(record.correlation_id);
    while (order_.size() > max_pods_) {
      last_.erase(order_.front());
      order_.pop_front();
    }
  } else if (refusal && refusal == last.refusal && record.time - last.recorded < window_) {
    ++last.folded;
    return false;
  }
  record.repeats = last.folded;
  last = Last{refusal, record.time, 0};
  return true;
}

}  // namespace topofit::history
