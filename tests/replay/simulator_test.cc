#include "replay/simulator.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "replay/summary.h"
#include "tests/replay/run_policy.h"
#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::Named;
using testing::NvPod;
using testing::Pod;
using testing::Run;

// One PCIe node already up, an NVLink group to grow, and a pod that needs NVLink for 4 GPUs.
Workload FitsByCountOnly() {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("train", 0, kHour, 4)};
  return workload;
}

TEST_CASE("Baseline: a pod that fits an existing node by count runs there, and CA grows nothing", "[replay]") {
  const ReplayResult result = Run(FitsByCountOnly(), "stock");
  CHECK(result.scale_ups.empty());
  CHECK(result.pods[0].first_start == 0);
  CHECK(result.provisioning_requests == 0);
}

TEST_CASE("topofit: the pod refused for topology gets a ProvisioningRequest and an NVLink node", "[replay]") {
  for (const std::string policy : {"topofit", "extender-only"}) {
    INFO(policy);
    const ReplayResult result = Run(FitsByCountOnly(), policy);
    CHECK(result.provisioning_requests == 1);
    REQUIRE(result.scale_ups.size() == 1);
    CHECK(result.scale_ups[0].group == "nvlink");
    CHECK(result.scale_ups[0].for_provisioning_request);
    CHECK_FALSE(result.scale_ups[0].stranded);
    // Created at the first CA loop (10 s), Ready 5 minutes later, bound at once.
    CHECK(result.pods[0].first_start == 10 * kSecond + 5 * kMinute);
    CHECK(result.pods[0].best_topology);
  }
}

// Issue 11: with topofit's node agent the kubelet gets the ids the extender chose; without it NVIDIA's
// plugin picks (a random free GPU for one), and the replay counts the pods whose set differs.
TEST_CASE("The node agent gives the chosen GPU ids, without it NVIDIA's device plugin picks its own (--gpu-ids)", "[replay]") {
  Workload workload;
  workload.groups = {Group("nvlink", "p4d.24xlarge", 8, 32.77, 1, 1)};
  for (int i = 0; i < 8; ++i) workload.pods.push_back(Pod(absl::StrCat("one-", i), i * kSecond, kHour, 1));
  for (const GpuIds who : {GpuIds::kAgent, GpuIds::kDevicePlugin}) {
    Policy policy = Named("topofit");
    policy.gpu_ids = who;
    absl::StatusOr<ReplayResult> result = Replay(workload, policy, ReplayOptions{});
    REQUIRE(result.ok());
    // The extender gives one GPU after another (0, 1, ...: every leftover is equally cohesive on NVSwitch);
    // the plugin a random free one, which differs for some of the eight.
    if (who == GpuIds::kAgent) {
      CHECK(result->gpu_sets_not_as_chosen == 0);
    } else {
      CHECK(result->gpu_sets_not_as_chosen > 0);
      CHECK(result->gpu_sets_not_as_chosen <= 8);
    }
    // Either way every pod runs at once on the one node: no GPU given twice, none lost.
    for (const PodOutcome& pod : result->pods) CHECK(pod.first_start == pod.arrival);
    CHECK(Summarise(*result).gpu_sets_not_as_chosen == result->gpu_sets_not_as_chosen);
  }
}

TEST_CASE("Scale-down removes a node unneeded for 10 minutes, and CA grows one for a later pod", "[replay]") {
  Workload workload;
  workload.groups = {Group("nvlink", "p4d.24xlarge", 8, 32.77, 2, 1)};
  workload.pods = {Pod("short", 0, 5 * kMinute, 1), Pod("later", kHour, 10 * kMinute, 1)};
  const ReplayResult result = Run(workload, "stock");
  REQUIRE(result.nodes.size() == 2);
  // Empty from 5:00, the loop at 5:00 marks it unneeded; removed by the loop at 15:00.
  CHECK(result.nodes[0].removed == 15 * kMinute);
  // The later pod: pending from 60:00; CA waits until the oldest GPU pod is 30 s old, then grows a node
  // that is Ready 5 minutes later.
  CHECK(result.scale_ups.size() == 1);
  CHECK(result.nodes[1].requested == kHour + 30 * kSecond);
  CHECK(result.pods[1].first_start == kHour + 30 * kSecond + 5 * kMinute);
}

