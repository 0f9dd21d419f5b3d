// The node agent's records (the other kinds are checked through the extender, the expander and the replay).

#include "history/from_decisions.h"

#include <catch2/catch.hpp>

#include "history/explain.h"

namespace topofit::history {
namespace {

const PodSubject kTrainer{"uid-trainer", "ml/trainer"};

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

}  // namespace
}  // namespace topofit::history
