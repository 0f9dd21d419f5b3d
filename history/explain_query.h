#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "history/record.h"
#include "history/store.h"

namespace topofit::history {

// Where explanations read pages of decisions from: a DecisionStore, or a server's GET /decisions.
using PageSource = std::function<absl::StatusOr<DecisionPage>(const DecisionQuery&)>;

// What `topofit explain` and the MCP server's explain tools are asked about.
enum class Subject : uint8_t {
  kPod,    // NS/NAME: its chain (records of its newest correlation id)
  kGroup,  // a node group: the rankings that weighed it, its intents
  kIdle,   // a node's idle GPUs over time, or (no name) each node's latest
  kRestart,  // NS/NAME: its restarts, and the bind that placed it
  kHeadroom,  // a shape's warm capacity (topofit-headroom-<shape>), or (no name) every shape's
};
absl::string_view SubjectName(Subject subject);  // "pod", "group", "idle", "restart", "headroom"

struct Explanation {
  std::vector<Record> records;  // the records told, newest first by time (by id on a tie); empty: nothing recorded
  std::string text;             // in plain language (explain.h)
  std::string correlation_id;   // a pod's, when its own records carry it
  RecordClock clock = RecordClock::kWall;  // the records' (DecisionPage::clock)
};

// Reads the newest `limit` records about (`subject`, `name`) from `source`, page by page, and tells them,
// dated on the pages' clock.
absl::StatusOr<Explanation> Explain(Subject subject, const std::string& name, int64_t limit, const PageSource& source);

// {"<subject>": name, "decisions": [record + "text"], "correlationId"?}: `explain --json` and the MCP
// tools' structured content.
nlohmann::json ExplanationToJson(Subject subject, const std::string& name, const Explanation& explanation);

}  // namespace topofit::history
