#include "ledger/node_group_templates.h"

#include <memory>
#include <utility>

namespace topofit::ledger {

kube::NodeTemplates TemplatesOf(const std::map<std::string, NodeGroupTemplate>& groups, TemplateTrust trust) {
  kube::NodeTemplates templates;
  for (const auto& [group, entry] : groups) {
    if (entry.trusted || trust == TemplateTrust::kAny) {
      templates.emplace(group, kube::SharedTemplate(entry.template_node));
    }
  }
  return templates;
}

bool NodeGroupTemplates::Record(const std::string& group, kube::Node template_node, absl::Time seen,
                                bool trusted) {
  auto it = entries_.find(group);
  if (it != entries_.end()) {
    if (it->second.seen > seen) return false;
    if (it->second.trusted && !trusted && seen - it->second.seen <= ttl_) return false;
    by_seen_.erase({it->second.seen, group});
    untrusted_by_seen_.erase({it->second.seen, group});
  } else {
    if (entries_.size() >= max_) {
      const std::string evicted = (untrusted_by_seen_.empty() ? by_seen_ : untrusted_by_seen_).begin()->second;
      Erase(entries_.find(evicted));
      if (on_evicted_) on_evicted_(evicted);
    }
    it = entries_.emplace(group, Entry{}).first;
  }
  it->second = {std::move(template_node), seen, trusted};
  by_seen_.emplace(seen, group);
  if (!trusted) untrusted_by_seen_.emplace(seen, group);
  return true;
}

void NodeGroupTemplates::Prune(absl::Time now) {
  while (!by_seen_.empty() && now - by_seen_.begin()->first > ttl_) Erase(entries_.find(by_seen_.begin()->second));
}

std::map<std::string, NodeGroupTemplate> NodeGroupTemplates::Live(absl::Time now) const {
  std::map<std::string, NodeGroupTemplate> live;
  for (const auto& [group, entry] : entries_) {
    if (now - entry.seen <= ttl_) live.emplace(group, NodeGroupTemplate{entry.template_node, entry.trusted});
  }
  return live;
}

void NodeGroupTemplates::Erase(std::map<std::string, Entry>::iterator it) {
  by_seen_.erase({it->second.seen, it->first});
  untrusted_by_seen_.erase({it->second.seen, it->first});
  entries_.erase(it);
}

}  // namespace topofit::ledger