TEST_CASE("Stock expanders are blind to NVLink, topofit's expander grows the NVLink group", "[replay]") {
  Workload workload;
  // Same CPU and memory: least-waste ties, random decides.
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("train", 0, kHour, 8)};
  int baseline_pcie = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const ReplayResult baseline = Run(workload, "stock", seed);
    REQUIRE(baseline.scale_ups.size() == 1);
    baseline_pcie += baseline.scale_ups[0].group == "pcie";
    const ReplayResult ours = Run(workload, "expander-only", seed);
    REQUIRE(ours.scale_ups.size() == 1);
    CHECK(ours.scale_ups[0].group == "nvlink");
  }
  CHECK(baseline_pcie > 0);
}

TEST_CASE("With the extender but a stock expander, scale-ups strand, with both they do not", "[replay]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 4), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("train", 0, kHour, 8)};
  int stranded = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const PolicySummary extender_only = Summarise(Run(workload, "extender-only", seed));
    stranded += extender_only.stranded_scale_ups;
    CHECK(extender_only.pods_never_started == 0);  // it gets there in the end
    const PolicySummary both = Summarise(Run(workload, "topofit", seed));
    CHECK(both.stranded_scale_ups == 0);
    CHECK(both.scale_ups == 1);
  }
  CHECK(stranded > 0);
}

// The PCIe node is full; an NVLink node is grown for an 8-GPU trainer. A 1-GPU pod of higher priority
// arrives while it comes up: kube-scheduler tries it first, and without a hold it would take one GPU of the
// new node and leave the trainer waiting for the next scale-up.
TEST_CASE("topofit: the node grown for a pod is held for it against a higher-priority latecomer", "[replay]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 3)};
  PodSpec web = Pod("web", kMinute, kHour, 1);
  web.priority = 1000;
  workload.pods = {Pod("filler", 0, 10 * kHour, 8), NvPod("train", 0, kHour, 8), web};
  const ReplayResult result = Run(workload, "topofit");
  REQUIRE(result.scale_ups.size() >= 1);
  CHECK(result.scale_ups[0].group == "nvlink");
  // CA grows one node for the trainer once it has waited 30 s; Ready 5 minutes later, it is the trainer's.
  CHECK(result.pods[1].first_start == 30 * kSecond + 5 * kMinute);
  CHECK(result.pods[1].best_topology);
  CHECK(result.pods[2].first_start > result.pods[1].first_start);  // web got capacity of its own
}

TEST_CASE("topofit: pods a scale-up was made for take its nodes in the scheduler's queue order, not CA's packing order", "[replay]") {
  Workload workload;
  NodeGroupSpec nvlink = Group("nvlink", "p4d.24xlarge", 8, 32.77, 2);
  nvlink.provision_delay_min = 4 * kMinute;  // the two nodes come up at different times
  nvlink.provision_delay_max = 6 * kMinute;
  workload.groups = {nvlink};
  PodSpec big = NvPod("big", kSecond, kHour, 8);
  big.cpu_milli = 64000;  // CA's estimator packs it first (by CPU and memory share)
  workload.pods = {NvPod("small", 0, kHour, 2), big};
  const ReplayResult result = Run(workload, "topofit");
  REQUIRE(result.scale_ups.size() == 1);
  CHECK(result.scale_ups[0].nodes == 2);
  REQUIRE(result.nodes.size() == 2);
  const SimTime first_ready = std::min(result.nodes[0].ready, result.nodes[1].ready);
  const SimTime second_ready = std::max(result.nodes[0].ready, result.nodes[1].ready);
  REQUIRE(first_ready < second_ready);
  // The older pod is first in kube-scheduler's queue: it takes the first node; the 8-GPU pod, which no
  // longer fits there, the second.
  CHECK(result.pods[0].first_start == first_ready);
  CHECK(result.pods[1].first_start == second_ready);
}

