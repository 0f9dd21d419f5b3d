#include "history/explain.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "history/record_json.h"

namespace topofit::history {
namespace {

// Refused nodes named per filter line; the rest are counted.
constexpr size_t kNodesNamed = 3;

std::string Gbps(int64_t mbps) { return absl::StrFormat("%.0f GB/s", static_cast<double>(mbps) / 1000); }

std::string SetText(const TopologyDetail& detail) {
  std::string out = absl::StrCat("GPUs ", detail.gpu_ids);
  if (!detail.weakest_link.empty()) absl::StrAppend(&out, ", weakest link ", detail.weakest_link);
  if (detail.bandwidth_mbps > 0) absl::StrAppend(&out, ", ", Gbps(detail.bandwidth_mbps));
  return out;
}

std::string GroupVerdict(const Candidate& c) {
  std::string scores = absl::StrFormat("%d preferences met, quality %d‰, %d idle GPUs, $%.2f/h",
                                       c.preferences_satisfied, c.quality_per_mille, c.idle_gpus, c.price);
  switch (c.reason) {
    case Reason::kChosen:
      return absl::StrCat(c.name, " chosen (", scores, ")");
    case Reason::kGroupWouldStrand:
      return absl::StrCat(c.name, " refused: its new nodes would not take ", c.requested, " GPU pod(s)");
    case Reason::kFewerPreferences:
      return absl::StrCat(c.name, " lost on preferences met (", scores, ")");
    case Reason::kHigherCostPerUsefulGpu:
      return absl::StrCat(c.name, " lost on cost per useful GPU-hour (", scores, ")");
    case Reason::kFewerPodsPlaced:
      return absl::StrCat(c.name, " lost on pods placed (", scores, ")");
    default:
      return absl::StrCat(c.name, " ", ReasonName(c.reason));
  }
}

// " (the refusal before repeated 5 more times, not recorded)": RefusalAggregator folded them into it.
std::string Repeats(const Record& r) {
  return r.repeats > 0 ? absl::StrCat(" (the refusal before repeated ", r.repeats, " more time(s), not recorded)") : "";
}

std::string Filter(const Record& r, RecordClock clock) {
  if (r.reason == Reason::kInvalidPod) return absl::StrCat("filter: the pod's topofit annotations do not parse", Repeats(r));
  std::vector<const Candidate*> fit, refused;
  int fitting = 0, judged = 0;  // nodes: a candidate that fits may stand for several (FilterCandidates)
  for (const Candidate& c : r.candidates) {
    (c.reason == Reason::kFits ? fit : refused).push_back(&c);
    (c.reason == Reason::kFits ? fitting : judged) += c.count;
  }
  judged += fitting;
  if (!fit.empty()) {
    std::string out = absl::StrCat("filter: ", fitting, " of ", judged, " nodes fit ", r.gpus, " GPUs");
    if (fit.front()->topology) absl::StrAppend(&out, "; ", fit.front()->name, " would give ", SetText(*fit.front()->topology));
    return absl::StrCat(out, Repeats(r));
  }
  std::vector<std::string> named;
  for (size_t i = 0; i < refused.size() && i < kNodesNamed; ++i) named.push_back(DescribeRefusal(*refused[i], clock));
  std::string out = absl::StrCat("filter: every one of ", refused.size(), " nodes refused ", r.gpus, " GPUs: ",
                                 absl::StrJoin(named, "; "));
  if (refused.size() > kNodesNamed) absl::StrAppend(&out, "; and ", refused.size() - kNodesNamed, " more");
  return absl::StrCat(out, Repeats(r));
}

std::string Ranking(const Record& r) {
  std::vector<std::string> verdicts;
  for (const Candidate& c : r.candidates) verdicts.push_back(GroupVerdict(c));
  if (r.reason == Reason::kVetoed) {
    return absl::StrCat("expander vetoed the scale-up, every GPU group would strand a pod: ", absl::StrJoin(verdicts, "; "));
  }
  return absl::StrCat("expander ranked ", r.candidates.size(), " GPU group(s): ", absl::StrJoin(verdicts, "; "));
}

// "6 free GPUs (0,1,2,3,4,5): 4 fragmented, 2 held-for-intent".
std::string Idle(const Record& r) {
  if (r.gpus == 0) return "no free GPUs";
  std::vector<std::string> parts;
  for (const Candidate& c : r.candidates) parts.push_back(absl::StrCat(c.free_gpus, " ", ReasonName(c.reason)));
  std::string ids = r.candidates.empty() || !r.candidates.front().topology ? ""
                                                                           : absl::StrCat(" (", r.candidates.front().topology->gpu_ids, ")");
  return absl::StrCat(r.gpus, " free GPUs", ids, ": ", absl::StrJoin(parts, ", "));
}

std::string NodeName(const Record& r) {
  return r.node_group.empty() ? r.node : absl::StrCat(r.node, " (", r.node_group, ")");
}

std::string Duration(absl::Duration d) {
  const int64_t s = absl::ToInt64Seconds(d);
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrCat(s / 60, "m", s % 60 > 0 ? absl::StrCat(s % 60, "s") : "");
  return absl::StrCat(s / 3600, "h", (s % 3600) / 60, "m");
}

// The uid of the newest record naming the pod `pod` (namespace/name): its correlation id.
std::string NewestUid(absl::string_view pod, const std::vector<Record>& records) {
  for (const Record& r : records) {
    for (const PodSubject& subject : r.pods) {
      if (subject.key == pod) return subject.uid;
    }
  }
  return "";
}

// A gang record (from_decisions.h, GangReservedRecord and the rest), in words.
std::string Gang(const Record& r) {
  const int64_t members = r.candidates.empty() ? 0 : r.candidates.front().requested;
  switch (r.reason) {
    case Reason::kGangReserved: {
      std::vector<std::string> places;
      for (const Candidate& c : r.candidates) places.push_back(absl::StrCat(c.name, " (", c.count, ")"));
      return absl::StrCat("gang ", r.gang, ": every member's place reserved at once, ", r.gpus, " GPUs on ",
                          absl::StrJoin(places, ", "));
    }
    case Reason::kGangNoRoom:
      return absl::StrCat("gang ", r.gang, ": no node or NVLink domain offered holds all ", members, " members (",
                          r.gpus, " GPUs); they wait");
    default: {
      const int64_t joined = r.candidates.empty() ? 0 : r.candidates.front().available;
      return absl::StrCat("gang ", r.gang, ": bind to ", r.node, " held until every member has its place (",
                          joined, " of ", members, ")");
    }
  }
}

// What cluster-autoscaler said of the capacity topofit asked for, and what it means for the pod.
std::string CapacityStatus(const Record& r) {
  const std::string request = r.provisioning_request.empty() ? "the ProvisioningRequest"
                                                             : absl::StrCat("ProvisioningRequest ", r.provisioning_request);
  switch (r.reason) {
    case Reason::kCapacityNotFound:
      return absl::StrCat("cluster-autoscaler found no capacity for ", request,
                          " (Provisioned=False, CapacityIsNotFound): no node group it may grow can take the pod now "
                          "(at its maximum size, out of quota, or none fits); it tries again later");
    case Reason::kCapacityFailed:
      return absl::StrCat("cluster-autoscaler gave up on ", request, " (Failed=True)");
    case Reason::kCapacityBookingExpired:
      return absl::StrCat("the capacity cluster-autoscaler brought for ", request,
                          " expired unused (BookingExpired=True): the pod did not take the new nodes in time");
    case Reason::kCapacityRevoked:
      return absl::StrCat("the capacity booked for ", request, " was revoked (CapacityRevoked=True)");
    default:
      return absl::StrCat(request, ": ", ReasonName(r.reason));
  }
}

// A headroom record in one line: which shape, from how many pods kept warm to how many, and why.
std::string Headroom(const Record& r) {
  if (!r.headroom) return absl::StrCat("warm capacity changed: ", ReasonName(r.reason));
  const HeadroomDetail& d = *r.headroom;
  const std::string mechanism = d.mechanism == "placeholders" ? "placeholder Deployment" : "CapacityBuffer";
  const std::string why =
      r.reason == Reason::kHeadroomGrew
          ? absl::StrFormat("serving %.0f%% of the %d one-minute rises over a %d s boot needs %d (the largest rose "
                            "by %d)",
                            100 * d.fill_rate, d.rises, d.boot_seconds, d.target, d.largest_rise)
          : absl::StrFormat("its target stayed at %d or below for the shrink delay (%.0f%% of %d rises over a %d s "
                            "boot; the largest %d)",
                            d.replicas, 100 * d.fill_rate, d.rises, d.boot_seconds, d.largest_rise);
  return absl::StrCat(mechanism, " ", d.shape, ": ", d.was, " -> ", d.replicas, " pod(s) kept warm (", r.gpus,
                      " GPUs); ", why);
}

// A restart record in one line: which container, how many times, and the cause in words.
std::string Restart(const Record& r) {
  if (!r.restart) return absl::StrCat("a container restarted: ", ReasonName(r.reason));
  const RestartDetail& d = *r.restart;
  return absl::StrCat("container ", d.container, " restarted (restart ", d.restart_count, ") on ", NodeName(r), ": ",
                      d.diagnosis.empty() ? ReasonName(r.reason) : absl::string_view(d.diagnosis));
}

std::string Timeline(const std::vector<Record>& records, RecordClock clock) {
  const absl::Time first = records.back().time;
  std::string out;
  for (const Record& r : records) {
    absl::StrAppend(&out, "  ", FormatRecordTime(r.time, clock), "  +", Duration(r.time - first), "  ", DescribeRecord(r, clock),
                    "\n");
  }
  return out;
}

}  // namespace

std::string DescribeRefusal(const Candidate& c, RecordClock clock) {
  const std::optional<decision::Refusal> refusal = RefusalOf(c.reason);
  std::string why = c.reason == Reason::kTopologyUnknown ? "its GPU topology could not be resolved"
                    : refusal ? decision::RefusalText({.refusal = *refusal,
                                                       .unresolvable = c.unresolvable,
                                                       .requested = c.requested,
                                                       .available = c.available,
                                                       .held_gpus = c.held_gpus,
                                                       .free_gpus = c.free_gpus,
                                                       .held_until = c.held_until},
                                                      [clock](absl::Time t) { return FormatRecordTime(t, clock); })
                              : std::string(ReasonName(c.reason));
  std::string out = absl::StrCat(c.name, ": ", why);
  if (c.topology && c.reason != Reason::kHeldForScaleUp) absl::StrAppend(&out, " (best set: ", SetText(*c.topology), ")");
  if (c.topology && c.topology->assumed) {
    absl::StrAppend(&out, "; its topology is assumed PCIe-only: no instance type, GPU Feature Discovery label or "
                          "topofit.io/topology annotation says what it is");
  }
  return out;
}

std::string DescribeRestartEnd(const RestartDetail& d) {
  return absl::StrCat("exit code ", d.exit_code, d.signal != 0 ? absl::StrCat(", signal ", d.signal) : "",
                      d.termination_reason.empty() ? "" : absl::StrCat(" (", d.termination_reason, ")"),
                      d.waiting_reason.empty() ? "" : absl::StrCat("; now ", d.waiting_reason));
}

std::string DescribeRestartGpus(const RestartDetail& d, absl::string_view node) {
  return absl::StrCat(d.gpu_ids.empty() ? "none recorded" : d.gpu_ids, " on ", node,
                      d.unhealthy_gpus.empty() ? "" : absl::StrCat("; unhealthy: ", absl::StrJoin(d.unhealthy_gpus, ",")),
                      d.xids.empty() ? "" : absl::StrCat("; Xid ", absl::StrJoin(d.xids, ",")));
}

std::string DescribeRecord(const Record& r, RecordClock clock) {
  switch (r.kind) {
    case Kind::kFilter:
      return Filter(r, clock);
    case Kind::kPreference: {
      std::string need = absl::StrCat("needs new capacity: ", r.gpus, " GPUs");
      if (!r.candidates.empty() && r.candidates.front().topology) {
        const TopologyDetail& shape = *r.candidates.front().topology;
        absl::StrAppend(&need, " with links of ", shape.weakest_link, " or better");
        if (shape.bandwidth_mbps > 0) absl::StrAppend(&need, " and ", Gbps(shape.bandwidth_mbps));
      }
      return absl::StrCat(need, " (preference recorded for the expander)");
    }
    case Kind::kCapacityRequested:
      return absl::StrCat("asked cluster-autoscaler for capacity (ProvisioningRequest",
                          r.provisioning_request.empty() ? "" : absl::StrCat(" ", r.provisioning_request), ")");
    case Kind::kCapacityWithdrawn:
      return "the ProvisioningRequest has served: withdrawn";
    case Kind::kCapacityStatus:
      return CapacityStatus(r);
    case Kind::kGang:
      return Gang(r);
    case Kind::kRanking:
      return Ranking(r);
    case Kind::kIntent:
      return absl::StrCat("node group ", r.node_group, " grows by ",
                          r.candidates.empty() ? 0 : r.candidates.front().requested, " node(s); ", r.gpus,
                          " of its GPUs held for ", r.pods.size(), " pod(s)");
    case Kind::kIdle:
      return absl::StrCat("node ", NodeName(r), ": ", Idle(r));
    case Kind::kPreferredAllocation:
      return absl::StrCat("node agent on ", r.node, " preferred GPUs ",
                          r.candidates.empty() || !r.candidates.front().topology ? "" : r.candidates.front().topology->gpu_ids,
                          r.reason == Reason::kAsChosen ? ", as the extender chose"
                                                        : ", topofit's allocator's (no pod waits with a choice)");
    case Kind::kAllocation: {
      const auto ids = [&](size_t i) {
        return i < r.candidates.size() && r.candidates[i].topology ? r.candidates[i].topology->gpu_ids : std::string();
      };
      const std::string given = absl::StrCat("the kubelet gave GPUs ", ids(0), " on ", r.node);
      if (r.reason == Reason::kAsChosen) return absl::StrCat(given, ", as the extender chose");
      if (r.reason == Reason::kOtherDevices) return absl::StrCat(given, ", not GPUs ", ids(1), " the extender chose");
      return absl::StrCat(given, " to a pod topofit did not bind");
    }
    case Kind::kRestart:
      return Restart(r);
    case Kind::kHeadroom:
      return Headroom(r);
    case Kind::kBind:
      if (r.reason == Reason::kBindFailed) return absl::StrCat("bind to ", r.node, " failed");
      return absl::StrCat("bound to ", r.node,
                          r.candidates.empty() || !r.candidates.front().topology
                              ? std::string()
                              : absl::StrCat(", ", SetText(*r.candidates.front().topology)));
  }
  return std::string(KindName(r.kind));
}

std::vector<Record> PodChain(absl::string_view pod, const std::vector<Record>& records) {
  const std::string uid = NewestUid(pod, records);
  std::vector<Record> chain;
  for (const Record& r : records) {
    if (std::any_of(r.pods.begin(), r.pods.end(), [&](const PodSubject& s) { return s.uid == uid; })) {
      chain.push_back(r);
    }
  }
  return chain;
}

std::string ExplainPod(absl::string_view pod, const std::vector<Record>& records, RecordClock clock) {
  const std::vector<Record> chain = PodChain(pod, records);
  if (chain.empty()) return "";
  const Record& newest = chain.front();
  const Record& first = chain.back();
  std::string headline;
  if (newest.kind == Kind::kBind && newest.reason == Reason::kBound) {
    headline = absl::StrCat(pod, " bound to ", newest.node, " ", Duration(newest.time - first.time),
                            " after topofit first judged it");
  } else {
    headline = absl::StrCat(pod, " pending: last decision ", Duration(newest.time - first.time),
                            " after the first, at ", FormatRecordTime(newest.time, clock));
  }
  return absl::StrCat(headline, "\ncorrelation id ", NewestUid(pod, chain), " (", chain.size(), " decisions, newest first)\n",
                      Timeline(chain, clock));
}

std::string ExplainGroup(absl::string_view group, const std::vector<Record>& records, RecordClock clock) {
  if (records.empty()) return "";
  std::vector<Record> rankings, others;
  int chosen = 0;
  for (const Record& r : records) {
    (r.kind == Kind::kRanking ? rankings : others).push_back(r);
    if (r.kind == Kind::kRanking && r.node_group == group) ++chosen;
  }
  std::string out = absl::StrCat("node group ", group, ": chosen by ", chosen, " ranking(s), passed over by ",
                                 rankings.size() - chosen, "\n");
  if (!rankings.empty()) absl::StrAppend(&out, "rankings, newest first:\n", Timeline(rankings, clock));
  if (!others.empty()) absl::StrAppend(&out, "other decisions about it, newest first:\n", Timeline(others, clock));
  return out;
}

std::string ExplainRestarts(absl::string_view pod, const std::vector<Record>& restarts, const Record* placed,
                            RecordClock clock) {
  if (restarts.empty()) return "";
  const Record& newest = restarts.front();
  std::string out = absl::StrCat(pod, ": ", restarts.size(), " restart(s) recorded; the newest, at ",
                                 FormatRecordTime(newest.time, clock), ", is ", ReasonName(newest.reason), "\n");
  if (newest.restart) {
    const RestartDetail& d = *newest.restart;
    absl::StrAppend(&out, "  why: ", d.diagnosis, "\n");
    absl::StrAppend(&out, "  container ", d.container, ": restart ", d.restart_count, ", last ended with ",
                    DescribeRestartEnd(d), "\n");
    if (!d.termination_message.empty()) absl::StrAppend(&out, "  termination message: ", d.termination_message, "\n");
    absl::StrAppend(&out, "  GPUs: ", DescribeRestartGpus(d, NodeName(newest)), "\n");
    for (const std::string& warning : d.warnings) absl::StrAppend(&out, "  warning event: ", warning, "\n");
    if (!d.node_conditions.empty()) absl::StrAppend(&out, "  node ", newest.node, ": ", d.node_conditions, "\n");
    for (const std::string& warning : d.node_warnings) absl::StrAppend(&out, "  node warning event: ", warning, "\n");
    if (!d.log_tail.empty()) {
      absl::StrAppend(&out, "  previous container's log, last lines:\n");
      for (absl::string_view line : absl::StrSplit(d.log_tail, '\n', absl::SkipEmpty())) {
        absl::StrAppend(&out, "    | ", line, "\n");
      }
    }
  }
  if (placed != nullptr) {
    absl::StrAppend(&out, "  placed by topofit: ", DescribeRecord(*placed, clock), " at ", FormatRecordTime(placed->time, clock),
                    "\n");
  } else {
    absl::StrAppend(&out, "  placed by topofit: no bind recorded\n");
  }
  if (restarts.size() > 1) {
    absl::StrAppend(&out, "earlier restarts, newest first:\n");
    for (size_t i = 1; i < restarts.size(); ++i) {
      absl::StrAppend(&out, "  ", FormatRecordTime(restarts[i].time, clock), "  ", Restart(restarts[i]), "\n");
    }
  }
  return out;
}

std::vector<Record> IdleRecordsTold(absl::string_view node, const std::vector<Record>& records) {
  std::vector<Record> told;
  std::set<std::string> seen;
  for (const Record& r : records) {
    if (r.kind != Kind::kIdle) continue;
    if (!node.empty()) {
      if (r.node == node) told.push_back(r);
    } else if (seen.insert(r.node).second && r.gpus > 0) {
      told.push_back(r);
    }
  }
  return told;
}

std::string ExplainIdle(absl::string_view node, const std::vector<Record>& records, RecordClock clock) {
  const std::vector<Record> told = IdleRecordsTold(node, records);
  if (told.empty()) return "";
  if (!node.empty()) {
    return absl::StrCat("node ", NodeName(told.front()), ": ", Idle(told.front()), " since ",
                        FormatRecordTime(told.front().time, clock), "\n", told.size(), " change(s), newest first\n",
                        Timeline(told, clock));
  }
  std::map<Reason, int> totals;
  int gpus = 0;
  for (const Record& r : told) {
    gpus += r.gpus;
    for (const Candidate& c : r.candidates) totals[c.reason] += c.free_gpus;
  }
  std::vector<std::string> by_reason;
  for (const auto& [reason, n] : totals) by_reason.push_back(absl::StrCat(n, " ", ReasonName(reason)));
  std::string out = absl::StrCat(gpus, " idle GPUs on ", told.size(), " node(s): ", absl::StrJoin(by_reason, ", "),
                                 "\n");
  for (const Record& r : told) {
    absl::StrAppend(&out, "  ", NodeName(r), ": ", Idle(r), " since ", FormatRecordTime(r.time, clock), "\n");
  }
  return out;
}

std::string ExplainHeadroom(absl::string_view shape, const std::vector<Record>& records, RecordClock clock) {
  std::vector<Record> told;
  for (const Record& r : records) {
    if (r.kind == Kind::kHeadroom && r.headroom && (shape.empty() || r.headroom->shape == shape)) told.push_back(r);
  }
  if (told.empty()) return "";
  // Newest first: the first record of each shape is what it holds now.
  std::map<std::string, const Record*> now;
  for (const Record& r : told) now.try_emplace(r.headroom->shape, &r);
  int pods = 0, gpus = 0;
  for (const auto& [name, r] : now) {
    pods += r->headroom->replicas;
    gpus += r->gpus;
  }
  std::string out = absl::StrCat("warm capacity: ", pods, " pod(s), ", gpus, " GPUs over ", now.size(),
                                 " shape(s), as last changed\n");
  for (const auto& [name, r] : now) {
    absl::StrAppend(&out, "  ", name, ": ", r->headroom->replicas, " since ", FormatRecordTime(r->time, clock), "\n");
  }
  absl::StrAppend(&out, told.size(), " change(s), newest first\n", Timeline(told, clock));
  return out;
}

}  // namespace topofit::history
