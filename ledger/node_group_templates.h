#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "kube/objects.h"

namespace topofit::ledger {

// The node group templates a ledger keeps (Ledger::RecordNodeGroups): the latest per group, each until
// `ttl` after it was last offered, at most `max` of them (at the cap the group offered least recently
// makes room and is reported). Both ledgers keep them alike; not thread-safe: they call it under their lock.
class NodeGroupTemplates {
 public:
  struct Entry {
    kube::Node template_node;
    absl::Time seen;  // when cluster-autoscaler last offered the group
  };

  NodeGroupTemplates(absl::Duration ttl, size_t max, std::function<void(const std::string& group)> on_evicted)
      : ttl_(ttl), max_(std::max<size_t>(max, 1)), on_evicted_(std::move(on_evicted)) {}

  // The group was offered with this template at `seen`. An entry seen later is kept instead (one read
  // back from the API may be older than this process's own). Returns whether it was recorded.
  bool Record(const std::string& group, const kube::Node& template_node, absl::Time seen);
  // Drops what was last offered more than the TTL before `now`.
  void Prune(absl::Time now);
  // Unexpired templates at `now`, by group id.
  std::map<std::string, kube::Node> Live(absl::Time now) const;
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  void Erase(std::map<std::string, Entry>::iterator it);

  const absl::Duration ttl_;
  const size_t max_;
  const std::function<void(const std::string& group)> on_evicted_;
  std::map<std::string, Entry> entries_;               // by group id
  std::set<std::pair<absl::Time, std::string>> by_seen_;  // expiry and eviction take from the front
};

}  // namespace topofit::ledger
