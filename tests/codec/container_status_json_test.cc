#include "codec/container_status_json.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace topofit::codec {
namespace {

using Json = nlohmann::json;

TEST_CASE("Container statuses: restart count, waiting reason and the last termination, init containers first",
          "[container_status_json]") {
  const Json pod = Json::parse(R"({
    "metadata": {"name": "trainer"},
    "status": {
      "initContainerStatuses": [{"name": "fetch", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}],
      "containerStatuses": [{
        "name": "train", "restartCount": 3,
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container"}},
        "lastState": {"terminated": {"exitCode": 137, "signal": 9, "reason": "OOMKilled",
                                     "message": "", "finishedAt": "2026-12-05T10:00:00Z"}}
      }, {"name": "sidecar", "restartCount": null, "lastState": null}]
    }
  })");
  const std::vector<kube::ContainerStatus> statuses = ContainerStatusesFromJson(pod).value();
  REQUIRE(statuses.size() == 3);
  CHECK(statuses[0].name == "fetch");
  CHECK(statuses[0].init);
  CHECK_FALSE(statuses[0].last_termination.has_value());  // state.terminated is the current run, not a restart's
  CHECK(statuses[1].name == "train");
  CHECK_FALSE(statuses[1].init);
  CHECK(statuses[1].restart_count == 3);
  CHECK(statuses[1].waiting_reason == "CrashLoopBackOff");
  CHECK(statuses[1].waiting_message == "back-off 40s restarting failed container");
  REQUIRE(statuses[1].last_termination.has_value());
  CHECK(statuses[1].last_termination->reason == "OOMKilled");
  CHECK(statuses[1].last_termination->exit_code == 137);
  CHECK(statuses[1].last_termination->signal == 9);
  CHECK(statuses[1].last_termination->finished_at == 1796464800);
  CHECK(statuses[2].restart_count == 0);
  CHECK_FALSE(statuses[2].last_termination.has_value());
}

TEST_CASE("Container statuses: a pod without status has none, a wrong type is refused with its path",
          "[container_status_json]") {
  CHECK(ContainerStatusesFromJson(Json::parse(R"({"metadata": {}})")).value().empty());
  const auto wrong = ContainerStatusesFromJson(
      Json::parse(R"({"status": {"containerStatuses": [{"name": "a", "restartCount": "3"}]}})"));
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(std::string(wrong.status().message()), Catch::Contains("status.containerStatuses[0].restartCount"));
  CHECK_FALSE(ContainerStatusesFromJson(Json::parse("[]")).ok());
}

// The real round-trip fixtures of kubernetes/api, read in place (every field a synthetic value).
TEST_CASE("Container statuses: the upstream Pod fixtures decode", "[container_status_json][fixtures]") {
  const char* shared = std::getenv("TOPOFIT_SHARED_DIR");
  const std::filesystem::path dir =
      std::filesystem::path(shared != nullptr ? shared : TOPOFIT_DEFAULT_SHARED_DIR) / "fixtures" / "k8s";
  if (!std::filesystem::is_directory(dir)) {
    if (std::getenv("CI") != nullptr) FAIL("no fixtures at " << dir.string() << " (CI is set)");
    WARN("skipped: no fixtures at " << dir.string());
    return;
  }
  for (const char* version : {"v1.33.0", "v1.34.0", "v1.35.0", "v1.36.0"}) {
    SECTION(version) {
      std::ifstream file(dir / version / "core.v1.Pod.json");
      REQUIRE(file.good());
      const std::vector<kube::ContainerStatus> statuses = ContainerStatusesFromJson(Json::parse(file)).value();
      REQUIRE(statuses.size() == 2);  // one init container status, one container status
      CHECK(statuses[0].init);
      const kube::ContainerStatus& status = statuses[1];
      CHECK(status.name == "nameValue");
      CHECK(status.restart_count == 5);
      CHECK(status.waiting_reason == "reasonValue");
      REQUIRE(status.last_termination.has_value());
      CHECK(status.last_termination->exit_code == 1);
      CHECK(status.last_termination->signal == 2);
      CHECK(status.last_termination->reason == "reasonValue");
      CHECK(status.last_termination->message == "messageValue");
      CHECK(status.last_termination->finished_at == 1136077261);  // 2006-01-01T01:01:01Z
    }
  }
}

}  // namespace
}  // namespace topofit::codec
