#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "kube/node_templates.h"
#include "kube/objects.h"

namespace topofit::ledger {

// A node group's template as a ledger keeps it, and whether it can be believed. `trusted`: it came from a
// peer the expander authenticated (a client certificate, `--tls-client-ca`) or one the operator vouches for
// (`--trust-expander-templates`). An untrusted template came from whoever reached the expander's port, so
// it is shown and kept, but the extender never refuses or holds a real node because of it
// (docs/expander.md, "Who may teach the ledger node groups").
struct NodeGroupTemplate {
  kube::Node template_node;
  bool trusted;
};

// Which of a ledger's templates a caller reads.
enum class TemplateTrust { kAny, kTrustedOnly };

// The templates of `groups` (Ledger::NodeGroups) that `trust` admits, by group id.
kube::NodeTemplates TemplatesOf(const std::map<std::string, NodeGroupTemplate>& groups, TemplateTrust trust);

// The node group templates a ledger keeps (Ledger::RecordNodeGroups): the latest per group, each until
// `ttl` after it was last offered, at most `max` of them. An untrusted template never replaces a trusted
// one still live (a forger cannot overwrite what CA taught over an authenticated channel), and at the cap
// the untrusted group offered least recently makes room first, then the trusted one (reported either
// way), so a flood of forged groups cannot push out trusted ones. Both ledgers keep them alike; not
// thread-safe: they call it under their lock.
class NodeGroupTemplates {
 public:
  struct Entry {
    kube::Node template_node;
    absl::Time seen;  // when cluster-autoscaler last offered the group
    bool trusted = false;
  };

  NodeGroupTemplates(absl::Duration ttl, size_t max, std::function<void(const std::string& group)> on_evicted)
      : ttl_(ttl), max_(std::max<size_t>(max, 1)), on_evicted_(std::move(on_evicted)) {}

  // The group was offered with this template at `seen`. An entry seen later is kept instead (one read
  // back from the API may be older than this process's own). Returns whether it was recorded.
  bool Record(const std::string& group, kube::Node template_node, absl::Time seen, bool trusted);
  // Drops what was last offered more than the TTL before `now`.
  void Prune(absl::Time now);
  // Unexpired templates at `now`, by group id.
  std::map<std::string, NodeGroupTemplate> Live(absl::Time now) const;
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  void Erase(std::map<std::string, Entry>::iterator it);

  const absl::Duration ttl_;
  const size_t max_;
  const std::function<void(const std::string& group)> on_evicted_;
  std::map<std::string, Entry> entries_;               // by group id
  std::set<std::pair<absl::Time, std::string>> by_seen_;  // expiry and eviction take from the front
  std::set<std::pair<absl::Time, std::string>> untrusted_by_seen_;  // the untrusted of by_seen_: evicted first
};

}  // namespace topofit::ledger
