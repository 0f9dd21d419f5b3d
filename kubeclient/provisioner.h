#pragma once

// ProvisioningRequests for pods the extender could not place (scheduler::CapacityRequests, issue 6).
//
//   RequestFor(pod, where)   -> on the worker: GET the pod (gone, another uid, or bound: nothing to do);
//                               create its PodTemplate (hostname NotIn refused, confined to the shapes
//                               that give the pod's set) and its best-effort-atomic
//                               ProvisioningRequest, then annotate the pod to consume it.
//   Withdraw(pod)            -> on the worker: delete both (404 counts as done).
//
// Both objects are owned by the pod, so the garbage collector removes them if the pod goes while topofit is
// not looking. Creation is idempotent (409 AlreadyExists is done: the names derive from the pod), so a
// retry or a second replica does no harm. A failed creation is logged and forgotten: the pod's next refusal
// asks again. Withdraw does not need a record of the request, so it also cleans up after a restart.
//
// One worker thread, in order: a Withdraw queued after a RequestFor of the same pod runs after it.

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "absl/synchronization/mutex.h"
#include "kubeclient/kube_api.h"
#include "scheduler/capacity_requests.h"

namespace topofit::kubeclient {

struct ProvisionerStats {
  int64_t requested = 0;  // ProvisioningRequests created (or found already there)
  int64_t skipped = 0;    // the pod was gone, replaced or already bound when the worker came to it
  int64_t failed = 0;     // an API call failed; the pod's next refusal retries
  int64_t withdrawn = 0;  // ProvisioningRequests deleted (or found already gone)
};

class Provisioner final : public scheduler::CapacityRequests {
 public:
  // `api` and `log` must outlive this object.
  Provisioner(KubeApi& api, spdlog::logger& log);
  ~Provisioner() override;  // Stop()
  Provisioner(const Provisioner&) = delete;
  Provisioner& operator=(const Provisioner&) = delete;

  void RequestFor(const scheduler::PodRef& pod, const scheduler::CapacityPlacement& where) override;
  void Withdraw(const scheduler::PodRef& pod) override;

  // Finishes the task in hand, drops the rest, joins the worker. Idempotent.
  void Stop();
  ProvisionerStats stats() const;

 private:
  struct Task {
    bool create = false;  // else withdraw
    scheduler::PodRef pod;
    scheduler::CapacityPlacement where;
  };

  void Run();
  void Create(const Task& task);
  void Remove(const Task& task);

  KubeApi& api_;
  spdlog::logger& log_;
  mutable absl::Mutex mu_;
  std::deque<Task> tasks_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> requested_ ABSL_GUARDED_BY(mu_);  // pod uids asked for and not withdrawn
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  ProvisionerStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread worker_;
};

}  // namespace topofit::kubeclient
