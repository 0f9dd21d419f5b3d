// The node agent's records and a filter's candidates (the other kinds are checked through the extender, the
// expander and the replay).

#include "history/from_decisions.h"

#include <catch2/catch.hpp>

#include "history/explain.h"
#include "topology/catalog.h"

namespace topofit::history {
namespace {

const PodSubject kTrainer{"uid-trainer", "ml/trainer"};

// A node of 8 GPUs whose topology its labels name (an A100 baseboard), or, with no label, the PCIe-only
// fallback topofit assumes.
decision::NodeGpuSnapshot Node(const std::string& name, bool labelled = true) {
  std::map<std::string, std::string, std::less<>> labels;
  if (labelled) labels[std::string(topology::kInstanceTypeLabel)] = "p4d.24xlarge";
  decision::NodeGpuSnapshot node;
  node.node = name;
  node.topology = std::make_shared<const topology::Topology>(topology::TopologyFromLabels(labels, 8).value().topology);
  return node;
}

TEST_CASE("The agent's GetPreferredAllocation answer is a record on the pod's chain, or the node's", "[history]") {
  const Record chosen = PreferredAllocationRecord(absl::UnixEpoch(), "p4d-1", &kTrainer, "0,1,2,3");
  CHECK(chosen.component == Component::kAgent);
  CHECK(chosen.kind == Kind::kPreferredAllocation);
  CHECK(chosen.reason == Reason::kAsChosen);
  CHECK(chosen.correlation_id == "uid-trainer");
  CHECK(chosen.pods == std::vector<PodSubject>{kTrainer});
  CHECK(chosen.node == "p4d-1");
  CHECK(chosen.gpus == 4);
  CHECK(DescribeRecord(chosen) == "node agent on p4d-1 preferred GPUs 0,1,2,3, as the extender chose");

  const Record fallback = PreferredAllocationRecord(absl::UnixEpoch(), "p4d-1", nullptr, "5");
  CHECK(fallback.reason == Reason::kAllocatorFallback);
  CHECK(fallback.correlation_id.empty());
  CHECK(fallback.pods.empty());
  CHECK(fallback.gpus == 1);
  CHECK(DescribeRecord(fallback) ==
        "node agent on p4d-1 preferred GPUs 5, topofit's allocator's (no pod waits with a choice)");
}

TEST_CASE("The kubelet's Allocate: as chosen, other devices, or matched to no pod", "[history]") {
  const Record as_chosen = AllocationRecord(absl::UnixEpoch(), "p4d-1", &kTrainer, "0,1", "0,1");
  CHECK(as_chosen.kind == Kind::kAllocation);
  CHECK(as_chosen.reason == Reason::kAsChosen);
  CHECK(as_chosen.correlation_id == "uid-trainer");
  CHECK(DescribeRecord(as_chosen) == "the kubelet gave GPUs 0,1 on p4d-1, as the extender chose");

  const Record other = AllocationRecord(absl::UnixEpoch(), "p4d-1", &kTrainer, "0,1", "4,5");
  CHECK(other.reason == Reason::kOtherDevices);
  CHECK(other.gpus == 2);
  CHECK(DescribeRecord(other) == "the kubelet gave GPUs 4,5 on p4d-1, not GPUs 0,1 the extender chose");

  const Record unmatched = AllocationRecord(absl::UnixEpoch(), "p4d-1", nullptr, "", "7");
  CHECK(unmatched.reason == Reason::kUnmatched);
  CHECK(unmatched.pods.empty());
  CHECK(DescribeRecord(unmatched) == "the kubelet gave GPUs 7 on p4d-1 to a pod topofit did not bind");
}

TEST_CASE("a filter keeps each refused node and the nodes that fit as the first with their count", "[history]") {
  decision::NodeVerdict fits;
  fits.fits = true;
  fits.chosen.emplace();
  fits.chosen->gpus = topology::GpuSet::FirstN(2);
  fits.chosen->quality.bandwidth_mbps = 240'000;
  fits.chosen->quality.weakest = topology::LinkClass::kNvLink;
  decision::NodeVerdict refused;
  refused.refusal = decision::Refusal::kGpuCount;
  refused.requested_gpus = 2;
  refused.free_gpus = 1;
  refused.insufficient.push_back({.kind = topology::Insufficiency::Kind::kGpuCount, .requested = 2, .available = 1});
  FilterCandidates candidates(5);
  candidates.Add(Node("n-1"), refused);
  candidates.Add(Node("n-2"), fits);
  candidates.Add(Node("n-3"), fits);
  candidates.Add(Node("n-4"), refused);
  candidates.Add(Node("n-5"), fits);
  candidates.AddUnknownTopology("n-6");
  const Record r = FilterRecord(absl::UnixEpoch(), kTrainer, 2, std::move(candidates).Take());
  REQUIRE(r.candidates.size() == 4);
  CHECK(r.candidates[0].name == "n-1");
  CHECK(r.candidates[0].reason == Reason::kGpuCount);
  CHECK(r.candidates[1].name == "n-2");
  CHECK(r.candidates[1].count == 3);  // n-2, n-3, n-5
  CHECK(r.candidates[1].topology == TopologyDetail{"0,1", "NV", 240'000});
  CHECK(r.candidates[2].name == "n-4");
  CHECK(r.candidates[3].reason == Reason::kTopologyUnknown);
  CHECK(r.reason == Reason::kFits);
  // What explain tells of it counts the nodes, not the candidates.
  CHECK(DescribeRecord(r) == "filter: 3 of 6 nodes fit 2 GPUs; n-2 would give GPUs 0,1, weakest link NV, 240 GB/s");
}

TEST_CASE("a topology refusal on a node whose topology was assumed says so, in the record and in explain", "[history]") {
  decision::NodeVerdict min_link;
  min_link.unresolvable = true;
  min_link.refusal = decision::Refusal::kMinLink;
  min_link.requested_gpus = 2;
  min_link.best_reachable.emplace();
  min_link.best_reachable->gpus = topology::GpuSet::FirstN(2);
  min_link.best_reachable->quality.weakest = topology::LinkClass::kSys;
  min_link.insufficient.push_back({.kind = topology::Insufficiency::Kind::kMinLink,
                                   .requested = static_cast<int64_t>(topology::LinkClass::kNvLink),
                                   .available = static_cast<int64_t>(topology::LinkClass::kSys)});
  FilterCandidates candidates(2);
  candidates.Add(Node("labelled", true), min_link);
  candidates.Add(Node("bare", false), min_link);
  const std::vector<Candidate> judged = std::move(candidates).Take();
  REQUIRE(judged.size() == 2);
  CHECK_FALSE(judged[0].topology->assumed);
  CHECK(judged[1].topology->assumed);
  CHECK_THAT(DescribeRefusal(judged[1]), Catch::EndsWith("its topology is assumed PCIe-only: no instance type, GPU "
                                                         "Feature Discovery label or topofit.io/topology annotation "
                                                         "says what it is"));
  CHECK_THAT(DescribeRefusal(judged[0]), !Catch::Contains("assumed"));
}

TEST_CASE("a node refused for a hold keeps until when the pod is held back, and explain tells it", "[history]") {
  decision::NodeVerdict held;
  held.unresolvable = true;
  held.refusal = decision::Refusal::kHeldForScaleUp;
  held.requested_gpus = 1;
  held.held_gpus = 8;
  held.free_gpus = 8;
  held.held_until = absl::FromUnixSeconds(1'750'000'600);
  decision::NodeVerdict member = held;  // a pod of the pool: no end to its hold but the pool's own rule
  member.held_until.reset();
  FilterCandidates candidates(2);
  candidates.Add(Node("p4d-new-0"), held);
  candidates.Add(Node("p4d-new-1"), member);
  const Record r = FilterRecord(absl::FromUnixSeconds(1'750'000'000), kTrainer, 1, std::move(candidates).Take());
  REQUIRE(r.candidates.size() == 2);
  CHECK(r.candidates[0].held_until == absl::FromUnixSeconds(1'750'000'600));
  CHECK_FALSE(r.candidates[1].held_until.has_value());
  CHECK(DescribeRecord(r) ==
        "filter: every one of 2 nodes refused 1 GPUs: p4d-new-0: 8 of the node's 8 free GPUs are held for the pods "
        "a scale-up brought it for; this pod is held back until 2025-06-15T15:16:40.000000Z; p4d-new-1: 8 of the node's 8 "
        "free GPUs are held for the pods a scale-up brought it for");
}

}  // namespace
}  // namespace topofit::history

namespace topofit::history {
namespace {

std::vector<Kind> KindsOf(const std::vector<Record>& records) {
  std::vector<Kind> kinds;
  for (const Record& r : records) kinds.push_back(r.kind);
  return kinds;
}

TEST_CASE("one filter cycle's records come in one order: the filter, the preference, the capacity request", "[history]") {
  decision::NodeVerdict min_link;
  min_link.refusal = decision::Refusal::kMinLink;
  min_link.unresolvable = true;
  min_link.requested_gpus = 8;
  decision::Preference preference;
  preference.pod_uid = kTrainer.uid;
  preference.pod_key = kTrainer.key;
  preference.gpus = 8;
  preference.refused_nodes = {"g5-1"};
  const std::vector<Record> asked =
      FilterCycleRecords(absl::UnixEpoch(), kTrainer, 8, {NodeCandidate("g5-1", min_link)}, &preference, true);
  CHECK(KindsOf(asked) == std::vector<Kind>{Kind::kFilter, Kind::kPreference, Kind::kCapacityRequested});
  for (const Record& r : asked) CHECK(r.correlation_id == kTrainer.uid);
  // Held back (no request), and a pod that fits (no preference): the filter's record alone after it.
  CHECK(KindsOf(FilterCycleRecords(absl::UnixEpoch(), kTrainer, 8, {}, &preference, false)) ==
        std::vector<Kind>{Kind::kFilter, Kind::kPreference});
  CHECK(KindsOf(FilterCycleRecords(absl::UnixEpoch(), kTrainer, 8, {}, nullptr, false)) == std::vector<Kind>{Kind::kFilter});
}

TEST_CASE("an expander call records its ranking when it judged a GPU option, then its intent", "[history]") {
  decision::RankInput input;
  input.options.push_back({"cpu", 1, {}});
  decision::ScaleUpChoice choice;
  decision::OptionVerdict cpu;
  cpu.node_group_id = "cpu";
  choice.ranking.verdicts.push_back(cpu);
  choice.ranking.chosen = {"cpu"};
  CHECK(ScaleUpRecords(absl::UnixEpoch(), input, choice).empty());  // passed through: nothing decided

  input.options.push_back({"p4d", 1, {}});
  decision::OptionVerdict p4d;
  p4d.node_group_id = "p4d";
  p4d.needs_gpus = true;
  choice.ranking.verdicts.push_back(p4d);
  choice.ranking.chosen = {"p4d", "cpu"};
  decision::Intent intent;
  intent.node_group = "p4d";
  intent.node_count = 1;
  choice.intent = intent;
  const std::vector<Record> records = ScaleUpRecords(absl::UnixEpoch(), input, choice);
  CHECK(KindsOf(records) == std::vector<Kind>{Kind::kRanking, Kind::kIntent});
  CHECK(records[1].node_group == "p4d");
}

}  // namespace
}  // namespace topofit::history
