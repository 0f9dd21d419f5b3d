#include "history/explain_query.h"

#include <algorithm>
#include <utility>

#include "history/explain.h"
#include "history/record_json.h"

namespace topofit::history {

absl::string_view SubjectName(Subject subject) {
  switch (subject) {
    case Subject::kPod: return "pod";
    case Subject::kGroup: return "group";
    case Subject::kIdle: return "idle";
    case Subject::kRestart: return "restart";
    case Subject::kHeadroom: return "headroom";
  }
  return "";
}

namespace {

// The newest `limit` records `query` matches, page by page, told in time order, newest first: each
// process's writer batches for up to 100 ms, so the extender's and the expander's records reach a shared
// database out of time order (ids are write order). Ties keep it. `clock` becomes the pages'.
absl::StatusOr<std::vector<Record>> ReadNewest(DecisionQuery query, int64_t limit, const PageSource& source,
                                               RecordClock& clock) {
  std::vector<Record> records;
  do {
    query.limit = static_cast<int>(std::min<int64_t>(kMaxPageSize, limit - static_cast<int64_t>(records.size())));
    absl::StatusOr<DecisionPage> page = source(query);
    if (!page.ok()) return page.status();
    clock = page->clock;
    for (Record& r : page->records) records.push_back(std::move(r));
    query.before_id = page->next_before_id;
  } while (query.before_id != 0 && static_cast<int64_t>(records.size()) < limit);
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.time > b.time; });
  return records;
}

}  // namespace

absl::StatusOr<Explanation> Explain(Subject subject, const std::string& name, int64_t limit, const PageSource& source) {
  if (limit < 1) return absl::InvalidArgumentError("the limit must be positive");
  // A pod's records are those of its newest uid (its correlation id): the expander records the pods
  // cluster-autoscaler makes from a ProvisioningRequest under their own names, and the uid of the pod they
  // stand for.
  DecisionQuery query;
  if (subject == Subject::kPod) {
    query.pod = name;
    query.limit = 1;
    absl::StatusOr<DecisionPage> newest = source(query);
    if (!newest.ok()) return newest.status();
    if (newest->records.empty()) return Explanation{};
    for (const PodSubject& pod : newest->records.front().pods) {
      if (pod.key == name) query.pod_uid = pod.uid;
    }
    query.pod.clear();
  } else if (subject == Subject::kRestart) {
    query.kind = Kind::kRestart;
    query.pod = name;
  } else if (subject == Subject::kIdle) {
    query.kind = Kind::kIdle;
    query.node = name;
  } else if (subject == Subject::kHeadroom) {
    query.kind = Kind::kHeadroom;
  } else {
    query.node_group = name;
  }
  Explanation out;
  absl::StatusOr<std::vector<Record>> read = ReadNewest(query, limit, source, out.clock);
  if (!read.ok()) return read.status();
  std::vector<Record> records = *std::move(read);

  const RecordClock clock = out.clock;
  switch (subject) {
    case Subject::kPod:
      out.records = PodChain(name, records);
      out.text = ExplainPod(name, out.records, clock);
      // The chain's own records carry it (rankings and intents, about several pods, do not).
      for (const Record& r : out.records) {
        if (!r.correlation_id.empty()) {
          out.correlation_id = r.correlation_id;
          break;
        }
      }
      break;
    case Subject::kRestart: {
      out.records = std::move(records);
      if (out.records.empty()) break;
      out.correlation_id = out.records.front().correlation_id;
      // Where topofit placed the pod the newest restart is of: its bind.
      DecisionQuery bind;
      bind.kind = Kind::kBind;
      bind.pod_uid = out.correlation_id;
      bind.limit = 1;
      absl::StatusOr<DecisionPage> bound = source(bind);
      if (!bound.ok()) return bound.status();
      const bool placed = !bound->records.empty();
      if (placed) out.records.push_back(std::move(bound->records.front()));
      const std::vector<Record> restarts(out.records.begin(), out.records.end() - (placed ? 1 : 0));
      out.text = ExplainRestarts(name, restarts, placed ? &out.records.back() : nullptr, clock);
      break;
    }
    case Subject::kHeadroom:
      for (Record& r : records) {
        if (name.empty() || (r.headroom && r.headroom->shape == name)) out.records.push_back(std::move(r));
      }
      out.text = ExplainHeadroom(name, out.records, clock);
      break;
    case Subject::kIdle:
      out.records = IdleRecordsTold(name, records);
      out.text = ExplainIdle(name, out.records, clock);
      break;
    case Subject::kGroup: {
      // Why the group grew or did not is in its rankings: read them first, so that the idle and filter
      // records of its many nodes do not crowd them out of the limit; the rest follow.
      query.kind = Kind::kRanking;
      query.before_id = 0;
      absl::StatusOr<std::vector<Record>> rankings = ReadNewest(query, limit, source, out.clock);
      if (!rankings.ok()) return rankings.status();
      out.records = *std::move(rankings);
      for (Record& r : records) {
        if (r.kind != Kind::kRanking) out.records.push_back(std::move(r));
      }
      out.text = ExplainGroup(name, out.records, clock);
      break;
    }
  }
  return out;
}

nlohmann::json ExplanationToJson(Subject subject, const std::string& name, const Explanation& explanation) {
  nlohmann::json decisions = nlohmann::json::array();
  for (const Record& r : explanation.records) {
    nlohmann::json j = RecordToJson(r);
    j["text"] = DescribeRecord(r, explanation.clock);
    decisions.push_back(std::move(j));
  }
  nlohmann::json doc = {{std::string(SubjectName(subject)), name}, {"decisions", std::move(decisions)}};
  if (!explanation.correlation_id.empty()) doc["correlationId"] = explanation.correlation_id;
  // The record times stay RFC 3339 for programs; a replay's count from the epoch, and the document says so.
  if (explanation.clock == RecordClock::kReplay) doc["clock"] = "replay";
  return doc;
}

}  // namespace topofit::history
