#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "history/record.h"

namespace topofit::history {

// The words for records, made only when a person reads them (`topofit explain`). Times are told on the
// records' clock: the wall clock's dates, or a replay's time since it began (FormatRecordTime).

// One line for one record: what was decided and why, with the topology detail.
std::string DescribeRecord(const Record& record, RecordClock clock = RecordClock::kWall);
// Why a filter's candidate node refused, in the filter's words (decision::RefusalText) over the quantities
// recorded: "g5-1: needs links of NV or better, ... (best set: GPUs 0,1, weakest link PHB)".
std::string DescribeRefusal(const Candidate& candidate, RecordClock clock = RecordClock::kWall);
// How a restarted container's run ended: "exit code 137, signal 9 (OOMKilled); now CrashLoopBackOff".
std::string DescribeRestartEnd(const RestartDetail& restart);
// The pod's GPUs on `node` with what is known against them: "0,1 on p4d-1; unhealthy: 1; Xid 79".
std::string DescribeRestartGpus(const RestartDetail& restart, absl::string_view node);

// A pod's story, newest first: a headline (bound, or pending since its first refusal), its correlation id,
// then a line per record of its chain, each timed from the chain's first record. `records` newest first,
// as GET /decisions pages them; only the newest correlation id's records are told (a pod deleted and made
// again under the same name has a new uid). Empty when there is none.
std::string ExplainPod(absl::string_view pod, const std::vector<Record>& records,
                       RecordClock clock = RecordClock::kWall);
// A node group's story: each ranking that weighed it (chosen, or why not), newest first, then the other
// decisions about it (intents, its nodes' records).
std::string ExplainGroup(absl::string_view group, const std::vector<Record>& records,
                         RecordClock clock = RecordClock::kWall);
// Idle GPUs from the idle records (newest first). `node` empty: each node's newest record that still has
// free GPUs, with the totals by reason; else that node's records, its idle GPUs over time. Empty when none.
std::string ExplainIdle(absl::string_view node, const std::vector<Record>& records,
                        RecordClock clock = RecordClock::kWall);
// A pod's restarts (restart records, newest first) and, when `placed` is not null, the bind that put it
// where it runs: the newest restart in full (cause, termination, Warning events, GPUs, the previous
// container's log tail), the older ones a line each. Empty when there is no restart record.
std::string ExplainRestarts(absl::string_view pod, const std::vector<Record>& restarts, const Record* placed,
                            RecordClock clock = RecordClock::kWall);
// The headroom controller's changes of warm capacity (headroom records, newest first), of the shape named
// `shape` (topofit-headroom-<shape>) or of every shape when it is empty: what each shape holds now, then every
// change with why. Empty when there is none.
std::string ExplainHeadroom(absl::string_view shape, const std::vector<Record>& records,
                            RecordClock clock = RecordClock::kWall);
// The records ExplainIdle tells: for no `node`, each node's newest idle record if it has free GPUs; else
// the node's idle records. Newest first.
std::vector<Record> IdleRecordsTold(absl::string_view node, const std::vector<Record>& records);
// The records ExplainPod tells: those of the newest correlation id.
std::vector<Record> PodChain(absl::string_view pod, const std::vector<Record>& records);

}  // namespace topofit::history
