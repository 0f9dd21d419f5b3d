#pragma once

// ProvisioningRequests for pods the extender could not place (scheduler::CapacityRequests, issue 6).
//
//   RequestFor(pod, where)   -> on the worker: GET the pod (gone, another uid, or bound: nothing to do);
//                               create its PodTemplate (hostname NotIn refused, confined to the shapes
//                               that give the pod's set) and its best-effort-atomic
//                               ProvisioningRequest, then annotate the pod to consume it.
//   Withdraw(pod)            -> on the worker: delete both (404 counts as done).
//   RequestForGang(capacity) -> the gang's first call: as RequestFor, one PodTemplate and one request of
//                               `count` pods for the whole gang (kubeclient/provisioning.h), owned by the
//                               member that asked; every call: that member annotated to consume it (the
//                               request made again, owned by it, when it is gone: the garbage collector
//                               took it with its owner, a member its Job replaced). A
//                               call kGangRequestLifetime after the request was made replaces it: the
//                               gang still waits, so what CA brought went elsewhere, or the garbage
//                               collector took the request with the member that owned it.
//                               A gang of claim pods (GangCapacity::claim_members): one PodTemplate per
//                               member named, each naming that member's claims and owned by it, and one
//                               request of a pod set per member.
//   WithdrawGang(gang)       -> delete the gang's objects (a claim gang's member templates too, those
//                               this process made; the others go with their pods).
//   RequestFor(pod, ...) again, while its request stands, at most once per kStatusCheckInterval
//                            -> on the worker: GET the request and, when what cluster-autoscaler says of it
//                               changed (capacity not found, failed, booking expired, capacity revoked),
//                               record it in the decision history (RecordDecisionsTo), on the pod's chain.
//   RequestForGang(...) by a member already consuming the gang's request, at most once per
//                               kStatusCheckInterval per gang -> the same for the gang's request, recorded
//                               on the chain of the member that asked.
//
// Both objects are owned by the pod, so the garbage collector removes them if the pod goes while topofit is
// not looking. Creation is idempotent (409 AlreadyExists is done: the names derive from the pod), so a
// retry or a second replica does no harm. A failed creation is logged and forgotten: the pod's next refusal
// asks again. Withdraw does not need a record of the request, so it also cleans up after a restart.
//
// One worker thread, in order: a Withdraw queued after a RequestFor of the same pod runs after it.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "history/recorder.h"
#include "kubeclient/kube_api.h"
#include "scheduler/capacity_requests.h"
#include "server/clock.h"

namespace topofit::kubeclient {

struct ProvisionerStats {
  int64_t requested = 0;  // ProvisioningRequests created (or found already there)
  int64_t skipped = 0;    // the pod was gone, replaced or already bound when the worker came to it
  int64_t failed = 0;     // an API call failed; the pod's next refusal retries
  int64_t withdrawn = 0;  // ProvisioningRequests deleted (or found already gone)
  int64_t gang_requested = 0;  // gangs' ProvisioningRequests created (or found already there)
  int64_t gang_consumers = 0;  // gang members annotated to consume their gang's request
};

// CA books a provisioned request's capacity for 10 minutes; a gang still asking 15 minutes after its
// request was made did not get it.
inline constexpr absl::Duration kGangRequestLifetime = absl::Minutes(15);
// How often a pod's standing request is read for what cluster-autoscaler said of it: its loop runs every
// 10 s, kube-scheduler retries the pod more often than this.
inline constexpr absl::Duration kStatusCheckInterval = absl::Minutes(1);

class Provisioner final : public scheduler::CapacityRequests {
 public:
  // `api`, `log` and `clock` must outlive this object.
  Provisioner(KubeApi& api, spdlog::logger& log, const server::Clock& clock);
  ~Provisioner() override;  // Stop()
  Provisioner(const Provisioner&) = delete;
  Provisioner& operator=(const Provisioner&) = delete;

  void RequestFor(const scheduler::PodRef& pod, const scheduler::CapacityPlacement& where) override;
  void Withdraw(const scheduler::PodRef& pod) override;
  void RequestForGang(const scheduler::GangCapacity& capacity) override;
  void WithdrawGang(const scheduler::GangRef& gang) override;
  // Where what cluster-autoscaler says of a pod's request goes (Kind::kCapacityStatus). Set before the
  // first RequestFor; the recorder must outlive this object and never block.
  void RecordDecisionsTo(history::DecisionRecorder* recorder) { recorder_ = recorder; }