// A hold keeps a pod off the node grown for another only while the pod is not late (decision::JudgedPod):
// a 1-GPU pod whose g5 node never comes up is held back for 10 minutes, then takes what there is, ahead
// of the younger trainer, as kube-scheduler's queue orders them.
TEST_CASE("topofit: a pod whose node never came is held off the node grown for a trainer only until it is late",
          "[replay]") {
  Workload workload;
  NodeGroupSpec flaky = Group("g5", "g5.48xlarge", 8, 16.29, 2);
  flaky.provision_failure_rate = 1.0;
  workload.groups = {flaky, Group("nvlink", "p4d.24xlarge", 8, 32.77, 3)};
  const SimTime trainer_arrives = GENERATE(2 * kMinute, 6 * kMinute);
  workload.pods = {Pod("web", 0, kHour, 1), NvPod("train", trainer_arrives, kHour, 8)};
  const ReplayResult result = Run(workload, "topofit");
  REQUIRE(result.scale_ups.size() >= 2);
  CHECK(result.scale_ups[0].group == "g5");  // for web at 0:30: the cheaper group, whose node never comes
  CHECK(result.scale_ups[1].group == "nvlink");
  CHECK(result.scale_ups[1].at == trainer_arrives);  // CA's loop is already running for web
  const SimTime p4d_ready = trainer_arrives + 5 * kMinute;
  if (trainer_arrives == 2 * kMinute) {
    // Up at 7:00, when web has waited 7 minutes: held for the trainer.
    CHECK(result.pods[1].first_start == p4d_ready);
    CHECK(result.pods[0].first_start > p4d_ready);
  } else {
    // Up at 11:00: web is late, first in the queue, and takes a GPU; the trainer waits for another node.
    CHECK(result.pods[0].first_start == p4d_ready);
    CHECK(result.pods[1].first_start > p4d_ready);
  }
}

// Wait or place now (decision/capacity_wait.h): a 4-GPU pod preferring NVLink, for which a p4d node is
// booting, waits for it rather than take the PCIe node a finished pod frees before then.
TEST_CASE("topofit: a pod preferring NVLink waits for the p4d node booting for it rather than run slower on a g5 now",
          "[replay][capacity_wait]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1)};
  PodSpec train = Pod("train", 0, kHour, 4);
  train.min_link = "NV";  // preferred: the default policy
  train.comm_fraction = 0.3;
  workload.pods = {Pod("filler", 0, 2 * kMinute, 8), train};

  ReplayOptions options;
  Policy topofit = Named("topofit");
  absl::StatusOr<ReplayResult> waited = Replay(workload, topofit, options);
  REQUIRE(waited.ok());
  REQUIRE(waited->scale_ups.size() == 1);
  CHECK(waited->scale_ups[0].group == "nvlink");  // CA grew it once the pod had waited 30 s
  // The g5 frees at 2 minutes; the pod waits for its node, Ready at 30 s + 5 minutes, and runs at full speed.
  CHECK(waited->pods[1].first_start == 30 * kSecond + 5 * kMinute);
  CHECK(waited->pods[1].best_topology);
  CHECK(waited->pods[1].stretch == 1);
  CHECK_FALSE(waited->scale_ups[0].stranded);
  CHECK_FALSE(waited->scale_ups[0].overtaken);

  topofit.capacity_wait.max_wait = absl::ZeroDuration();  // place now, as the stock scheduler does
  absl::StatusOr<ReplayResult> placed = Replay(workload, topofit, options);
  REQUIRE(placed.ok());
  CHECK(placed->pods[1].first_start == 2 * kMinute);
  CHECK(placed->pods[1].stretch > 1.5);
  REQUIRE(placed->scale_ups.size() == 1);
  CHECK(placed->scale_ups[0].stranded);  // the p4d node came up to nobody
  CHECK(placed->scale_ups[0].overtaken);  // its pod had started on the g5 at 2 minutes, before it was Ready
}

