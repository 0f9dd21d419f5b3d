#pragma once

// The ledger's node group templates in the API (docs/kubeclient.md, "The ledger in the API"): what
// cluster-autoscaler can grow, learned by the expander from its BestOptions calls, for the extender in
// another Deployment, which sees no node of a group at size zero. One ConfigMap (`topofit-node-groups` in
// the components' namespace), one key holding every group, since CA's group ids (a GCE instance group's
// URL) are not valid ConfigMap keys:
//
//   data["node-groups.json"] = [{"nodeGroup": "<id>", "seen": RFC 3339, "trusted": bool, "template": <v1 Node>}, ...]
//
// (the template as codec::NodeTemplateToJson writes it, `seen` when CA last offered the group, `trusted`
// whether the expander could believe its sender: ledger::NodeGroupTemplate; an entry without it, as
// releases before it wrote, is untrusted). Only who may patch the ConfigMap can set the bit. Readers
// keep an entry until the TTL after its `seen`. The writer (the expander) publishes when a group is new,
// its template changed, or its published `seen` is older than a quarter of the TTL: a group CA keeps
// offering never expires for readers, and CA's loop every 10 s is not a write each. Publishing reads the
// key, merges it, and replaces it with every unexpired group this process knows; a reader that finds a
// group it published missing (two writers raced) writes again, so writers converge. Every process reads
// the ConfigMap back every `poll_interval`; per group the entry seen last wins.
//
// The API server refuses a ConfigMap whose data passes 1 MiB, which a cluster with several hundred GPU
// groups could reach (a template is 1-3 KiB). Rather than fail every write, and leave the extender knowing
// no group at all, a write keeps the groups seen last that fit `max_bytes` and logs the rest
// (`node_groups_omitted`); an omitted group counts as published, so it is tried again only when its
// template changes or a quarter of the TTL has passed, like any other.
//
// Thread-safe.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kube/objects.h"
#include "kubeclient/coalescing_queue.h"
#include "kubeclient/kube_api.h"
#include "ledger/node_group_templates.h"
#include "server/clock.h"
#include "server/condition_log.h"

namespace topofit::kubeclient {

inline constexpr char kNodeGroupsConfigMap[] = "topofit-node-groups";
inline constexpr char kNodeGroupsKey[] = "node-groups.json";

struct NodeGroupsConfigMapOptions {
  std::string namespace_name = "default";
  std::string name = kNodeGroupsConfigMap;
  absl::Duration ttl = absl::Hours(24);
  size_t max_groups = 1'000;
  size_t max_bytes = 900 * 1024;  // of the key's JSON: under the API's 1 MiB, with room for the metadata
  std::function<void(const std::string& group)> on_evicted;  // under the lock: must not call back
  absl::Duration poll_interval = absl::Seconds(30);
  CoalescingQueueOptions publishing;
  absl::Duration shutdown_grace = absl::Seconds(5);  // at destruction, for writes not yet published
};

class NodeGroupsConfigMap {
 public:
  // `kube`, `clock` and `log` must outlive this object. Starts the publishing thread; Start() the reader.
  NodeGroupsConfigMap(KubeApi& kube, const server::Clock& clock, spdlog::logger& log, NodeGroupsConfigMapOptions options);
  ~NodeGroupsConfigMap();
  NodeGroupsConfigMap(const NodeGroupsConfigMap&) = delete;
  NodeGroupsConfigMap& operator=(const NodeGroupsConfigMap&) = delete;

  // CA offered these groups now (Ledger::RecordNodeGroups).
  void Record(const std::map<std::string, kube::Node>& templates, bool trusted);
  // The unexpired templates, by group id (Ledger::NodeGroups).
  std::map<std::string, ledger::NodeGroupTemplate> Live() const;

  // Reads the ConfigMap once and merges what it holds. An absent ConfigMap is nothing yet; an entry that
  // does not decode is skipped and logged. The reader thread calls it; tests may call it directly.
  absl::Status Refresh();
  // Starts the reader thread: Refresh now, then every poll_interval. Once only.
  void Start();
  // Waits up to `timeout` until every write is published; true when none is left.
  bool WaitPublished(absl::Duration timeout) const;

 private:
  CoalescingQueue::Outcome Publish();
  // Reads the ConfigMap and merges it into memory; true when a group this process published is not in it
  // (another writer replaced the key without it), so it must be written again.
  absl::StatusOr<bool> Merge();
  void Poll();

  KubeApi& kube_;
  const server::Clock& clock_;
  spdlog::logger& log_;
  const NodeGroupsConfigMapOptions options_;
  server::ConditionLog publishing_;
  server::ConditionLog reading_;
  mutable absl::Mutex mu_;
  ledger::NodeGroupTemplates templates_ ABSL_GUARDED_BY(mu_);
  // What the API holds as far as this process knows, per group: the template and its seen (or, when
  // `omitted`, what was left out of the last write for want of room).
  struct Published {
    kube::Node template_node;
    absl::Time seen;
    bool trusted = false;
    bool omitted = false;
  };
  std::map<std::string, Published> published_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reader_;
  // Last: its worker calls Publish, so it is built after the state above and stopped before it goes.
  std::unique_ptr<CoalescingQueue> publisher_;
};

}  // namespace topofit::kubeclient