  // Finishes the task in hand, drops the rest, joins the worker. Idempotent.
  void Stop();
  ProvisionerStats stats() const;

 private:
  enum class Action {
    kCreate,
    kWithdraw,
    kCreateForGang,
    kConsumeGang,
    kWithdrawGang,
    kReplaceGang,
    kCheck,
    kCheckGang
  };
  struct Task {
    Action action = Action::kCreate;
    scheduler::PodRef pod;  // the pod, or the gang's member
    scheduler::CapacityPlacement where;
    scheduler::GangCapacity gang;  // the gang actions'
  };

  void Run();
  void Create(const Task& task);
  void Remove(const Task& task);
  void CreateForGang(const Task& task);
  // A later member: consumes the gang's request, or makes it again if it is gone.
  void JoinGang(const Task& task);
  void ConsumeGang(const Task& task);
  void RemoveGang(const Task& task);
  // Reads the pod's request and records what cluster-autoscaler says of it, when that changed.
  void Check(const Task& task);
  // The same for the gang's request, on the chain of the member that asked.
  void CheckGang(const Task& task);
  // What cluster-autoscaler says against a ProvisioningRequest (kFits: nothing), in its words.
  struct CaSays {
    history::Reason reason = history::Reason::kFits;
    std::string message;
  };
  // Of the request `name`; nullopt when it could not be read (gone is nothing to say; another error is
  // counted as failed for `what`).
  std::optional<CaSays> ReadStatus(const std::string& namespace_name, const std::string& name, absl::string_view what);
  // Logs and records what was said of `request` on `pod`'s chain (`gang`: the gang's request).
  void RecordStatus(const scheduler::PodRef& pod, absl::string_view gang, const std::string& request,
                    const CaSays& said);
  // The pod as the API server has it, when a request may be made for it (`what` asks); nullopt, logged and
  // counted as skipped, when it is gone, replaced or bound. A failed GET is an error.
  absl::StatusOr<std::optional<nlohmann::json>> AskablePod(const scheduler::PodRef& pod, absl::string_view what);
  // Creates the PodTemplate, then the ProvisioningRequest (409 counting as done); the first error.
  absl::Status CreateObjects(const absl::StatusOr<nlohmann::json>& pod_template,
                             const absl::StatusOr<nlohmann::json>& request);
  // One object each (409 counting as done).
  absl::Status CreateTemplate(const nlohmann::json& pod_template);
  absl::Status CreateRequest(const absl::StatusOr<nlohmann::json>& request);
  // A gang of claim pods': each member's template (PodTemplateForGangMember); the first error, or
  // FailedPrecondition when a member is gone or bound. `asking`: the asking member as just read, not read
  // again when it is one of those named.
  absl::Status CreateMemberTemplates(const scheduler::GangCapacity& gang, const nlohmann::json& asking);
  void CountFailed(absl::string_view what, absl::string_view step, const absl::Status& status);

  KubeApi& api_;
  spdlog::logger& log_;
  const server::Clock& clock_;
  mutable absl::Mutex mu_;
  std::deque<Task> tasks_ ABSL_GUARDED_BY(mu_);
  // The pods asked for and not withdrawn, by uid: when their request was last read (or made) and the
  // capacity-status reason last recorded for it (kFits: none, or cluster-autoscaler no longer says
  // anything against it).
  struct StatusSeen {
    absl::Time checked;
    history::Reason recorded = history::Reason::kFits;
  };
  std::map<std::string, StatusSeen, std::less<>> requested_ ABSL_GUARDED_BY(mu_);
  history::DecisionRecorder* recorder_ = nullptr;
  // Gangs asked for and not withdrawn, by id: when, and the members annotated to consume the request.
  struct GangAsked {
    absl::Time asked;
    std::set<std::string> members;
    StatusSeen status;  // of its request
    // A gang of claim pods': the members whose templates the request names, for the withdrawal.
    std::vector<scheduler::PodRef> claim_members;
  };
  std::map<std::string, GangAsked, std::less<>> gangs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  ProvisionerStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread worker_;
};

}  // namespace topofit::kubeclient
