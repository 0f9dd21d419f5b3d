#include "history/pod_events.h"

#include <catch2/catch.hpp>

#include "history/from_decisions.h"

namespace topofit::history {
namespace {

const PodSubject kTrainer{"uid-trainer", "ml/trainer"};

Candidate Refused(const std::string& node, Reason reason, int64_t requested, int64_t available) {
  Candidate c;
  c.name = node;
  c.reason = reason;
  c.requested = requested;
  c.available = available;
  c.topology = TopologyDetail{"0,1,2,3,4,5,6,7", "PHB", 120'000};
  return c;
}

TEST_CASE("A filter that refused a GPU pod for its topology is a Warning naming the best reachable set", "[pod_events]") {
  // min-link NV (LinkClass 1) asked, PHB (4) reached.
  const Record record = FilterRecord(absl::UnixEpoch(), kTrainer, 8, {Refused("g5-1", Reason::kMinLink, 1, 4)});
  const std::vector<PodEvent> events = PodEventsOf(record);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == PodEventKind::kRefusedForTopology);
  CHECK(events[0].namespace_name == "ml");
  CHECK(events[0].name == "trainer");
  CHECK(events[0].uid == "uid-trainer");
  CHECK(IsWarning(events[0].kind));
  CHECK(PodEventReason(events[0].kind) == "RefusedForTopology");
  CHECK(PodEventAction(events[0].kind) == "Filter");
  CHECK(events[0].note ==
        "every one of 1 nodes refused 8 GPUs: g5-1: needs links of NV or better, best reachable is PHB "
        "(best set: GPUs 0,1,2,3,4,5,6,7, weakest link PHB, 120 GB/s)");
}

TEST_CASE("Filters that fit, refuse only by count, or judge a pod without GPUs give no Event", "[pod_events]") {
  Candidate fits;
  fits.name = "p4d-1";
  CHECK(PodEventsOf(FilterRecord(absl::UnixEpoch(), kTrainer, 8, {fits, Refused("g5-1", Reason::kMinLink, 1, 4)})).empty());
  // kube-scheduler's FailedScheduling already says a node lacks free GPUs.
  CHECK(PodEventsOf(FilterRecord(absl::UnixEpoch(), kTrainer, 8, {Refused("g5-1", Reason::kGpuCount, 8, 2)})).empty());
  CHECK(PodEventsOf(FilterRecord(absl::UnixEpoch(), kTrainer, 0, {Refused("g5-1", Reason::kMinLink, 1, 4)})).empty());
}

TEST_CASE("Capacity asked, capacity held and GPUs assigned are Normal Events", "[pod_events]") {
  const std::vector<PodEvent> asked =
      PodEventsOf(CapacityRecord(absl::UnixEpoch(), Kind::kCapacityRequested, kTrainer, "ml/topofit-trainer"));
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].kind == PodEventKind::kCapacityRequested);
  CHECK_FALSE(IsWarning(asked[0].kind));
  CHECK(asked[0].note == "asked cluster-autoscaler for capacity (ProvisioningRequest ml/topofit-trainer)");

  decision::Intent intent;
  intent.node_group = "p4d-group";
  intent.node_count = 1;
  intent.pod_uids = {"uid-a", "uid-b"};
  intent.pod_gpus = {{"uid-a", 4}, {"uid-b", 4}};
  const std::vector<PodEvent> held =
      PodEventsOf(IntentRecord(absl::UnixEpoch(), intent, {{"uid-a", "ml/a"}, {"uid-b", "ml/b"}}));
  REQUIRE(held.size() == 2);  // one per pod the new GPUs are held for
  CHECK(held[0].name == "a");
  CHECK(held[1].uid == "uid-b");
  CHECK(PodEventReason(held[1].kind) == "CapacityHeld");
  CHECK(held[1].note == "node group p4d-group grows by 1 node(s); 8 of its GPUs held for 2 pod(s)");

  const std::vector<PodEvent> bound =
      PodEventsOf(BindRecord(absl::UnixEpoch(), kTrainer, "p4d-new", 8, "0,1,2,3,4,5,6,7", true));
  REQUIRE(bound.size() == 1);
  CHECK(PodEventReason(bound[0].kind) == "GpusAssigned");
  CHECK(PodEventAction(bound[0].kind) == "Bind");
  CHECK(bound[0].note == "bound to p4d-new, GPUs 0,1,2,3,4,5,6,7");
  CHECK(PodEventsOf(BindRecord(absl::UnixEpoch(), kTrainer, "p4d-new", 8, "", false)).empty());
}

TEST_CASE("A pod named without a namespace gets no Event", "[pod_events]") {
  CHECK(PodEventsOf(CapacityRecord(absl::UnixEpoch(), Kind::kCapacityRequested, {"uid-x", "trainer"})).empty());
  CHECK(PodEventsOf(CapacityRecord(absl::UnixEpoch(), Kind::kCapacityRequested, {"uid-x", "ml/"})).empty());
}

TEST_CASE("A note is cut to 1 KiB, never inside a UTF-8 character", "[pod_events]") {
  std::vector<Candidate> refused;
  for (int i = 0; i < 40; ++i) refused.push_back(Refused("node-with-a-long-name-" + std::to_string(i), Reason::kMinLink, 1, 4));
  const std::vector<PodEvent> events = PodEventsOf(FilterRecord(absl::UnixEpoch(), kTrainer, 8, refused));
  REQUIRE(events.size() == 1);
  CHECK(events[0].note.size() <= kMaxEventNoteBytes);

  // "é" is two bytes: a cut at 4 would split the second one.
  CHECK(TruncateUtf8("aéé", 4) == "aé");
  CHECK(TruncateUtf8("aéé", 5) == "aéé");
  CHECK(TruncateUtf8("abc", 2) == "ab");
  CHECK(TruncateUtf8("abc", 10) == "abc");
}

}  // namespace
}  // namespace topofit::history
