#include "notify/restart_message.h"

#include <catch2/catch.hpp>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "history/record_json.h"

namespace topofit::notify {
namespace {

RestartNotice GpuFaultNotice() {
  RestartNotice notice;
  history::Record& record = notice.record;
  record.time = absl::FromUnixSeconds(1'760'000'000);
  record.component = history::Component::kRestarts;
  record.kind = history::Kind::kRestart;
  record.reason = history::Reason::kRestartGpuFault;
  record.correlation_id = "uid-1";
  record.pods = {{"uid-1", "ml/trainer"}};
  record.node = "gpu-7";
  record.gpus = 2;
  history::RestartDetail restart;
  restart.container = "train";
  restart.restart_count = 3;
  restart.exit_code = 1;
  restart.termination_reason = "Error";
  restart.termination_message = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234 <fell off the bus>";
  restart.waiting_reason = "CrashLoopBackOff";
  restart.diagnosis = "Xid 79: the GPU has fallen off the bus";
  restart.gpu_ids = "2,3";
  restart.xids = {79};
  restart.warnings = {"BackOff: Back-off restarting failed container train"};
  restart.node_conditions = "Ready=True";
  restart.node_warnings = {"GpuXid: Xid 79 on GPU 00000000:3B:00.0", "GpuXid: Xid 79 again"};
  restart.log_tail = "step 100 loss 0.5\nstep 101 loss 0.4\nRuntimeError: CUDA error: unknown error\n";
  record.restart = restart;
  notice.channel = "#ml-oncall";
  return notice;
}

TEST_CASE("SlackBody: the pod, the cause and why, the termination, GPUs and Xids, events and the log's end",
          "[notify]") {
  const nlohmann::json body = SlackBody(GpuFaultNotice(), "prod-eu");
  REQUIRE(body["text"].is_string());
  const std::string text = body["text"];
  CHECK(body["channel"] == "#ml-oncall");
  CHECK(absl::StrContains(text, "`ml/trainer` container `train`, restart 3, node `gpu-7`, cluster `prod-eu`"));
  CHECK(absl::StrContains(text, "*Cause:* gpu-fault: Xid 79: the GPU has fallen off the bus"));
  CHECK(absl::StrContains(text, "*Last termination:* Error exit code 1, signal 0"));
  CHECK(absl::StrContains(text, "*Waiting:* CrashLoopBackOff"));
  CHECK(absl::StrContains(text, "*GPUs:* 2 asked, ids 2,3, Xid 79"));
  CHECK(absl::StrContains(text, "- BackOff: Back-off restarting failed container train"));
  CHECK(absl::StrContains(text, "*Node:* Ready=True; 2 Warning event(s), the first: GpuXid: Xid 79 on GPU 00000000:3B:00.0"));
  CHECK(absl::StrContains(text, "RuntimeError: CUDA error: unknown error"));
  // Slack's special characters are escaped, so a message cannot mention @channel or forge a link.
  CHECK(absl::StrContains(text, "&lt;fell off the bus&gt;"));
  CHECK_FALSE(absl::StrContains(text, "<fell"));
  SECTION("no channel of its own: the webhook's default") {
    RestartNotice notice = GpuFaultNotice();
    notice.channel.clear();
    CHECK_FALSE(SlackBody(notice, "").contains("channel"));
    CHECK_FALSE(absl::StrContains(SlackBody(notice, "")["text"].get<std::string>(), "cluster"));
  }
}

TEST_CASE("SlackBody: a long log gives way to the limit and keeps its last lines", "[notify]") {
  RestartNotice notice = GpuFaultNotice();
  std::string log;
  for (int i = 0; i < 2000; ++i) absl::StrAppend(&log, "line ", i, " of a chatty training loop\n");
  absl::StrAppend(&log, "the last line says why\n");
  notice.record.restart->log_tail = log;
  notice.record.restart->warnings.assign(40, std::string(600, 'w'));
  const std::string text = SlackBody(notice, "prod")["text"];
  CHECK(text.size() <= kMaxSlackTextBytes);
  CHECK(absl::StrContains(text, "the last line says why"));
  CHECK_FALSE(absl::StrContains(text, "line 0 of"));
  CHECK(absl::StrContains(text, "- and 35 more"));
}

TEST_CASE("JsonBody: the record as /decisions gives it, a summary, the cluster and channel", "[notify]") {
  const RestartNotice notice = GpuFaultNotice();
  const nlohmann::json body = JsonBody(notice, "prod-eu");
  CHECK(body["kind"] == "restart");
  CHECK(body["cluster"] == "prod-eu");
  CHECK(body["channel"] == "#ml-oncall");
  CHECK(body["summary"] == "ml/trainer container train restarted (3): gpu-fault: Xid 79: the GPU has fallen off the bus");
  CHECK(body["record"] == history::RecordToJson(notice.record));
  const absl::StatusOr<history::Record> back = history::RecordFromJson(body["record"]);
  REQUIRE(back.ok());
  CHECK(back->restart == notice.record.restart);
}

}  // namespace
}  // namespace topofit::notify
