#include "kubeclient/leader_election.h"

#include <unistd.h>

#include <climits>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace topofit::kubeclient {
namespace {

// client-go's JitterFactor for candidates' waits, and its rule renew_deadline > retry_period * 1.2.
constexpr double kJitterFactor = 1.2;

double RealRandom() {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(generator);
}

}  // namespace

std::string DefaultLeaderIdentity() {
  char hostname[HOST_NAME_MAX + 1] = {};
  if (gethostname(hostname, sizeof(hostname) - 1) != 0) hostname[0] = '\0';
  std::random_device random;
  return absl::StrFormat("%s_%08x", hostname[0] != '\0' ? hostname : "topofit", random());
}

absl::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(RestClient& rest, LeaderElectionConfig config) {
  if (config.namespace_name.empty() || config.lease_name.empty()) {
    return absl::InvalidArgumentError("leader election: the Lease needs a namespace and a name");
  }
  if (config.identity.empty()) return absl::InvalidArgumentError("leader election: empty identity");
  if (config.lease_duration < absl::Seconds(1) ||
      config.lease_duration != absl::Seconds(absl::ToInt64Seconds(config.lease_duration))) {
    return absl::InvalidArgumentError(absl::StrCat("leader election: lease duration ",
                                                   absl::FormatDuration(config.lease_duration),
                                                   " is not a whole number of seconds"));
  }
  if (config.renew_deadline >= config.lease_duration) {
    return absl::InvalidArgumentError("leader election: the renew deadline must be shorter than the lease duration");
  }
  if (config.retry_period <= absl::ZeroDuration() || config.renew_deadline <= config.retry_period * kJitterFactor) {
    return absl::InvalidArgumentError(
        "leader election: the renew deadline must be longer than 1.2 times the retry period");
  }
  return std::unique_ptr<LeaderElector>(new LeaderElector(rest, std::move(config)));
}

LeaderElector::LeaderElector(RestClient& rest, LeaderElectionConfig config)
    : config_(std::move(config)), lock_(rest, config_.namespace_name, config_.lease_name) {}

LeaderElector::~LeaderElector() { Stop(); }

absl::Duration LeaderElector::CandidateWait() const {
  const double random = config_.uniform_random ? config_.uniform_random() : RealRandom();
  return config_.retry_period * (1 + kJitterFactor * random);
}

void LeaderElector::Start() {
  thread_ = std::thread([this] {
    while (!stop_.HasBeenNotified()) {
      // A failed round is the normal lot of a candidate; the next one tries again.
      const absl::Status round = Round();
      if (config_.on_round) config_.on_round(round);
      stop_.WaitForNotificationWithTimeout(IsLeader() ? config_.retry_period : CandidateWait());
    }
  });
}

void LeaderElector::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
  if (config_.release_on_stop) Release().IgnoreError();  // unreleased, the Lease expires on its own
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  ReportLeadership();
}

absl::Status LeaderElector::Round() {
  absl::Status status = TryAcquireOrRenew();
  ReportLeadership();
  return status;
}

absl::Status LeaderElector::TryAcquireOrRenew() {
  const absl::Duration now = config_.clock->Monotonic();
  LeaseRecord desired;
  desired.holder_identity = config_.identity;
  desired.lease_duration_seconds = static_cast<int>(absl::ToInt64Seconds(config_.lease_duration));
  desired.acquire_time = desired.renew_time = FormatMicroTime(config_.clock->Now());

  absl::StatusOr<Lease> current = lock_.Get();
  if (absl::IsNotFound(current.status())) {
    absl::StatusOr<Lease> created = lock_.Create(desired);
    if (!created.ok()) return created.status();
    Observe(*created, config_.clock->Monotonic());
    absl::MutexLock lock(&mu_);
    renewed_at_ = now;
    return absl::OkStatus();
  }
  if (!current.ok()) return current.status();
  Observe(*current, config_.clock->Monotonic());

  const LeaseRecord& held = current->record;
  if (held.holder_identity == config_.identity) {
    desired.acquire_time = held.acquire_time;  // a renewal: the same term
    desired.lease_transitions = held.lease_transitions;
  } else {
    absl::MutexLock lock(&mu_);
    const absl::Duration expiry = observed_at_ + absl::Seconds(held.lease_duration_seconds);
    if (!held.holder_identity.empty() && expiry > now) {
      return absl::FailedPreconditionError(absl::StrCat("Lease ", lock_.Describe(), " is held by ",
                                                        held.holder_identity, " for another ",
                                                        absl::FormatDuration(expiry - now)));
    }
    desired.lease_transitions = held.lease_transitions + 1;
  }
  absl::StatusOr<Lease> updated = lock_.Update(*current, desired);
  if (!updated.ok()) return updated.status();
  Observe(*updated, config_.clock->Monotonic());
  absl::MutexLock lock(&mu_);
  renewed_at_ = now;
  return absl::OkStatus();
}

absl::Status LeaderElector::Release() {
  Lease current;
  LeaseRecord released;
  {
    absl::MutexLock lock(&mu_);
    if (!observed_.has_value() || observed_->record.holder_identity != config_.identity) return absl::OkStatus();
    current = *observed_;
    released.lease_duration_seconds = 1;
    released.acquire_time = released.renew_time = FormatMicroTime(config_.clock->Now());
    released.lease_transitions = observed_->record.lease_transitions;
    renewed_at_.reset();  // whatever the API answers, this replica has stopped leading
  }
  absl::StatusOr<Lease> updated = lock_.Update(current, released);
  if (updated.ok()) Observe(*updated, config_.clock->Monotonic());
  ReportLeadership();
  return updated.status();
}

void LeaderElector::Observe(const Lease& lease, absl::Duration now) {
  absl::MutexLock lock(&mu_);
  if (!observed_.has_value() || observed_->record != lease.record) observed_at_ = now;
  observed_ = lease;
}

bool LeaderElector::IsLeaderLocked() const {
  return !stopped_ && observed_.has_value() && observed_->record.holder_identity == config_.identity &&
         renewed_at_.has_value() && config_.clock->Monotonic() < *renewed_at_ + config_.renew_deadline;
}

bool LeaderElector::IsLeader() const {
  absl::MutexLock lock(&mu_);
  return IsLeaderLocked();
}

std::string LeaderElector::holder() const {
  absl::MutexLock lock(&mu_);
  return observed_.has_value() ? observed_->record.holder_identity : std::string();
}

void LeaderElector::ReportLeadership() {
  bool leading = false;
  {
    absl::MutexLock lock(&mu_);
    leading = IsLeaderLocked();
    if (leading == reported_leading_) return;
    reported_leading_ = leading;
  }
  const std::function<void()>& callback = leading ? config_.on_started_leading : config_.on_stopped_leading;
  if (callback) callback();
}

}  // namespace topofit::kubeclient
