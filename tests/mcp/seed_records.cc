#include "tests/mcp/seed_records.h"

#include <utility>
#include <vector>

#include "history/from_decisions.h"
#include "topology/link.h"

namespace topofit::history {
namespace {

absl::Time At(int seconds) { return absl::FromUnixSeconds(1'764'600'000 + seconds); }

Record AboutTrain(Kind kind, Reason reason, int seconds) {
  Record r;
  r.time = At(seconds);
  r.component = kind == Kind::kRanking || kind == Kind::kIntent ? Component::kExpander : Component::kExtender;
  r.kind = kind;
  r.reason = reason;
  if (kind != Kind::kRanking && kind != Kind::kIntent) r.correlation_id = "uid-train-7";
  r.pods = {{"uid-train-7", "ml/train-7"}};
  r.gpus = 8;
  return r;
}

}  // namespace

std::vector<Record> SeedRecords() {
  std::vector<Record> records;
  Record bound = BindRecord(At(0), {"uid-infer-1", "ml/infer-1"}, "g5-1", 4, "0,1,2,3", true);
  records.push_back(bound);

  Record refused = AboutTrain(Kind::kFilter, Reason::kNoNodeFits, 60);
  refused.candidates = {
      Candidate{.name = "h100-3", .reason = Reason::kMinLink, .unresolvable = true,
                .requested = static_cast<int64_t>(topology::LinkClass::kNvLink),
                .available = static_cast<int64_t>(topology::LinkClass::kSys), .free_gpus = 4,
                .topology = TopologyDetail{"1,2,5,6", "SYS", 24'000}},
      Candidate{.name = "g5-1", .reason = Reason::kGpuCount, .requested = 8, .available = 4, .free_gpus = 4}};
  records.push_back(refused);

  Record preference = AboutTrain(Kind::kPreference, Reason::kNoNodeFits, 61);
  preference.candidates = {Candidate{.name = "h100-3", .reason = Reason::kMinLink,
                                     .topology = TopologyDetail{"", "NV", 0}}};
  records.push_back(preference);
  Record asked = AboutTrain(Kind::kCapacityRequested, Reason::kNoNodeFits, 62);
  asked.provisioning_request = "ml/train-7-topofit";
  records.push_back(asked);

  Record ranking = AboutTrain(Kind::kRanking, Reason::kChosen, 75);
  ranking.node_group = "p5-a";
  ranking.candidates = {
      Candidate{.name = "p5-a", .reason = Reason::kChosen, .requested = 0, .available = 1,
                .preferences_satisfied = 1, .quality_per_mille = 1000, .idle_gpus = 0, .price = 98.32},
      Candidate{.name = "g5-group", .reason = Reason::kGroupWouldStrand, .requested = 1, .price = 16.29}};
  records.push_back(ranking);
  Record intent = AboutTrain(Kind::kIntent, Reason::kChosen, 75);
  intent.node_group = "p5-a";
  intent.candidates = {Candidate{.name = "p5-a", .reason = Reason::kChosen, .requested = 1}};
  records.push_back(intent);

  NodeIdleGpus h100{.node = "h100-3", .node_group = "p5-b", .free = topology::GpuSet::FromMask(0b01100110)};
  h100.counts[static_cast<size_t>(IdleReason::kFragmented)] = 4;
  records.push_back(IdleRecord(At(90), h100));
  NodeIdleGpus g5{.node = "g5-2", .node_group = "g5-group", .free = topology::GpuSet::FromMask(0xff)};
  g5.counts[static_cast<size_t>(IdleReason::kAwaitingScaleDown)] = 8;
  records.push_back(IdleRecord(At(91), g5));

  RestartDetail restart{.container = "serve", .restart_count = 2, .exit_code = 1, .termination_reason = "Error",
                        .termination_message = "NVRM: Xid (PCI:0000:3b:00): 79, pid=311, GPU has fallen off the bus",
                        .waiting_reason = "CrashLoopBackOff",
                        .diagnosis = "Xid 79 (the GPU has fallen off the bus) on a GPU of the pod",
                        .warnings = {"BackOff: Back-off restarting failed container serve"},
                        .log_tail = "loading weights\nRuntimeError: CUDA error: unknown error\n",
                        .gpu_ids = "0,1,2,3",
                        .xids = {79}};
  records.push_back(RestartRecord(At(95), {"uid-infer-1", "ml/infer-1"}, "g5-1", 4, decision::RestartCause::kGpuFault,
                                  std::move(restart)));
  return records;
}

decision::Intent OneNodeIntent(const std::string& group, const std::string& group_label, const std::string& pod_uid,
                               int gpus) {
  decision::Intent intent;
  intent.node_group = group;
  intent.pod_uids = {pod_uid};
  intent.pod_gpus = {{pod_uid, gpus}};
  intent.node_count = 1;
  intent.node_labels = {{group_label, group}};
  return intent;
}

}  // namespace topofit::history