// Wait for capacity still to be asked for (decision/capacity_ask.h): a 4-GPU pod preferring NVLink that
// says it runs an hour, with nothing coming for it, refuses the idle g5 and has a p4d node asked for; one
// that says it runs a minute, or says nothing, takes the g5 at once.
TEST_CASE("topofit: an hour-long trainer preferring NVLink has a p4d node asked for rather than run slower on an idle g5",
          "[replay][capacity_ask]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2, 1)};
  PodSpec train = Pod("train", kSecond, kHour, 4);
  train.min_link = "NV";  // preferred: the default policy
  train.comm_fraction = 0.3;
  train.expected_runtime = kHour;
  // The p4d node that is up runs a 2-hour job: the cluster has the shape, not its GPUs free.
  workload.pods = {NvPod("busy", 0, 2 * kHour, 8), train};

  const ReplayResult asked = Run(workload, "topofit");
  CHECK(asked.pods[0].first_start == 0);
  REQUIRE(asked.scale_ups.size() == 1);
  CHECK(asked.scale_ups[0].group == "nvlink");
  CHECK(asked.scale_ups[0].for_provisioning_request);  // asked through topofit's ProvisioningRequest
  CHECK(asked.provisioning_requests == 1);
  REQUIRE(asked.nodes.size() == 3);
  // It starts on the new p4d node as soon as it is Ready, on its best set.
  CHECK(asked.pods[1].first_start == asked.nodes[2].ready);
  CHECK(asked.pods[1].best_topology);
  CHECK(asked.pods[1].stretch == 1);
  CHECK(asked.pods[1].first_start < 10 * kMinute);

  // A minute of work: the slowdown on the g5 costs less than a node's boot.
  workload.pods[1].expected_runtime = kMinute;
  workload.pods[1].duration = kMinute;
  const ReplayResult short_job = Run(workload, "topofit");
  CHECK(short_job.pods[1].first_start == kSecond);
  CHECK(short_job.pods[1].stretch > 1.5);
  CHECK(short_job.scale_ups.empty());

  // Saying nothing of its run time, it asks for nothing (waiting for capacity nobody asked for yet cost
  // multi-GPU pods their p95 on openb, bench/RESULTS.md).
  workload.pods[1].expected_runtime = 0;
  workload.pods[1].duration = kHour;
  const ReplayResult silent = Run(workload, "topofit");
  CHECK(silent.pods[1].first_start == kSecond);
  CHECK(silent.scale_ups.empty());
}

// The same rule when the NVLink group is at size zero: no node shows its shape, but the expander was sent
// its template in an earlier scale-up (for another pod), and the ledger carries it to the extender.
TEST_CASE("topofit: a trainer preferring NVLink has a node of a group at size zero asked for, once CA has offered it",
          "[replay][capacity_ask]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1)};
  PodSpec train = Pod("train", 10 * kMinute, kHour, 4);
  train.min_link = "NV";  // preferred: the default policy
  train.comm_fraction = 0.3;
  train.expected_runtime = kHour;
  // The first g5 is busy; `other` has CA grow a second, cheaper than a p4d: that call offered both groups.
  workload.pods = {Pod("busy", 0, 2 * kHour, 8), Pod("other", kSecond, 2 * kHour, 4), train};

  const ReplayResult asked = Run(workload, "topofit");
  REQUIRE(asked.scale_ups.size() == 2);
  CHECK(asked.scale_ups[0].group == "pcie");
  CHECK(asked.scale_ups[1].group == "nvlink");
  CHECK(asked.scale_ups[1].for_provisioning_request);
  // The second g5 had 4 GPUs free when the trainer came; it waited for the p4d and runs on its best set.
  CHECK(asked.pods[2].first_start > 10 * kMinute);
  CHECK(asked.pods[2].best_topology);
  CHECK(asked.pods[2].stretch == 1);

  // No earlier scale-up, so nothing told the extender of the p4d group: the trainer takes the g5's PCIe set.
  workload.groups[0].initial_size = 2;
  const ReplayResult unaware = Run(workload, "topofit");
  CHECK(unaware.scale_ups.empty());
  CHECK(unaware.pods[2].first_start == 10 * kMinute);
  CHECK(unaware.pods[2].stretch > 1.5);
}

