#include "history/diagnosis.h"

#include <algorithm>
#include <array>
#include <map>

#include "absl/strings/str_cat.h"
#include "history/explain.h"
#include "history/record_json.h"
#include "history/pod_events.h"

namespace topofit::history {
namespace {

// The refusals topofit makes on purpose: the node would take the pod but for a hold, so the hold is why
// the pod waits, however many other nodes refuse it for want of GPUs.
constexpr std::array kHolds = {Reason::kWaitingForCapacity, Reason::kAskingForCapacity, Reason::kHeldForScaleUp};
// The rest, in the order a tie between equally many nodes is told: what no wait can change first.
constexpr std::array kRefusals = {Reason::kTopologyUnknown, Reason::kNodeSize,  Reason::kMinLink,
                                  Reason::kMinBandwidth,    Reason::kGpuCount,  Reason::kNodeUnknown};

// A topology refusal on a node whose topology was assumed (TopologyDetail::assumed) says more about what
// topofit was not told than about the node: its cause is the unknown topology.
Reason CauseOf(const Candidate& c) {
  const bool topology_refusal = c.reason == Reason::kMinLink || c.reason == Reason::kMinBandwidth;
  return topology_refusal && c.topology && c.topology->assumed ? Reason::kTopologyUnknown : c.reason;
}

const Record* Newest(const std::vector<Record>& chain, Kind kind) {
  for (const Record& r : chain) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

void AddEvidence(Diagnosis& d, std::string line) {
  if (line.empty() || d.evidence.size() >= kMaxDiagnosisEvidence) return;
  d.evidence.push_back(TruncateUtf8(std::move(line), kMaxDiagnosisEvidenceBytes));
}

Diagnosis FromRestart(const Record& r, RecordClock clock) {
  Diagnosis d{.state = "restarting", .cause = std::string(ReasonName(r.reason)), .since = r.time};
  if (!r.restart) {
    d.summary = absl::StrCat("a container restarted: ", ReasonName(r.reason));
    return d;
  }
  const RestartDetail& x = *r.restart;
  d.summary = absl::StrCat("container ", x.container, " restarted (restart ", x.restart_count, ", ",
                           FormatRecordTime(r.time, clock), "): ", x.diagnosis.empty() ? ReasonName(r.reason) : x.diagnosis);
  AddEvidence(d, absl::StrCat("last ended: ", DescribeRestartEnd(x)));
  if (!x.gpu_ids.empty() || !x.unhealthy_gpus.empty() || !x.xids.empty()) {
    AddEvidence(d, absl::StrCat("GPUs ", DescribeRestartGpus(x, r.node)));
  }
  if (!x.termination_message.empty()) AddEvidence(d, absl::StrCat("termination message: ", x.termination_message));
  if (!x.warnings.empty()) AddEvidence(d, absl::StrCat("warning event: ", x.warnings.front()));
  return d;
}

// The refusal that keeps the pod off the nodes its newest filter judged (the order in diagnosis.h), and how
// many nodes gave it; kFits when none refused.
std::pair<Reason, int> FirstRefusal(const Record& filter) {
  std::map<Reason, int> nodes;
  for (const Candidate& c : filter.candidates) {
    if (c.reason != Reason::kFits) nodes[CauseOf(c)] += c.count;
  }
  for (Reason hold : kHolds) {
    if (nodes.count(hold) > 0) return {hold, nodes[hold]};
  }
  std::pair<Reason, int> most{Reason::kFits, 0};
  for (Reason refusal : kRefusals) {
    if (nodes.count(refusal) > 0 && nodes[refusal] > most.second) most = {refusal, nodes[refusal]};
  }
  if (most.second == 0 && !nodes.empty()) most = *nodes.begin();  // a reason no list names: still told
  return most;
}

Diagnosis FromFilter(const Record& filter, const std::vector<Record>& chain, RecordClock clock) {
  Diagnosis d{.state = "pending", .since = filter.time};
  if (filter.reason == Reason::kInvalidPod) {
    d.cause = std::string(ReasonName(Reason::kInvalidPod));
    d.summary = "its topofit.io annotations do not parse: every node refuses it until they are fixed";
    return d;
  }
  int judged = 0, fitting = 0;
  for (const Candidate& c : filter.candidates) {
    judged += c.count;
    if (c.reason == Reason::kFits) fitting += c.count;
  }
  const auto [cause, nodes] = FirstRefusal(filter);
  if (fitting > 0 || cause == Reason::kFits) {
    d.cause = std::string(ReasonName(Reason::kFits));
    d.summary = absl::StrCat("topofit's last filter found ", fitting, " of ", judged, " nodes fit its ", filter.gpus,
                             " GPUs; it is not bound yet (kube-scheduler's other plugins or a bind in flight)");
    return d;
  }
  d.cause = std::string(ReasonName(cause));
  const Candidate* example = nullptr;
  for (const Candidate& c : filter.candidates) {
    if (CauseOf(c) == cause) {
      if (example == nullptr) example = &c;
      else AddEvidence(d, DescribeRefusal(c, clock));
    }
  }
  d.summary = absl::StrCat("every one of the ", judged, " nodes offered refuses its ", filter.gpus, " GPUs; ", nodes,
                           " for ", d.cause, ", e.g. ", DescribeRefusal(*example, clock));
  if (nodes < judged) AddEvidence(d, absl::StrCat(judged - nodes, " other node(s) refuse it for other reasons"));
  if (const Record* asked = Newest(chain, Kind::kCapacityRequested)) AddEvidence(d, DescribeRecord(*asked, clock));
  else if (const Record* preference = Newest(chain, Kind::kPreference)) AddEvidence(d, DescribeRecord(*preference, clock));
  if (filter.repeats > 0) AddEvidence(d, absl::StrCat("refused alike ", filter.repeats + 1, " times in a row"));
  return d;
}

}  // namespace

Diagnosis DiagnosePod(absl::string_view pod, const std::vector<Record>& chain, RecordClock clock) {
  Diagnosis d;
  if (chain.empty()) {
    d.state = "unknown";
    d.cause = "no-record";
    d.summary = absl::StrCat("topofit has recorded no decision about ", pod,
                             ": it never reached topofit (spec.schedulerName is another scheduler's, it asks for no "
                             "GPU, or kube-scheduler cannot reach the extender: see its events)");
  } else if (const Record* restart = Newest(chain, Kind::kRestart)) {
    d = FromRestart(*restart, clock);
  } else {
    const Record* bind = Newest(chain, Kind::kBind);
    const Record* filter = Newest(chain, Kind::kFilter);
    const Record* gang = Newest(chain, Kind::kGang);
    const Record* ranking = Newest(chain, Kind::kRanking);
    const Record* capacity = Newest(chain, Kind::kCapacityStatus);
    const Record* asked = Newest(chain, Kind::kCapacityRequested);
    if (bind != nullptr && (filter == nullptr || bind->time >= filter->time)) {
      const bool bound = bind->reason == Reason::kBound;
      d = Diagnosis{.state = bound ? "running" : "pending",
                    .cause = std::string(ReasonName(bind->reason)),
                    .summary = DescribeRecord(*bind, clock),
                    .since = bind->time};
    } else if (gang != nullptr && gang->reason != Reason::kGangReserved && (filter == nullptr || gang->time >= filter->time)) {
      d = Diagnosis{.state = "pending", .cause = std::string(ReasonName(gang->reason)), .summary = DescribeRecord(*gang, clock),
                    .since = gang->time};
    } else if (capacity != nullptr && (asked == nullptr || capacity->time >= asked->time)) {
      // The nodes there refuse it and the capacity asked for does not come: cluster-autoscaler said why.
      d = Diagnosis{.state = "pending", .cause = std::string(ReasonName(capacity->reason)),
                    .summary = DescribeRecord(*capacity, clock), .since = capacity->time};
      if (filter != nullptr) AddEvidence(d, DescribeRecord(*filter, clock));
    } else if (ranking != nullptr && ranking->reason == Reason::kVetoed && (filter == nullptr || ranking->time >= filter->time)) {
      // The nodes there are refused it, and no group cluster-autoscaler could grow would take it either.
      d = Diagnosis{.state = "pending", .cause = std::string(ReasonName(Reason::kVetoed)),
                    .summary = DescribeRecord(*ranking, clock), .since = ranking->time};
      if (filter != nullptr) AddEvidence(d, DescribeRecord(*filter, clock));
    } else if (filter != nullptr) {
      d = FromFilter(*filter, chain, clock);
    } else {
      d = Diagnosis{.state = "pending", .cause = std::string(ReasonName(chain.front().reason)),
                    .summary = DescribeRecord(chain.front(), clock), .since = chain.front().time};
    }
  }
  for (const Record& r : chain) {  // rankings and intents, about several pods, carry none
    if (!r.correlation_id.empty()) {
      d.correlation_id = r.correlation_id;
      break;
    }
  }
  d.summary = TruncateUtf8(std::move(d.summary), kMaxDiagnosisSummaryBytes);
  return d;
}

}  // namespace topofit::history
