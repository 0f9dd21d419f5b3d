#include "kubeclient/lease_lock.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace topofit::kubeclient {
namespace {

std::string StringField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int IntField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : 0;
}

absl::StatusOr<Lease> LeaseFromJson(nlohmann::json object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return absl::DataLossError("the API server's Lease has no metadata");
  }
  Lease lease;
  lease.resource_version = StringField(object["metadata"], "resourceVersion");
  const nlohmann::json spec = object.value("spec", nlohmann::json::object());
  if (spec.is_object()) {
    lease.record.holder_identity = StringField(spec, "holderIdentity");
    lease.record.lease_duration_seconds = IntField(spec, "leaseDurationSeconds");
    lease.record.acquire_time = StringField(spec, "acquireTime");
    lease.record.renew_time = StringField(spec, "renewTime");
    lease.record.lease_transitions = IntField(spec, "leaseTransitions");
  }
  lease.object = std::move(object);
  return lease;
}

// client-go writes every field, holderIdentity included when empty (a released Lease).
void WriteRecord(const LeaseRecord& record, nlohmann::json& spec) {
  spec["holderIdentity"] = record.holder_identity;
  spec["leaseDurationSeconds"] = record.lease_duration_seconds;
  spec["acquireTime"] = record.acquire_time;
  spec["renewTime"] = record.renew_time;
  spec["leaseTransitions"] = record.lease_transitions;
}

}  // namespace

std::string FormatMicroTime(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone()); }

std::string LeasesPath(absl::string_view namespace_name) {
  return absl::StrCat("/apis/", kCoordinationApiVersion, "/namespaces/", EscapePathSegment(namespace_name),
                      "/leases");
}

LeaseLock::LeaseLock(RestClient& rest, std::string namespace_name, std::string name)
    : rest_(rest), namespace_name_(std::move(namespace_name)), name_(std::move(name)) {}

std::string LeaseLock::Describe() const { return absl::StrCat(namespace_name_, "/", name_); }

absl::StatusOr<Lease> LeaseLock::Get() {
  absl::StatusOr<nlohmann::json> json = rest_.Get(absl::StrCat(LeasesPath(namespace_name_), "/", EscapePathSegment(name_)));
  if (!json.ok()) return json.status();
  return LeaseFromJson(*std::move(json));
}

absl::StatusOr<Lease> LeaseLock::Create(const LeaseRecord& record) {
  nlohmann::json lease = {
      {"apiVersion", kCoordinationApiVersion},
      {"kind", "Lease"},
      {"metadata", {{"namespace", namespace_name_}, {"name", name_}}},
      {"spec", nlohmann::json::object()},
  };
  WriteRecord(record, lease["spec"]);
  absl::StatusOr<nlohmann::json> json = rest_.Post(LeasesPath(namespace_name_), lease);
  if (!json.ok()) return json.status();
  return LeaseFromJson(*std::move(json));
}

absl::StatusOr<Lease> LeaseLock::Update(const Lease& current, const LeaseRecord& record) {
  nlohmann::json lease = current.object;
  lease["metadata"]["resourceVersion"] = current.resource_version;
  if (!lease["spec"].is_object()) lease["spec"] = nlohmann::json::object();
  WriteRecord(record, lease["spec"]);
  absl::StatusOr<nlohmann::json> json =
      rest_.Put(absl::StrCat(LeasesPath(namespace_name_), "/", EscapePathSegment(name_)), lease);
  if (!json.ok()) return json.status();
  return LeaseFromJson(*std::move(json));
}

}  // namespace topofit::kubeclient