// CA's request carries every group's template, not only the offered ones: a scale-up whose only option
// is the g5 group (its pod selects A10G) still tells the extender of the p4d group at size zero.
TEST_CASE("topofit: the extender learns of a group CA did not offer, since CA sends every group's template",
          "[replay][capacity_ask]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1)};
  PodSpec other = Pod("other", kSecond, 2 * kHour, 4);
  other.gpu_products = {"NVIDIA-A10G"};  // fits no p4d template: CA's only option is the g5 group
  // It says an hour and is done in 9 minutes, before CA could find its half-used p4d node unneeded.
  PodSpec train = Pod("train", 10 * kMinute, 9 * kMinute, 4);
  train.min_link = "NV";  // preferred: the default policy
  train.comm_fraction = 0.3;
  train.expected_runtime = kHour;
  workload.pods = {Pod("busy", 0, 2 * kHour, 8), other, train};

  const ReplayResult asked = Run(workload, "topofit");
  REQUIRE(asked.scale_ups.size() == 2);
  CHECK(asked.scale_ups[0].group == "pcie");
  CHECK(asked.scale_ups[1].group == "nvlink");
  CHECK(asked.pods[2].best_topology);
  CHECK(asked.pods[2].stretch == 1);
}

// CA's scale-down does not ask the extender either: the trainer's p4d node is half used (4 of 8 GPUs, at
// the 0.5 threshold) and CA's drain simulation fits the trainer on the g5's 4 free GPUs by count. Evicted,
// the extender would refuse it the g5 (it asks for NVLink) and ask for a new p4d node: every 15 minutes
// while it runs. The drain guard marks it safe-to-evict "false" while no other busy node could give it
// NVLink (scheduler/drain_guard.h), and CA leaves its node alone.
TEST_CASE("replay: a trainer on the NVLink node it asked for is kept from CA's scale-down, which would evict it again and again",
          "[replay][capacity_ask]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1)};
  PodSpec other = Pod("other", kSecond, 2 * kHour, 4);
  other.gpu_products = {"NVIDIA-A10G"};
  PodSpec train = Pod("train", 10 * kMinute, kHour, 4);
  train.min_link = "NV";
  train.comm_fraction = 0.3;
  train.expected_runtime = kHour;
  workload.pods = {Pod("busy", 0, 2 * kHour, 8), other, train};

  const ReplayResult kept = Run(workload, "topofit");
  CHECK(kept.evicted_pods == 0);
  CHECK(kept.scale_ups.size() == 2);  // the g5 for `other`, the p4d for the trainer
  CHECK(kept.pods[2].best_topology);
  CHECK(kept.pods[2].evictions == 0);

  // Without the annotation: the loop.
  Policy unguarded = Named("topofit");
  unguarded.drain_guard = false;
  absl::StatusOr<ReplayResult> drained = Replay(workload, unguarded, ReplayOptions{});
  REQUIRE(drained.ok());
  CHECK(drained->evicted_pods >= 3);
  CHECK(drained->evicted_multi_gpu_pods == drained->evicted_pods);  // the trainer, again and again
  CHECK(drained->scale_ups.size() == static_cast<size_t>(drained->evicted_pods) + 2);
  CHECK(drained->pods[2].evictions == drained->evicted_pods);
}

