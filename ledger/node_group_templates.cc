#include "ledger/node_group_templates.h"

namespace topofit::ledger {

bool NodeGroupTemplates::Record(const std::string& group, const kube::Node& template_node, absl::Time seen) {
  auto it = entries_.find(group);
  if (it != entries_.end()) {
    if (it->second.seen > seen) return false;
    by_seen_.erase({it->second.seen, group});
  } else {
    if (entries_.size() >= max_) {
      const std::string evicted = by_seen_.begin()->second;
      Erase(entries_.find(evicted));
      if (on_evicted_) on_evicted_(evicted);
    }
    it = entries_.emplace(group, Entry{}).first;
  }
  it->second = {template_node, seen};
  by_seen_.emplace(seen, group);
  return true;
}

void NodeGroupTemplates::Prune(absl::Time now) {
  while (!by_seen_.empty() && now - by_seen_.begin()->first > ttl_) Erase(entries_.find(by_seen_.begin()->second));
}

std::map<std::string, kube::Node> NodeGroupTemplates::Live(absl::Time now) const {
  std::map<std::string, kube::Node> live;
  for (const auto& [group, entry] : entries_) {
    if (now - entry.seen <= ttl_) live.emplace(group, entry.template_node);
  }
  return live;
}

void NodeGroupTemplates::Erase(std::map<std::string, Entry>::iterator it) {
  by_seen_.erase({it->second.seen, it->first});
  entries_.erase(it);
}

}  // namespace topofit::ledger
