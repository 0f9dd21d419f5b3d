#include <algorithm>
#include <memory>
#include <set>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "replay/gang_scheduling.h"
#include "replay/simulator.h"
#include "replay/summary.h"
#include "tests/history/memory_recorder.h"
#include "tests/replay/run_policy.h"
#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using testing::DomainGang;
using testing::Pod;
using testing::RackGroup;
using testing::Run;

// Two NVLink domains of two 4-GPU nodes; two 4-GPU pods take two nodes for two hours, then a gang of two
// 4-GPU members that requires one domain comes. Where the two pods land is the scheduler's random tie-break:
// in one domain (the other is free for the gang) or one in each (no domain holds the gang). The group stays
// at its four nodes.
Workload TwoDomainsHalfBusy() {
  Workload workload;
  workload.groups = {RackGroup("rack", 2, 4, 4)};
  workload.groups[0].min_size = 4;
  workload.pods = {Pod("busy-0", 0, 2 * kHour, 4), Pod("busy-1", 0, 2 * kHour, 4)};
  for (PodSpec& member : DomainGang("train", 2, 4, kMinute, kHour)) workload.pods.push_back(std::move(member));
  return workload;
}

TEST_CASE("Gangs: a required gang never runs split where gangs are placed whole, and the stock scheduler splits it", "[replay][gangs]") {
  const Workload workload = TwoDomainsHalfBusy();
  int stock_splits = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    INFO("seed " << seed);
    const ReplayResult stock = Run(workload, "stock", seed);
    REQUIRE(stock.gangs.size() == 1);
    CHECK(stock.gangs[0].members == 2);
    CHECK(stock.gangs[0].gpus == 8);
    CHECK(stock.gangs[0].required);
    // Two nodes are free when it comes: the stock scheduler runs it at once, wherever they are.
    CHECK(stock.gangs[0].started == kMinute);
    if (stock.gangs[0].split) {
      ++stock_splits;
      // Its collectives cross the network between the domains: it runs longer than its hour.
      CHECK(stock.pods[2].done > kMinute + kHour);
    } else {
      CHECK(stock.pods[2].done == kMinute + kHour);
    }
    for (const std::string policy : {"tuned", "topofit"}) {
      INFO(policy);
      const ReplayResult whole = Run(workload, policy, seed);
      REQUIRE(whole.gangs.size() == 1);
      CHECK_FALSE(whole.gangs[0].split);
      // Either a domain was free when it came, or it waits for the busy pods to finish.
      CHECK((whole.gangs[0].started == kMinute || whole.gangs[0].started == 2 * kHour));
      CHECK(whole.pods[2].done == whole.gangs[0].started + kHour);
    }
  }
  // The tie-break put the busy pods in different domains for some seed.
  CHECK(stock_splits > 0);
}

// One domain of four nodes, two Ready: a gang of three 4-GPU members needs a third node.
Workload GangNeedsANewNode() {
  Workload workload;
  workload.groups = {RackGroup("rack", 4, 4, 2)};
  workload.pods = DomainGang("train", 3, 4, 0, kHour);
  return workload;
}

TEST_CASE("Gangs: members placed one by one hold their GPUs for nothing until the last one runs", "[replay][gangs]") {
  const ReplayResult stock = Run(GangNeedsANewNode(), "stock");
  REQUIRE(stock.gangs.size() == 1);
  REQUIRE(stock.gangs[0].started > 0);
  // Two members ran at once and waited for the third, on the node CA grew for it.
  CHECK(stock.pods[0].first_start == 0);
  CHECK(stock.pods[1].first_start == 0);
  CHECK(stock.pods[2].first_start == stock.gangs[0].started);
  const PolicySummary held = Summarise(stock);
  CHECK(held.gangs == 1);
  CHECK(held.gangs_started == 1);
  CHECK(held.split_gangs == 0);
  CHECK(held.partial_gang_gpu_hours ==
        Approx(8.0 * static_cast<double>(stock.gangs[0].started) / static_cast<double>(kHour)));
  CHECK(held.gang_pending.p50_seconds == Approx(static_cast<double>(stock.gangs[0].started) / kSecond));
  // Every member's run ends an hour after the last one started.
  for (const PodOutcome& member : stock.pods) CHECK(member.done == stock.gangs[0].started + kHour);

  for (const std::string policy : {"tuned", "topofit"}) {
    INFO(policy);
    const ReplayResult whole = Run(GangNeedsANewNode(), policy);
    REQUIRE(whole.gangs[0].started > 0);
    // One new node, in the domain of the two free ones: CA by counting, topofit by asking for the member
    // the domain lacks.
    REQUIRE(whole.scale_ups.size() == 1);
    CHECK(whole.scale_ups[0].nodes == 1);
    CHECK(whole.provisioning_requests == (policy == "topofit" ? 1 : 0));
    for (const PodOutcome& member : whole.pods) CHECK(member.first_start == whole.gangs[0].started);
    CHECK(Summarise(whole).partial_gang_gpu_hours == 0);
  }
}

