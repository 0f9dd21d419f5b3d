#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does it, so
// that of several topofit replicas exactly one binds pods and creates ProvisioningRequests.
//
// Each round (every retry period) reads the Lease and
//   - creates it, naming this replica, when it does not exist (409 AlreadyExists: another replica was
//     first; the next round reads theirs);
//   - renews it when it names this replica (also right after a restart under the same identity);
//   - takes it over when it names nobody (released) or has expired: its record has not changed for
//     leaseDurationSeconds, measured on this replica's clock from when this replica saw it change. The
//     holder's renewTime is never compared with the local clock, so clock skew between nodes cannot
//     make two leaders; only the clocks' rates matter.
// Writes carry the Lease's resourceVersion: when another replica wrote in between, the API server answers
// 409 Conflict and this replica loses the round (the next one reads again).
//
// The leader counts as leading only until renew_deadline after the start of its last successful renewal,
// even if the thread is stuck in a slow request, and renew_deadline < lease_duration: a leader that cannot
// renew (API errors, 429s, a partition) has stopped leading before any other replica may take over. After
// stepping down it stays a candidate. Stop() releases the Lease (holderIdentity "", leaseDurationSeconds
// 1, as client-go's ReleaseOnCancel), so the next leader takes over within a retry period rather than a
// lease duration.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "kubeclient/lease_lock.h"
#include "kubeclient/rest_client.h"
#include "scheduler/leadership.h"
#include "server/clock.h"

namespace topofit::kubeclient {

struct LeaderElectionConfig {
  std::string namespace_name;
  std::string lease_name = "topofit";
  std::string identity;  // unique per replica; see DefaultLeaderIdentity

  // kube-scheduler's defaults. The Lease holds whole seconds, so lease_duration is a whole number of
  // seconds; renew_deadline < lease_duration; retry_period * 1.2 (the candidates' jitter) < renew_deadline.
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  bool release_on_stop = true;

  // Called on the elector's thread (or the thread calling Round/Release/Stop) when this replica starts
  // or stops leading, never under the elector's lock.
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  // Called on the elector's thread with each of Start()'s rounds' status (see Round()); may be null.
  std::function<void(const absl::Status& round)> on_round;

  // Injected time and randomness; a null random means the real one. The Lease carries wall-clock times;
  // expiry and the renew deadline are measured on the monotonic one. The thread sleeps in real time
  // whatever the clock: tests that drive a fake clock call Round() themselves instead of Start().
  const server::Clock* clock = &server::SystemClock();
  std::function<double()> uniform_random;  // in [0, 1)
};

// "<hostname>_<random suffix>", as client-go users build it: a restarted pod keeps its name, and the
// suffix keeps two processes on one host apart.
std::string DefaultLeaderIdentity();

class LeaderElector final : public scheduler::Leadership {
 public:
  // InvalidArgument when the config breaks the rules above. `rest` must outlive the elector; give it a
  // client of its own (one attempt per request, a timeout under renew_deadline / 2) so renewals never
  // queue behind other traffic or retry past the deadline.
  static absl::StatusOr<std::unique_ptr<LeaderElector>> Create(RestClient& rest, LeaderElectionConfig config);
  ~LeaderElector() override;  // Stop()s
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Runs Round() on a thread of its own: every retry_period while leading, every retry_period * (1 + 1.2
  // * random) while a candidate (client-go's jitter, so candidates spread out). Once only.
  void Start();
  // Ends the thread (a sleep is cut short; a request in flight finishes, bounded by the client's timeout),
  // then releases the Lease when release_on_stop and this replica holds it. From then on IsLeader() is
  // false. Idempotent.
  void Stop();

  // One retry period's work: try to acquire or renew the Lease, then report a change of leadership through
  // the callbacks. The status says why the Lease was not acquired or renewed (held by another replica,
  // 409, API errors). Not concurrently with itself: Start()'s thread, or a test, calls it.
  absl::Status Round();
  // Hands the Lease back if this replica holds it (a 409 means it no longer did). Stop() calls it.
  absl::Status Release();

  // True while this replica holds the Lease and renewed it within renew_deadline. Any thread.
  bool IsLeader() const override;
  // The holder this replica last saw ("" when released or never read).
  std::string holder() const;
  const std::string& identity() const { return config_.identity; }

 private:
  LeaderElector(RestClient& rest, LeaderElectionConfig config);
  absl::Status TryAcquireOrRenew();
  // Remembers `lease`; its record counts as changed at `now` when it differs from the last one seen.
  void Observe(const Lease& lease, absl::Duration now);
  // Compares IsLeader() with what the callbacks last reported and calls the one that applies.
  void ReportLeadership();
  bool IsLeaderLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration CandidateWait() const;

  const LeaderElectionConfig config_;
  LeaseLock lock_;
  absl::Notification stop_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  std::optional<Lease> observed_ ABSL_GUARDED_BY(mu_);
  // Monotonic: when the observed record last changed here, and the start of the last successful write.
  absl::Duration observed_at_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Duration> renewed_at_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool reported_leading_ ABSL_GUARDED_BY(mu_) = false;  // what the callbacks last said
};

}  // namespace topofit::kubeclient