// The guard keeps a node only while the pod has nowhere else to go. Two p4d nodes: `y` (4 GPUs, 2 h) and
// `x` (4 GPUs, 10 min) fill the first, the trainer (2 GPUs, NVLink required) and `z` (2 GPUs, 10 min) go to
// the second. At 10 minutes x and z end: the first node is half used, the trainer's a quarter. Another busy
// node now has four NVLink GPUs free, so the trainer is not kept: CA drains its node (10 minutes later), the
// trainer lands on the first node's NVLink GPUs, and one node runs both.
TEST_CASE("replay: the drain guard lets CA consolidate when another busy node gives the pod its topology",
          "[replay]") {
  Workload workload;
  workload.groups = {Group("nvlink", "p4d.24xlarge", 8, 32.77, 2, 2)};
  workload.pods = {Pod("y", 0, 2 * kHour, 4), Pod("x", kSecond, 10 * kMinute, 4),
                   NvPod("train", 2 * kSecond, 2 * kHour, 2), Pod("z", 3 * kSecond, 10 * kMinute, 2)};
  const ReplayResult result = Run(workload, "topofit");
  CHECK(result.pods[2].evictions == 1);  // the trainer, once
  CHECK(result.evicted_pods == 1);
  CHECK(result.pods[2].best_topology);
  REQUIRE(result.nodes.size() == 2);
  // The trainer's node went at 20 minutes (10 unneeded after x and z ended); the other runs to the end.
  int removed = 0;
  for (const NodeOutcome& node : result.nodes) removed += node.removed >= 0 && node.removed <= 21 * kMinute;
  CHECK(removed == 1);
}

// The expander ranks by the extender's rule: for a pending trainer that says its run time, CA's cheaper
// g5 option would bring a node the extender refuses (it asks for NVLink), so the p4d group grows.
TEST_CASE("topofit: CA grows the NVLink group for a pending trainer that says its run time, not a g5 it would refuse",
          "[replay][capacity_ask]") {
  Workload workload;
  // NVLink at ten times its list price: for a pod that only prefers it, not worth it.
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 1), Group("nvlink", "p4d.24xlarge", 8, 327.7, 1)};
  PodSpec train = Pod("train", kSecond, kHour, 4);
  train.min_link = "NV";  // preferred: the default policy
  train.comm_fraction = 0.3;
  train.expected_runtime = kHour;
  workload.pods = {Pod("busy", 0, 2 * kHour, 8), train};

  const ReplayResult asked = Run(workload, "topofit");
  REQUIRE(asked.scale_ups.size() == 1);
  CHECK(asked.scale_ups[0].group == "nvlink");
  CHECK_FALSE(asked.scale_ups[0].stranded);
  CHECK(asked.pods[1].best_topology);
  CHECK(asked.pods[1].first_start == asked.nodes[1].ready);

  // Saying nothing of its run time, it is priced against its slowdown: the g5 is cheaper per useful GPU-hour.
  workload.pods[1].expected_runtime = 0;
  const ReplayResult priced = Run(workload, "topofit");
  REQUIRE(priced.scale_ups.size() == 1);
  CHECK(priced.scale_ups[0].group == "pcie");
  CHECK(priced.pods[1].stretch > 1.2);
}