// Rack a is at its full three nodes, one of them busy for two hours; rack b is empty and may grow to four.
// A gang of three 4-GPU members that requires one domain comes: the three free nodes are in two domains.
Workload NoDomainHoldsTheGang() {
  Workload workload;
  workload.groups = {RackGroup("rack-a", 3, 3, 3), RackGroup("rack-b", 4, 4, 0)};
  workload.groups[0].min_size = 3;
  workload.pods = {Pod("busy", 0, 2 * kHour, 4)};
  for (PodSpec& member : DomainGang("train", 3, 4, kMinute, kHour)) workload.pods.push_back(std::move(member));
  return workload;
}

TEST_CASE("Gangs: topofit asks for a whole domain's worth in one request, where CA alone grows for part of the gang", "[replay][gangs]") {
  // CA counts the two free nodes of rack a as room for two members and grows one node for the third, in
  // rack b: no domain holds the gang until the busy pod is done.
  const ReplayResult tuned = Run(NoDomainHoldsTheGang(), "tuned");
  REQUIRE(tuned.gangs.size() == 1);
  CHECK(tuned.gangs[0].started >= 2 * kHour);
  CHECK(tuned.provisioning_requests == 0);
  REQUIRE_FALSE(tuned.scale_ups.empty());
  CHECK(tuned.scale_ups[0].group == "rack-b");
  CHECK(tuned.scale_ups[0].nodes == 1);
  CHECK(tuned.scale_ups[0].stranded);

  // topofit's extender finds no domain for the gang and asks once for what the nearest one lacks: rack a
  // has no room left, so all three members in rack b. CA grows three nodes of rack b at once, and the gang
  // runs there when they are Ready (CA's loop at the minute it came, plus the five-minute boot).
  const ReplayResult topofit = Run(NoDomainHoldsTheGang(), "topofit");
  CHECK(topofit.provisioning_requests == 1);
  REQUIRE(topofit.scale_ups.size() == 1);
  CHECK(topofit.scale_ups[0].group == "rack-b");
  CHECK(topofit.scale_ups[0].nodes == 3);
  CHECK(topofit.scale_ups[0].for_provisioning_request);
  CHECK_FALSE(topofit.scale_ups[0].stranded);
  CHECK(topofit.gangs[0].started == kMinute + 5 * kMinute);
  CHECK_FALSE(topofit.gangs[0].split);
}

TEST_CASE("Gangs: the replay records the gang's refusal and its reservation as the extender does", "[replay][gangs][history]") {
  history::testing::MemoryRecorder recorder;
  ReplayOptions options;
  options.recorder = &recorder;
  REQUIRE(Replay(NoDomainHoldsTheGang(), testing::Named("topofit"), options).ok());
  std::vector<std::string> told;
  for (const history::Record& r : recorder.records()) {
    if (r.kind != history::Kind::kGang) continue;
    std::string line = absl::StrCat(absl::ToInt64Seconds(r.time - absl::UnixEpoch()), "s ",
                                    history::ReasonName(r.reason), " ", r.gang, " gpus=", r.gpus);
    for (const history::Candidate& c : r.candidates) absl::StrAppend(&line, " ", c.name, ":", c.count);
    told.push_back(line);
  }
  // refused once at its arrival (the request then stands), reserved whole on rack b's three new nodes
  REQUIRE(told.size() == 2);
  CHECK_THAT(told[0], Catch::StartsWith("60s gang-no-room topofit:default/train gpus=12 "));
  CHECK_THAT(told[1], Catch::StartsWith("360s gang-reserved topofit:default/train gpus=12 rack-b-"));
  CHECK(std::count(told[1].begin(), told[1].end(), ':') == 4);  // the gang's id, then three nodes of one member
}

