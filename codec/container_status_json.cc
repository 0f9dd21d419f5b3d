#include "codec/container_status_json.h"

#include "codec/json_read.h"

namespace topofit::codec {
namespace {

using json_read::Json;

absl::Status ReadTermination(const Json& value, const std::string& path, kube::ContainerTermination* out) {
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadString(value, "reason", path, &out->reason));
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadInt32(value, "exitCode", path, &out->exit_code));
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadInt32(value, "signal", path, &out->signal));
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadString(value, "message", path, &out->message));
  return json_read::ReadTime(value, "finishedAt", path, &out->finished_at);
}

absl::Status ReadContainerStatus(const Json& value, const std::string& path, bool init, kube::ContainerStatus* out) {
  TOPOFIT_RETURN_IF_ERROR(json_read::ExpectObject(value, path));
  out->init = init;
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadString(value, "name", path, &out->name));
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadInt32(value, "restartCount", path, &out->restart_count));
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadObject(value, "state", path, [&](const Json& state, const std::string& at) {
    return json_read::ReadObject(state, "waiting", at, [&](const Json& waiting, const std::string& w) {
      TOPOFIT_RETURN_IF_ERROR(json_read::ReadString(waiting, "reason", w, &out->waiting_reason));
      return json_read::ReadString(waiting, "message", w, &out->waiting_message);
    });
  }));
  return json_read::ReadObject(value, "lastState", path, [&](const Json& last, const std::string& at) {
    return json_read::ReadObject(last, "terminated", at, [&](const Json& terminated, const std::string& t) {
      return ReadTermination(terminated, t, &out->last_termination.emplace());
    });
  });
}

}  // namespace

absl::StatusOr<std::vector<kube::ContainerStatus>> ContainerStatusesFromJson(const nlohmann::json& pod) {
  std::vector<kube::ContainerStatus> out;
  TOPOFIT_RETURN_IF_ERROR(json_read::ExpectObject(pod, ""));
  TOPOFIT_RETURN_IF_ERROR(json_read::ReadObject(pod, "status", "", [&](const Json& status, const std::string& path) {
    for (const bool init : {true, false}) {
      TOPOFIT_RETURN_IF_ERROR(json_read::ReadArray(
          status, init ? "initContainerStatuses" : "containerStatuses", path, &out,
          [init](const Json& value, const std::string& at, kube::ContainerStatus* status_out) {
            return ReadContainerStatus(value, at, init, status_out);
          }));
    }
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace topofit::codec
