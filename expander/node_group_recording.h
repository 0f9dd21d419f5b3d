#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kube/node_templates.h"
#include "kube/objects.h"

namespace topofit::expander {

// Which node-group templates of a BestOptions call go to the ledger (Ledger::RecordNodeGroups). CA sends
// every group's template in every loop (every 10 s by default), and recording them all anew copied and
// re-indexed 500 templates per call at 500 groups, a fifth of the call, to move a time of last offer that
// counts in days (LedgerLimits::node_group_ttl). So a group's template is recorded when the group is new
// to this expander, when its template changed (the decoded template is one shared object while it does
// not: codec/template_key.h), and otherwise once per `refresh`: the ledger's time of last offer lags by
// less than that. A group the ledger dropped meanwhile (at its cap) comes back within `refresh` too.
// Thread-safe: concurrent calls each record what is due.
class NodeGroupRecording {
 public:
  static constexpr absl::Duration kDefaultRefresh = absl::Minutes(1);

  explicit NodeGroupRecording(absl::Duration refresh = kDefaultRefresh) : refresh_(refresh) {}

  // The GPU groups of `templates` due at `now`, as decision::GpuGroupTemplates keeps them. Groups not
  // in `templates` are forgotten: CA sends every group it has.
  std::map<std::string, kube::Node> Due(const kube::NodeTemplates& templates, absl::Time now);

 private:
  struct Recorded {
    std::shared_ptr<const kube::Node> offered;
    absl::Time at;
  };

  const absl::Duration refresh_;
  absl::Mutex mu_;
  // Ordered as kube::NodeTemplates is, so that a call walks both side by side (a lookup per group in
  // each was a cache miss per string compared at 500 groups).
  std::map<std::string, Recorded, std::less<>> recorded_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topofit::expander
