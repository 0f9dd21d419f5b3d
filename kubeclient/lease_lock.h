#pragma once

// One coordination.k8s.io/v1 Lease as leader election uses it (client-go's resourcelock.LeaseLock): read,
// create, and update it under optimistic concurrency.

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "kubeclient/rest_client.h"

namespace topofit::kubeclient {

inline constexpr char kCoordinationApiVersion[] = "coordination.k8s.io/v1";

// The Lease's spec fields leader election reads and writes (client-go's LeaderElectionRecord). The times
// stay the strings the server holds: no decision compares them with this process's clock, so clock skew
// between replicas cannot matter.
struct LeaseRecord {
  std::string holder_identity;  // "" once released
  int lease_duration_seconds = 0;
  std::string acquire_time;     // RFC3339 MicroTime
  std::string renew_time;
  int lease_transitions = 0;

  bool operator==(const LeaseRecord&) const = default;
};

// A Lease as the server returned it. Updates start from `object`, so fields topofit does not know (labels,
// newer spec fields) survive, and carry its resourceVersion as the precondition.
struct Lease {
  nlohmann::json object;
  LeaseRecord record;
  std::string resource_version;
};

// metav1.MicroTime as the API server writes it, in UTC: "2026-11-30T09:00:00.000000Z".
std::string FormatMicroTime(absl::Time t);

// "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", each segment escaped.
std::string LeasesPath(absl::string_view namespace_name);

class LeaseLock {
 public:
  // `rest` must outlive this object.
  LeaseLock(RestClient& rest, std::string namespace_name, std::string name);

  // NotFound when there is no such Lease.
  absl::StatusOr<Lease> Get();
  // AlreadyExists when another replica created it first.
  absl::StatusOr<Lease> Create(const LeaseRecord& record);
  // PUT `current` with its record replaced; Aborted (409 Conflict) when the Lease changed since `current`
  // was read: another replica wrote first.
  absl::StatusOr<Lease> Update(const Lease& current, const LeaseRecord& record);

  // "namespace/name", for messages.
  std::string Describe() const;

 private:
  RestClient& rest_;
  const std::string namespace_name_;
  const std::string name_;
};

}  // namespace topofit::kubeclient
