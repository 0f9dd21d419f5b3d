#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "history/record.h"

namespace topofit::history {

// A record as GET /decisions, explain --json and the database's candidates column carry it: names from
// record.h's codes, times in RFC 3339 with microseconds, optional fields left out when empty.
nlohmann::json RecordToJson(const Record& record);
absl::StatusOr<Record> RecordFromJson(const nlohmann::json& json);

// The database's candidates column: a JSON array written without a DOM (the writer thread makes one per
// record), read back by CandidatesFromJson.
std::string CandidatesJson(const std::vector<Candidate>& candidates);
absl::StatusOr<std::vector<Candidate>> CandidatesFromJson(const nlohmann::json& json);

// The database's detail column of a restart record: a JSON object (restarts are rare, a DOM is fine).
nlohmann::json RestartDetailToJson(const RestartDetail& detail);
absl::StatusOr<RestartDetail> RestartDetailFromJson(const nlohmann::json& json);
// And of a headroom record.
nlohmann::json HeadroomDetailToJson(const HeadroomDetail& detail);
absl::StatusOr<HeadroomDetail> HeadroomDetailFromJson(const nlohmann::json& json);

std::string FormatRecordTime(absl::Time time);
// How a text for people dates a record: a cluster's history by the wall clock (FormatRecordTime); a
// replay's, whose clock starts at the Unix epoch, by the time since the replay began ("replay +5h38m20s").
std::string FormatRecordTime(absl::Time time, RecordClock clock);
absl::StatusOr<absl::Time> ParseRecordTime(const std::string& text);

}  // namespace topofit::history
