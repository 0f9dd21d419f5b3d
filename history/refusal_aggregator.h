#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/time/time.h"
#include "history/record.h"

namespace topofit::history {

// Folds a pod's repeated refusals. kube-scheduler retries an unschedulable pod every few seconds and on
// every cluster event, and each retry is refused on the same nodes for the same reasons: recording each
// one made the decision writer's work grow with the retries, not with what changed. The first refusal is
// recorded; identical ones (same reason, GPUs and candidates) within `window` of it are counted instead,
// and the count goes on the pod's next filter record that is kept (a different verdict, or the same one
// once the window has passed) as Record::repeats. A filter that fits is always kept. Remembers the last
// `max_pods` pods it saw (oldest forgotten first). Thread-safe; time is the record's (the caller's clock).
class RefusalAggregator {
 public:
  explicit RefusalAggregator(absl::Duration window = absl::Minutes(1), size_t max_pods = 10'000)
      : window_(window), max_pods_(std::max<size_t>(max_pods, 1)) {}

  // Whether `record`, a filter record, is to be recorded; when it is, its repeats are set.
  bool Keep(Record& record);

 private:
  struct Last {
    std::optional<size_t> refusal;  // the signature of the pod's last recorded filter verdict, if a refusal
    absl::Time recorded{};
    int64_t folded = 0;  // identical refusals since, not recorded
  };

  const absl::Duration window_;
  const size_t max_pods_;
  std::mutex mu_;
  std::unordered_map<std::string, Last> last_;  // by correlation id (the pod's ledger uid)
  std::deque<std::string> order_;               // the pods in last_, oldest first
};

}  // namespace topofit::history
