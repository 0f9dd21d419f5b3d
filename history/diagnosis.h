#pragma once

// "Why is my GPU pod not running", answered with one cause first: what an on-call engineer or an agent asks
// before reading a pod's whole chain (explain.h tells the chain). Pure: a function of the pod's records.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "history/record.h"

namespace topofit::history {

// The bytes a diagnosis's words take at most (summary and evidence), so that an answer built from one stays
// small whatever the records hold (a refusal over 5,000 nodes, a 4 KiB termination message).
inline constexpr size_t kMaxDiagnosisSummaryBytes = 400;
inline constexpr size_t kMaxDiagnosisEvidenceBytes = 240;
inline constexpr size_t kMaxDiagnosisEvidence = 3;

struct Diagnosis {
  // "pending", "running", "restarting", or "unknown" when nothing is recorded.
  std::string state{};
  // A reason code (record.h's ReasonName): the refusal that keeps a pending pod off the nodes it was offered
  // ("min-link", "held-for-scale-up", ...), the gang's ("gang-no-room", "gang-waiting"), a vetoed scale-up
  // ("vetoed"), cluster-autoscaler's word on the capacity asked for ("capacity-not-found", ...), the newest
  // restart's cause ("oom", "gpu-fault", ...), "bound" for a pod running without a
  // restart since, "bind-failed", or "no-record" when topofit never judged the pod.
  std::string cause{};
  std::string summary{};                 // the cause in one sentence
  std::vector<std::string> evidence{};   // what the records show for it, at most kMaxDiagnosisEvidence lines
  std::string correlation_id{};
  absl::Time since = absl::InfinitePast();  // the newest record the cause stands on
};

// `chain`: the pod's records of its newest correlation id, newest first (PodChain). The first cause wins in
// this order: the newest record a restart (the restart's cause); a bind (running, or bind-failed); a gang
// record newer than the newest filter (the gang waits); what cluster-autoscaler said of the capacity asked for
// it, when newer than the ask (capacity-not-found, capacity-failed, booking-expired, capacity-revoked); a
// ranking newer than the newest filter that vetoed every GPU option
// for it (no group cluster-autoscaler can grow would take it); the newest filter: invalid annotations, else
// among the refused nodes the ones topofit holds back on purpose first (waiting-for-capacity,
// asking-for-capacity, held-for-scale-up: the pod would fit there but for the hold), else the refusal most
// nodes gave (ties in the order topology-unknown, node-size, min-link, min-bandwidth, gpu-count), where a
// topology refusal on a node whose topology was assumed (TopologyDetail::assumed) is topology-unknown.
// Nothing recorded: "no-record".
Diagnosis DiagnosePod(absl::string_view pod, const std::vector<Record>& chain, RecordClock clock = RecordClock::kWall);

}  // namespace topofit::history