// A tuned world over `workload` at time 0, its pods pending.
std::unique_ptr<World> PendingWorld(const Workload& workload) {
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(workload, testing::Named("tuned"), 1);
  REQUIRE(world.ok());
  for (size_t pod = 0; pod < workload.pods.size(); ++pod) (*world)->SetPending(static_cast<int>(pod));
  return *std::move(world);
}

TEST_CASE("Gangs: the gang scheduler places every pending member in one domain, or none", "[replay][gangs]") {
  Workload workload;
  workload.groups = {RackGroup("rack", 2, 6, 6)};
  workload.pods = DomainGang("train", 2, 4, 0, kHour);
  for (int i = 0; i < 3; ++i) workload.pods.push_back(Pod(absl::StrCat("busy-", i), 0, kHour, 4));
  const std::unique_ptr<World> world = PendingWorld(workload);
  const topology::GpuSet all = world->nodes()[0].gpus.topology->all_gpus();
  // Nodes 0-1 are domain rack.0, 2-3 rack.1, 4-5 rack.2: busy pods on nodes 0 and 3 leave one free node in
  // each of the first two domains, and the whole of the third.
  world->StartPod(2, 0, all);
  world->StartPod(3, 3, all);
  absl::StatusOr<std::vector<GangMemberPlacement>> placed = PlaceGangMembers(*world, 0);
  REQUIRE(placed.ok());
  REQUIRE(placed->size() == 2);
  CHECK(placed->at(0).pod == 0);
  CHECK(placed->at(1).pod == 1);
  std::set<int> nodes;
  for (const GangMemberPlacement& member : *placed) {
    nodes.insert(member.node);
    CHECK(member.gpus == all);
  }
  CHECK(nodes == std::set<int>{4, 5});
  // A busy pod in the third domain too: no domain holds the gang, and none of it is placed.
  world->StartPod(4, 4, all);
  CHECK(PlaceGangMembers(*world, 0).status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("Gangs: evicting a member stops the gang's run, and the others hold their GPUs until it is back", "[replay][gangs]") {
  Workload workload;
  workload.groups = {RackGroup("rack", 4, 4, 4)};
  workload.pods = DomainGang("train", 2, 4, 0, kHour);
  const std::unique_ptr<World> made = PendingWorld(workload);
  World& world = *made;
  const topology::GpuSet all = world.nodes()[0].gpus.topology->all_gpus();
  CHECK(world.StartPod(0, 0, all).empty());  // it waits for the other member
  CHECK(world.pods()[0].finish == -1);
  CHECK(world.timeline().back().partial_gang_gpus == 4);
  CHECK(world.StartPod(1, 1, all) == std::vector<int>{0, 1});
  CHECK(world.timeline().back().partial_gang_gpus == 0);
  CHECK(world.pods()[0].finish == kHour);
  CHECK(world.pods()[1].finish == kHour);

  world.AdvanceTo(15 * kMinute);
  const int epoch = world.pods()[0].epoch;
  world.EvictPod(1);
  CHECK(world.pods()[1].evictions == 1);
  CHECK(world.pods()[0].evictions == 0);
  CHECK(world.pods()[0].epoch == epoch + 1);  // its finish event is stale
  CHECK(world.gangs()[0].started == -1);
  CHECK(world.timeline().back().partial_gang_gpus == 4);

  world.AdvanceTo(25 * kMinute);
  CHECK(world.StartPod(1, 2, all) == std::vector<int>{0, 1});
  // 45 minutes were left when it stopped; the ten minutes waiting did not count.
  CHECK(world.pods()[0].finish == 70 * kMinute);
  CHECK(world.pods()[1].finish == 70 * kMinute);
  CHECK(world.gangs()[0].first_started == 0);
}

TEST_CASE("Gangs: a workload whose gang has fewer pods than its size, or members that differ, is refused", "[replay][gangs]") {
  Workload workload;
  workload.groups = {RackGroup("rack", 4, 4, 4)};
  workload.pods = DomainGang("train", 3, 4, 0, kHour);
  workload.pods.pop_back();
  CHECK(World::Create(workload, testing::Named("stock"), 1).status().code() == absl::StatusCode::kInvalidArgument);
  workload.pods = DomainGang("train", 2, 4, 0, kHour);
  workload.pods[1].gpus = 2;
  CHECK(World::Create(workload, testing::Named("stock"), 1).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace topofit::sim
