// The candidates column's writer (CandidatesJson): text the existing reader reads back to the same
// candidates, in the format the DOM writer it replaced produced; and the DOM the read path builds
// (RecordToJson) is that text, parsed.

#include "history/record_json.h"

#include <catch2/catch.hpp>

#include "tests/kube/status_matchers.h"

namespace topofit::history {
namespace {

std::vector<Candidate> ReadBack(const std::string& text) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(parsed.is_discarded());
  absl::StatusOr<std::vector<Candidate>> back = CandidatesFromJson(parsed);
  REQUIRE_OK(back);
  return *back;
}

// Every field of a candidate set in one of them, a count, a tiny price and a name to escape.
std::vector<Candidate> EveryField() {
  Candidate refused{.name = "g5-1", .reason = Reason::kMinLink, .unresolvable = true, .requested = 1, .available = 4,
                    .free_gpus = 8, .topology = TopologyDetail{"0,1,2,3", "SYS", 12'000}};
  Candidate fits{.name = "p4d-1", .topology = TopologyDetail{"0,1", "NV12", 240'000}, .count = 79};
  Candidate held{.name = "p4d-new", .reason = Reason::kHeldForScaleUp, .unresolvable = true, .free_gpus = 8,
                 .held_gpus = 8, .held_until = absl::FromUnixSeconds(1'800'000'000) + absl::Microseconds(250)};
  Candidate group{.name = "p5-a", .reason = Reason::kHigherCostPerUsefulGpu, .held_gpus = 2,
                  .preferences_satisfied = 3, .quality_per_mille = 875, .idle_gpus = 1, .price = 98.32};
  Candidate odd{.name = "n\"ode\\ \xc3\xa9\t1", .reason = Reason::kTopologyUnknown, .price = 1e-7};
  return {refused, fits, held, group, odd};
}

TEST_CASE("the candidates column is written without a DOM and read back as it was", "[history]") {
  const std::vector<Candidate> all = EveryField();
  CHECK(ReadBack(CandidatesJson(all)) == all);
  CHECK(ReadBack(CandidatesJson({})).empty());
  CHECK(CandidatesJson({}) == "[]");
}

TEST_CASE("the candidates column's text is what nlohmann's dump of the same fields writes", "[history]") {
  // Keys sorted as dump() sorts an object's, zeros left out, a count of one left out: rows written before
  // this writer and after it read alike, and the sqlite3 shell's json_extract finds the same keys.
  const Candidate refused{.name = "g5-1", .reason = Reason::kMinLink, .unresolvable = true, .requested = 1,
                          .available = 4, .free_gpus = 8, .topology = TopologyDetail{"0,1,2,3", "SYS", 12'000}};
  const nlohmann::json expected = nlohmann::json::array(
      {{{"name", "g5-1"},
        {"reason", "min-link"},
        {"unresolvable", true},
        {"requested", 1},
        {"available", 4},
        {"freeGpus", 8},
        {"topology", {{"gpuIds", "0,1,2,3"}, {"weakestLink", "SYS"}, {"bandwidthMBps", 12'000}}}},
       {{"name", "p5-a"}, {"reason", "chosen"}, {"price", 16.25}, {"count", 3}}});
  CHECK(CandidatesJson({refused, Candidate{.name = "p5-a", .reason = Reason::kChosen, .price = 16.25, .count = 3}}) ==
        expected.dump());
}

TEST_CASE("a record's JSON carries its candidates as the column's text, parsed", "[history]") {
  // GET /decisions, explain and MCP dump the DOM RecordToJson builds; the column is written as text. The
  // two writers share one description of a candidate: the same keys, the same omissions, the same bytes.
  Record r;
  r.candidates = EveryField();
  const nlohmann::json json = RecordToJson(r);
  CHECK(json["candidates"] == nlohmann::json::parse(CandidatesJson(r.candidates)));
  CHECK(json["candidates"].dump() == CandidatesJson(r.candidates));
  r.candidates.clear();
  CHECK_FALSE(RecordToJson(r).contains("candidates"));
}

}  // namespace
}  // namespace topofit::history