// Cost per useful GPU-hour counts a stretched pod's bill and its delay (decision/slowdown.h: UsefulShare).
// With p4d at ten times its list price an 8-GPU trainer that only prefers NVLink would cost three times as
// much there as on g5, whose set across the sockets stretches it almost seven times: the job is done
// seven times sooner for three times the bill, so the p4d grows. Counting the bill alone, the g5 did.
TEST_CASE("topofit: an 8-GPU trainer preferring NVLink has the p4d grown when it finishes the job sooner by more than it costs",
          "[replay]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1), Group("nvlink", "p4d.24xlarge", 8, 327.7, 1)};
  PodSpec train = Pod("train", 0, kHour, 8);
  train.min_link = "NV";  // preferred: the default policy
  train.comm_fraction = 0.2;
  workload.pods = {train};
  const ReplayResult result = Run(workload, "topofit");
  REQUIRE(result.scale_ups.size() == 1);
  CHECK(result.scale_ups[0].group == "nvlink");
  CHECK(result.pods[0].best_topology);
  CHECK(result.pods[0].stretch == 1);

  // At a hundred times its list price the p4d bill is thirty times g5's, for the same seven times sooner.
  workload.groups[1].price_per_hour = 3277;
  const ReplayResult pricier = Run(workload, "topofit");
  REQUIRE(pricier.scale_ups.size() == 1);
  CHECK(pricier.scale_ups[0].group == "pcie");
  CHECK(pricier.pods[0].stretch > 6);
}

// Azure LLM's cost, in small (issue 13): CA's options put every pending pod that fits a group by count in
// that group's option. An NVLink-required trainer fits a g5 by count, so the g5 option strands it and
// topofit's expander takes the p4d option, which carries the 1-GPU replicas too: two p4d nodes. With the
// tuned operator's affinity on the trainer (what a mutating webhook would write), CA's g5 option holds the
// replicas only: the expander grows one g5 for them ($16.29/h for 4 useful GPUs against $65.54/h for 12)
// and, next loop, one p4d for the trainer.
TEST_CASE("topofit-affinity: with the trainer's requirement visible to CA, 1-GPU replicas get a g5 of their own",
          "[replay]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 4), Group("nvlink", "p4d.24xlarge", 8, 32.77, 4)};
  workload.pods = {NvPod("train", 0, kHour, 8)};
  for (int i = 0; i < 4; ++i) workload.pods.push_back(Pod(absl::StrCat("web-", i), 0, kHour, 1));

  const ReplayResult blind = Run(workload, "topofit");
  REQUIRE(blind.scale_ups.size() == 1);
  CHECK(blind.scale_ups[0].group == "nvlink");
  CHECK(blind.scale_ups[0].nodes == 2);

  const ReplayResult seen = Run(workload, "topofit-affinity");
  REQUIRE(seen.scale_ups.size() == 2);
  CHECK(seen.scale_ups[0].group == "pcie");
  CHECK(seen.scale_ups[0].nodes == 1);
  CHECK(seen.scale_ups[1].group == "nvlink");
  CHECK(seen.scale_ups[1].nodes == 1);
  const PolicySummary blind_summary = Summarise(blind), seen_summary = Summarise(seen);
  CHECK(seen_summary.pods_never_started == 0);
  CHECK(seen_summary.cost_dollars < blind_summary.cost_dollars);
  CHECK(seen_summary.best_topology_share == 1);  // the trainer still gets its NVLink set
}

TEST_CASE("A poor set stretches a batch pod's run time, and a service replica's throughput only", "[replay]") {
  Workload workload;
  // The PCIe node is up; the NVLink group could have given the 8-GPU pod its best set.
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1)};
  PodSpec batch = Pod("batch", 0, kHour, 8);
  batch.comm_fraction = 0.3;
  workload.pods = {batch};
  const ReplayResult stretched = Run(workload, "stock");
  CHECK(stretched.pods[0].first_start == 0);
  CHECK(stretched.pods[0].stretch > 1.5);
  CHECK_FALSE(stretched.pods[0].best_topology);
  CHECK(stretched.end == static_cast<SimTime>(kHour * stretched.pods[0].stretch));

  workload.pods[0].runs_until_deleted = true;
  const ReplayResult replica = Run(workload, "stock");
  CHECK(replica.pods[0].stretch == stretched.pods[0].stretch);
  CHECK(replica.end == kHour);
  CHECK(Summarise(replica).slowdown_gpu_hours == Approx(8 * (replica.pods[0].stretch - 1)));
}

