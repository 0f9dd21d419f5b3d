#include "notify/restart_notice.h"

#include <catch2/catch.hpp>

#include <string>

#include "absl/strings/str_cat.h"

namespace topofit::notify {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'760'000'000);

kube::ObjectMeta Pod(const std::string& ns, const std::string& name) {
  kube::ObjectMeta pod;
  pod.namespace_name = ns;
  pod.name = name;
  return pod;
}

history::Record Restart(int restart_count, int exit_code = 1, const std::string& reason = "Error") {
  history::Record record;
  record.kind = history::Kind::kRestart;
  history::RestartDetail restart;
  restart.container = "train";
  restart.restart_count = restart_count;
  restart.exit_code = exit_code;
  restart.termination_reason = reason;
  record.restart = restart;
  return record;
}

TEST_CASE("RestartNoticeGate: a pod is muted for the window after a message, then sent again", "[notify]") {
  RestartNoticeGate gate({});  // the reference collector's defaults: 10 minutes, 30 restarts
  const kube::ObjectMeta pod = Pod("ml", "trainer");
  CHECK(gate.Admit(pod, Restart(1), kStart) == NoticeVerdict::kSend);
  CHECK(gate.Admit(pod, Restart(2), kStart + absl::Minutes(3)) == NoticeVerdict::kMuted);
  CHECK(gate.Admit(pod, Restart(3), kStart + absl::Minutes(10) - absl::Seconds(1)) == NoticeVerdict::kMuted);
  // A muted restart does not extend the window: the next one after it is sent.
  CHECK(gate.Admit(pod, Restart(4), kStart + absl::Minutes(10)) == NoticeVerdict::kSend);
  SECTION("another pod is not muted by the first") {
    CHECK(gate.Admit(Pod("ml", "other"), Restart(1), kStart + absl::Minutes(10)) == NoticeVerdict::kSend);
  }
  SECTION("the same name in another namespace is another pod") {
    CHECK(gate.Admit(Pod("dev", "trainer"), Restart(1), kStart + absl::Minutes(11)) == NoticeVerdict::kSend);
  }
}

TEST_CASE("RestartNoticeGate: past max restarts, exit code 0 and the scope are not sent, and not muted", "[notify]") {
  RestartNoticeOptions options;
  options.ignore_exit_zero = true;
  options.scope.ignored_namespaces = {"kube-system"};
  options.scope.ignored_name_prefixes = {"canary-"};
  RestartNoticeGate gate(options);
  const kube::ObjectMeta pod = Pod("ml", "trainer");
  CHECK(gate.Admit(pod, Restart(31), kStart) == NoticeVerdict::kPastMaxRestarts);
  CHECK(gate.Admit(pod, Restart(30, 0, "Completed"), kStart) == NoticeVerdict::kExitedZero);
  CHECK(gate.Admit(Pod("kube-system", "dns"), Restart(1), kStart) == NoticeVerdict::kOutOfScope);
  CHECK(gate.Admit(Pod("ml", "canary-7"), Restart(1), kStart) == NoticeVerdict::kOutOfScope);
  CHECK(gate.Admit(pod, history::Record{}, kStart) == NoticeVerdict::kNotARestart);
  CHECK(gate.muted_pods() == 0);
  // Exit code 0 without a termination (the container never ran to an end) is not an exit code 0.
  CHECK(gate.Admit(pod, Restart(30, 0, ""), kStart) == NoticeVerdict::kSend);
  SECTION("without ignore_exit_zero a clean exit is sent") {
    RestartNoticeGate keep_zero({});
    CHECK(keep_zero.Admit(pod, Restart(2, 0, "Completed"), kStart) == NoticeVerdict::kSend);
  }
  SECTION("only the watched namespaces") {
    RestartNoticeOptions only;
    only.scope.namespaces = {"prod"};
    RestartNoticeGate prod(only);
    CHECK(prod.Admit(Pod("ml", "a"), Restart(1), kStart) == NoticeVerdict::kOutOfScope);
    CHECK(prod.Admit(Pod("prod", "a"), Restart(1), kStart) == NoticeVerdict::kSend);
  }
}

TEST_CASE("RestartNoticeGate: the channel comes from the pod's label, else its annotation", "[notify]") {
  RestartNoticeGate gate({});
  kube::ObjectMeta pod = Pod("ml", "trainer");
  CHECK(gate.ChannelOf(pod).empty());
  pod.annotations["alert-slack-channel"] = "#ml-annotated";
  CHECK(gate.ChannelOf(pod) == "#ml-annotated");
  pod.labels["alert-slack-channel"] = "ml-oncall";
  CHECK(gate.ChannelOf(pod) == "ml-oncall");
  RestartNoticeOptions options;
  options.channel_key = "team.example.com/channel";
  CHECK(RestartNoticeGate(options).ChannelOf(pod).empty());
}

TEST_CASE("RestartNoticeGate: a storm across many pods keeps the table bounded, and live windows hold", "[notify]") {
  RestartNoticeOptions options;
  options.max_muted_pods = 100;
  RestartNoticeGate gate(options);
  // 1,000 pods restarting within one window: the table never passes its bound.
  for (int i = 0; i < 1000; ++i) {
    CHECK(gate.Admit(Pod("ml", absl::StrCat("p", i)), Restart(1), kStart + absl::Milliseconds(i)) ==
          NoticeVerdict::kSend);
    REQUIRE(gate.muted_pods() <= 100);
  }
  // The newest pods are still muted (the oldest windows were the ones forgotten).
  CHECK(gate.Admit(Pod("ml", "p999"), Restart(2), kStart + absl::Seconds(2)) == NoticeVerdict::kMuted);
  SECTION("expired windows are forgotten first") {
    RestartNoticeOptions small;
    small.max_muted_pods = 2;
    RestartNoticeGate two(small);
    CHECK(two.Admit(Pod("ml", "a"), Restart(1), kStart) == NoticeVerdict::kSend);
    CHECK(two.Admit(Pod("ml", "b"), Restart(1), kStart + absl::Minutes(9)) == NoticeVerdict::kSend);
    CHECK(two.Admit(Pod("ml", "c"), Restart(1), kStart + absl::Minutes(11)) == NoticeVerdict::kSend);  // a expired
    CHECK(two.Admit(Pod("ml", "b"), Restart(2), kStart + absl::Minutes(12)) == NoticeVerdict::kMuted);
  }
}

}  // namespace
}  // namespace topofit::notify
