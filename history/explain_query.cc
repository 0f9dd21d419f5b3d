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
  }
  return "";
}

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
  } else if (subject == Subject::kIdle) {
    query.kind = Kind::kIdle;
    query.node = name;
  } else {
    query.node_group = name;
  }
  std::vector<Record> records;
  do {
    query.limit = static_cast<int>(std::min<int64_t>(kMaxPageSize, limit - static_cast<int64_t>(records.size())));
    absl::StatusOr<DecisionPage> page = source(query);
    if (!page.ok()) return page.status();
    for (Record& r : page->records) records.push_back(std::move(r));
    query.before_id = page->next_before_id;
  } while (query.before_id != 0 && static_cast<int64_t>(records.size()) < limit);
  // Told in time order, newest first: each process's writer batches for up to 100 ms, so the extender's and
  // the expander's records reach a shared database out of time order (ids are write order). Ties keep it.
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.time > b.time; });

  Explanation out;
  switch (subject) {
    case Subject::kPod:
      out.records = PodChain(name, records);
      out.text = ExplainPod(name, out.records);
      // The chain's own records carry it (rankings and intents, about several pods, do not).
      for (const Record& r : out.records) {
        if (!r.correlation_id.empty()) {
          out.correlation_id = r.correlation_id;
          break;
        }
      }
      break;
    case Subject::kIdle:
      out.records = IdleRecordsTold(name, records);
      out.text = ExplainIdle(name, out.records);
      break;
    case Subject::kGroup:
      out.records = std::move(records);
      out.text = ExplainGroup(name, out.records);
      break;
  }
  return out;
}

nlohmann::json ExplanationToJson(Subject subject, const std::string& name, const Explanation& explanation) {
  nlohmann::json decisions = nlohmann::json::array();
  for (const Record& r : explanation.records) {
    nlohmann::json j = RecordToJson(r);
    j["text"] = DescribeRecord(r);
    decisions.push_back(std::move(j));
  }
  nlohmann::json doc = {{std::string(SubjectName(subject)), name}, {"decisions", std::move(decisions)}};
  if (!explanation.correlation_id.empty()) doc["correlationId"] = explanation.correlation_id;
  return doc;
}

}  // namespace topofit::history