TEST_CASE("A node that never comes up is given up after 15 minutes and its group backed off", "[replay]") {
  Workload workload;
  NodeGroupSpec flaky = Group("flaky", "p4d.24xlarge", 8, 32.77, 2);
  flaky.provision_failure_rate = 1.0;
  NodeGroupSpec solid = Group("solid", "p4d.24xlarge", 8, 32.77, 2);
  solid.cpu_milli = 192000;  // more CPU waste: least-waste grows the flaky group first
  workload.groups = {flaky, solid};
  workload.pods = {Pod("train", 0, kHour, 8)};
  const ReplayResult result = Run(workload, "stock");
  CHECK(result.failed_nodes == 1);
  REQUIRE(result.scale_ups.size() == 2);
  CHECK(result.scale_ups[0].group == "flaky");
  CHECK(result.scale_ups[0].stranded);
  CHECK_FALSE(result.scale_ups[0].overtaken);  // stranded by a failure: no node of it was ever Ready
  // Given up at 0:30 + 15:00; the same loop grows the other group (the flaky one is backed off).
  CHECK(result.scale_ups[1].group == "solid");
  CHECK(result.scale_ups[1].at == 30 * kSecond + 15 * kMinute);
  CHECK(result.pods[0].first_start == 30 * kSecond + 20 * kMinute);
  REQUIRE(result.nodes.size() == 2);
  CHECK(result.nodes[0].ready == -1);
  CHECK(result.nodes[0].removed == 30 * kSecond + 15 * kMinute);
}

TEST_CASE("A pod no group can ever hold ends the replay as never started", "[replay]") {
  Workload workload;
  workload.groups = {Group("small", "g4dn.12xlarge", 4, 3.91, 2)};
  workload.pods = {Pod("fits", 0, kHour, 2), Pod("too-big", 0, kHour, 8)};
  const PolicySummary summary = Summarise(Run(workload, "topofit"));
  CHECK(summary.pods_never_started == 1);
  CHECK(summary.pods == 2);
}

TEST_CASE("A replay is identical for the same seed", "[replay]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 6, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 6),
                     Group("cube", "p3.16xlarge", 8, 24.48, 6)};
  uint64_t state = 7;
  auto next = [&state](int bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % static_cast<uint64_t>(bound));
  };
  for (int i = 0; i < 300; ++i) {
    const int gpus = std::vector<int>{1, 1, 1, 2, 4, 8}[next(6)];
    const std::string name = absl::StrCat("p", i);
    const SimTime duration = (5 + next(90)) * kMinute;
    PodSpec pod = gpus >= 4 && next(2) ? NvPod(name, i * 20 * kSecond, duration, gpus) : Pod(name, i * 20 * kSecond, duration, gpus);
    workload.pods.push_back(pod);
  }
  for (const std::string policy : {"stock", "topofit"}) {
    INFO(policy);
    const ReplayResult a = Run(workload, policy, 42);
    const ReplayResult b = Run(workload, policy, 42);
    CHECK(a.timeline.size() == b.timeline.size());
    CHECK(a.provisioned_gpu_hours == b.provisioned_gpu_hours);
    CHECK(a.cost_dollars == b.cost_dollars);
    CHECK(a.events == b.events);
    for (size_t i = 0; i < a.pods.size(); ++i) REQUIRE(a.pods[i].first_start == b.pods[i].first_start);
    const PolicySummary summary = Summarise(a);
    CHECK(summary.pods_never_started == 0);
    CHECK(summary.allocated_gpu_hours <= summary.provisioned_gpu_hours);
    CHECK(summary.allocated_gpu_hours >= summary.requested_gpu_hours * 0.999);
  }
}

}  // namespace
}  // namespace topofit::sim
