#include "history/explain.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

namespace topofit::history {
namespace {

Record Of(Kind kind, Reason reason, const std::string& uid, int seconds) {
  Record r;
  r.time = absl::FromUnixSeconds(1'750'000'000 + seconds);
  r.kind = kind;
  r.reason = reason;
  r.correlation_id = uid;
  r.pods = {{uid, "ml/train"}};
  r.gpus = 8;
  return r;
}

TEST_CASE("a pod's story is its newest uid's chain, newest first, timed from its first record", "[history]") {
  Record refused = Of(Kind::kFilter, Reason::kNoNodeFits, "uid-new", 0);
  Candidate g5;
  g5.name = "g5-1";
  g5.reason = Reason::kMinLink;
  g5.requested = static_cast<int64_t>(topology::LinkClass::kNvLink);
  g5.available = static_cast<int64_t>(topology::LinkClass::kSys);
  g5.topology = TopologyDetail{"0,1,2,3,4,5,6,7", "SYS", 12'000};
  refused.candidates = {g5};
  Record bound = Of(Kind::kBind, Reason::kBound, "uid-new", 330);
  bound.node = "p4d-new";
  bound.candidates = {Candidate{.name = "p4d-new", .topology = TopologyDetail{"0,1,2,3,4,5,6,7", "", 0}}};
  // Newest first, with an older pod of the same name (another uid) that must not be told.
  const std::vector<Record> records = {bound, refused, Of(Kind::kBind, Reason::kBound, "uid-old", -900)};

  CHECK(PodChain("ml/train", records).size() == 2);
  const std::string story = ExplainPod("ml/train", records);
  CHECK(story ==
        "ml/train bound to p4d-new 5m30s after topofit first judged it\n"
        "correlation id uid-new (2 decisions, newest first)\n"
        "  2025-06-15T15:12:10.000000Z  +5m30s  bound to p4d-new, GPUs 0,1,2,3,4,5,6,7\n"
        "  2025-06-15T15:06:40.000000Z  +0s  filter: every one of 1 nodes refused 8 GPUs: g5-1 needs links of NV or "
        "better, best reachable is SYS (best set: GPUs 0,1,2,3,4,5,6,7, weakest link SYS, 12 GB/s)\n");
  CHECK(ExplainPod("ml/other", records).empty());
}

}  // namespace
}  // namespace topofit::history
