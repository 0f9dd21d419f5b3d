#include "history/diagnosis.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "history/explain.h"
#include "topology/link.h"

namespace topofit::history {
namespace {

Record Of(Kind kind, Reason reason, int seconds) {
  Record r;
  r.time = absl::FromUnixSeconds(1'750'000'000 + seconds);
  r.kind = kind;
  r.reason = reason;
  r.correlation_id = "uid-train";
  r.pods = {{"uid-train", "ml/train"}};
  r.gpus = 8;
  return r;
}

// What a refused node's record holds for `reason`: GPUs asked and free, link ranks (NV asked, SYS reached)
// or bandwidths in MB/s.
Candidate Refused(const std::string& node, Reason reason, int count = 1) {
  Candidate c;
  c.name = node;
  c.reason = reason;
  c.count = count;
  c.requested = reason == Reason::kMinLink ? static_cast<int64_t>(topology::LinkClass::kNvLink)
                : reason == Reason::kMinBandwidth ? 200'000 : 8;
  c.available = reason == Reason::kMinLink ? static_cast<int64_t>(topology::LinkClass::kSys)
                : reason == Reason::kMinBandwidth ? 12'000 : 4;
  return c;
}

Record Filter(std::vector<Candidate> candidates, int seconds = 0) {
  Record r = Of(Kind::kFilter, Reason::kNoNodeFits, seconds);
  r.candidates = std::move(candidates);
  return r;
}

TEST_CASE("DiagnosePod: a pod topofit never judged is no-record, and says where to look", "[history][diagnosis]") {
  const Diagnosis d = DiagnosePod("ml/train", {});
  CHECK(d.state == "unknown");
  CHECK(d.cause == "no-record");
  CHECK_THAT(d.summary, Catch::Contains("schedulerName"));
  CHECK(d.correlation_id.empty());
}

TEST_CASE("DiagnosePod: a hold on one node is the cause, however many nodes are full", "[history][diagnosis]") {
  Candidate held = Refused("p4d-new", Reason::kHeldForScaleUp);
  held.held_gpus = 8;
  held.free_gpus = 8;
  const Diagnosis d = DiagnosePod("ml/train", {Filter({Refused("p4d-1", Reason::kGpuCount, 5), held})});
  CHECK(d.state == "pending");
  CHECK(d.cause == "held-for-scale-up");
  CHECK_THAT(d.summary, Catch::Contains("every one of the 6 nodes offered refuses its 8 GPUs; 1 for held-for-scale-up"));
  CHECK_THAT(d.summary, Catch::Contains("p4d-new"));
  CHECK(d.evidence == std::vector<std::string>{"5 other node(s) refuse it for other reasons"});
  CHECK(d.correlation_id == "uid-train");
}

TEST_CASE("DiagnosePod: without a hold, the refusal most nodes gave, a tie going to what no wait changes",
          "[history][diagnosis]") {
  CHECK(DiagnosePod("ml/train", {Filter({Refused("g5-1", Reason::kMinLink), Refused("p4d-1", Reason::kGpuCount, 3)})}).cause ==
        "gpu-count");
  CHECK(DiagnosePod("ml/train", {Filter({Refused("p4d-1", Reason::kGpuCount), Refused("g5-1", Reason::kMinLink)})}).cause ==
        "min-link");
  CHECK(DiagnosePod("ml/train", {Filter({Refused("bare", Reason::kTopologyUnknown), Refused("g5-1", Reason::kNodeSize)})})
            .cause == "topology-unknown");
}

TEST_CASE("DiagnosePod: invalid annotations, a filter that fits, a bind, a gang waiting, a vetoed scale-up",
          "[history][diagnosis]") {
  CHECK(DiagnosePod("ml/train", {Of(Kind::kFilter, Reason::kInvalidPod, 0)}).cause == "invalid-pod");
  Candidate fits;
  fits.name = "p4d-1";
  fits.count = 2;
  CHECK(DiagnosePod("ml/train", {Filter({fits, Refused("g5-1", Reason::kMinLink)})}).cause == "fits");

  Record bound = Of(Kind::kBind, Reason::kBound, 60);
  bound.node = "p4d-1";
  const Diagnosis running = DiagnosePod("ml/train", {bound, Filter({fits})});
  CHECK(running.state == "running");
  CHECK(running.cause == "bound");
  CHECK_THAT(running.summary, Catch::StartsWith("bound to p4d-1"));

  Record gang = Of(Kind::kGang, Reason::kGangNoRoom, 10);
  gang.gang = "pg:ml/job";
  // The gang record is newer than the member's filter: the gang is why it waits.
  CHECK(DiagnosePod("ml/train", {gang, Filter({Refused("g5-1", Reason::kGpuCount)})}).cause == "gang-no-room");
  // A refusal after it is newer news.
  CHECK(DiagnosePod("ml/train", {Filter({Refused("g5-1", Reason::kGpuCount)}, 20), gang}).cause == "gpu-count");

  Record vetoed = Of(Kind::kRanking, Reason::kVetoed, 5);
  vetoed.correlation_id.clear();
  CHECK(DiagnosePod("ml/train", {vetoed}).cause == "vetoed");
}

TEST_CASE("DiagnosePod: what cluster-autoscaler said of the capacity asked for comes before the refusal that asked",
          "[history][diagnosis]") {
  const Record refused = Filter({Refused("g5-0", Reason::kMinLink)});
  Record asked = Of(Kind::kCapacityRequested, Reason::kNoNodeFits, 0);
  Record not_found = Of(Kind::kCapacityStatus, Reason::kCapacityNotFound, 60);
  not_found.provisioning_request = "ml/topofit-train";
  const Diagnosis d = DiagnosePod("ml/train", {not_found, refused, asked});
  CHECK(d.state == "pending");
  CHECK(d.cause == "capacity-not-found");
  CHECK_THAT(d.summary, Catch::StartsWith("cluster-autoscaler found no capacity for ProvisioningRequest ml/topofit-train"));
  REQUIRE(d.evidence.size() == 1);
  CHECK_THAT(d.evidence[0], Catch::StartsWith("filter: every one of 1 nodes refused 8 GPUs: g5-0"));
  // Asked again since (withdrawn and made anew): the old answer is not about the new request.
  Record asked_again = Of(Kind::kCapacityRequested, Reason::kNoNodeFits, 120);
  CHECK(DiagnosePod("ml/train", {asked_again, not_found, refused}).cause == "min-link");
}

TEST_CASE("A refusal read from a database with link ranks out of range is told, not trusted", "[history][diagnosis]") {
  Candidate forged = Refused("g5-0", Reason::kMinLink);
  forged.requested = 200;
  forged.available = -3;
  CHECK(DescribeRefusal(forged) == "g5-0: needs links of unknown or better, best reachable is unknown");
  CHECK(DiagnosePod("ml/train", {Filter({forged})}).cause == "min-link");
}

TEST_CASE("DiagnosePod: the newest restart's cause, with its evidence, small whatever the record holds",
          "[history][diagnosis]") {
  Record restart = Of(Kind::kRestart, Reason::kRestartGpuFault, 600);
  restart.node = "p4d-1";
  restart.restart = RestartDetail{.container = "train",
                                  .restart_count = 3,
                                  .exit_code = 1,
                                  .termination_reason = "Error",
                                  .termination_message = std::string(10'000, 'x'),
                                  .waiting_reason = "CrashLoopBackOff",
                                  .diagnosis = std::string("GPU fault: ") + std::string(5'000, 'y'),
                                  .gpu_ids = "0,1",
                                  .xids = {79}};
  Record bound = Of(Kind::kBind, Reason::kBound, 60);
  const Diagnosis d = DiagnosePod("ml/train", {restart, bound});
  CHECK(d.state == "restarting");
  CHECK(d.cause == "gpu-fault");
  CHECK(d.summary.size() <= kMaxDiagnosisSummaryBytes);
  REQUIRE(d.evidence.size() == 3);
  CHECK(d.evidence[0] == "last ended: exit code 1 (Error); now CrashLoopBackOff");
  CHECK(d.evidence[1] == "GPUs 0,1 on p4d-1; Xid 79");
  for (const std::string& line : d.evidence) CHECK(line.size() <= kMaxDiagnosisEvidenceBytes);
}

}  // namespace
}  // namespace topofit::history
