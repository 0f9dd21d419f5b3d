// The replay records topofit's decisions as the servers do (history/from_decisions.h), in replay time,
// and the same seed gives the same records.

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "replay/simulator.h"
#include "history/record_json.h"
#include "history/store.h"
#include "tests/cli/scratch_dir.h"
#include "tests/history/memory_recorder.h"
#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using history::Kind;
using history::Reason;
using testing::Group;
using testing::NvPod;
using testing::Pod;

Policy Topofit() {
  for (const Policy& policy : StandardPolicies({StockExpander::kLeastWaste})) {
    if (policy.name == "topofit") return policy;
  }
  FAIL("no topofit policy");
  return {};
}

void Replay(const Workload& workload, history::DecisionRecorder& recorder, uint64_t seed = 1) {
  ReplayOptions options;
  options.seed = seed;
  options.recorder = &recorder;
  REQUIRE(Replay(workload, Topofit(), options).ok());
}

TEST_CASE("a replay records a refused pod's chain in replay time, on its uid", "[replay][history]") {
  // One PCIe node up, an NVLink group to grow, a pod that needs NVLink for 4 GPUs.
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("train", 0, kHour, 4)};
  history::testing::MemoryRecorder recorder;
  Replay(workload, recorder);

  std::vector<std::pair<Kind, Reason>> chain;
  std::vector<history::Record> records;
  std::vector<std::string> idle;
  for (const history::Record& r : recorder.records()) {
    if (r.kind == Kind::kIdle) {
      std::string told = absl::StrCat(absl::ToInt64Seconds(r.time - absl::UnixEpoch()), "s ", r.node, ":");
      for (const history::Candidate& c : r.candidates) absl::StrAppend(&told, " ", c.free_gpus, " ", history::ReasonName(c.reason));
      idle.push_back(told);
      continue;
    }
    const bool about_train = std::any_of(r.pods.begin(), r.pods.end(),
                                         [](const history::PodSubject& p) { return p.uid == "uid-train"; });
    CHECK(about_train);
    chain.emplace_back(r.kind, r.reason);
    records.push_back(r);
  }
  CHECK(chain == std::vector<std::pair<Kind, Reason>>{{Kind::kFilter, Reason::kNoNodeFits},
                                                      {Kind::kPreference, Reason::kNoNodeFits},
                                                      {Kind::kCapacityRequested, Reason::kNoNodeFits},
                                                      {Kind::kRanking, Reason::kChosen},
                                                      {Kind::kIntent, Reason::kChosen},
                                                      {Kind::kBind, Reason::kBound}});
  REQUIRE(records.size() == 6);
  CHECK(records[0].time == absl::UnixEpoch());  // refused on arrival: the PCIe node for its links
  REQUIRE(records[0].candidates.size() == 1);
  CHECK(records[0].candidates[0].name == "pcie-0");
  CHECK(records[0].candidates[0].reason == Reason::kMinLink);
  CHECK(records[0].candidates[0].topology.has_value());  // the best set it could reach
  CHECK(records[0].gpus == 4);
  CHECK(records[1].candidates.back().name == "pcie-0");
  CHECK(records[3].time == absl::UnixEpoch() + absl::Seconds(10));  // CA's first loop
  CHECK(records[3].node_group == "nvlink");
  CHECK(records[4].node_group == "nvlink");
  // Bound when the node is Ready, 5 minutes later, on an NVLink set.
  CHECK(records[5].time == absl::UnixEpoch() + absl::Seconds(10) + absl::Minutes(5));
  CHECK(records[5].node.rfind("nvlink", 0) == 0);
  // And the idle records the extender would write, each time a node's idle GPUs change (sampled once a
  // minute at most): the PCIe node runs nothing all along (min size 1: never removed); the NVLink node is
  // asked at 10 s and seen booting at the next sample, runs the 4-GPU pod from 310 s to 3910 s (4 free, no
  // other pod pending), then runs nothing until scale-down removes it (no record for a node gone).
  CHECK(idle == std::vector<std::string>{"0s pcie-0: 8 awaiting-scale-down", "60s nvlink-1: 8 booting",
                                         "310s nvlink-1: 4 no-demand", "3910s nvlink-1: 8 awaiting-scale-down"});
}

std::vector<std::string> Dump(const history::DecisionStore& store) {
  std::vector<std::string> out;
  history::DecisionQuery query;
  query.limit = history::kMaxPageSize;
  do {
    absl::StatusOr<history::DecisionPage> page = store.Query(query);
    REQUIRE(page.ok());
    for (const history::Record& r : page->records) out.push_back(history::RecordToJson(r).dump());
    query.before_id = page->next_before_id;
  } while (query.before_id != 0);
  return out;
}

TEST_CASE("two replays with the same seed write identical decision databases", "[replay][history]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 6, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 6),
                     Group("cube", "p3.16xlarge", 8, 24.48, 6)};
  workload.pods.push_back(NvPod("nv-first", 0, 30 * kMinute, 4));  // refused by the PCIe node at once: a filter
  for (int i = 0; i < 200; ++i) {
    const int gpus = std::vector<int>{1, 2, 4, 8}[i % 4];
    const std::string name = absl::StrCat("p", i);
    const SimTime duration = (5 + (i * 37) % 90) * kMinute;
    workload.pods.push_back(gpus >= 4 && i % 3 == 0 ? NvPod(name, i * 20 * kSecond, duration, gpus)
                                                    : Pod(name, i * 20 * kSecond, duration, gpus));
  }
  cli::testing::ScratchDir dir("replay-history");
  std::vector<std::vector<std::string>> dumps;
  for (const char* file : {"a.db", "b.db"}) {
    absl::StatusOr<std::unique_ptr<history::DecisionStore>> store = history::DecisionStore::Open(dir.path(file));
    REQUIRE(store.ok());
    {
      history::AsyncRecorder recorder(**store);
      Replay(workload, recorder, 42);
    }
    dumps.push_back(Dump(**store));
  }
  CHECK(dumps[0].size() > 200);  // a bind per pod at least
  // Filter refusals among them, each naming the nodes refused and why.
  CHECK(std::count_if(dumps[0].begin(), dumps[0].end(), [](const std::string& record) {
          return record.find("\"kind\":\"filter\"") != std::string::npos;
        }) > 0);
  // Idle records too, each time a node's idle GPUs changed.
  CHECK(std::count_if(dumps[0].begin(), dumps[0].end(), [](const std::string& record) {
          return record.find("\"kind\":\"idle\"") != std::string::npos;
        }) > 0);
  CHECK(dumps[0] == dumps[1]);
}

}  // namespace
}  // namespace topofit::sim
