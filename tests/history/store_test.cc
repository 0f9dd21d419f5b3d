#include "history/store.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "history/from_decisions.h"
#include "history/recorder.h"
#include "tests/codec/hostile_json.h"
#include "tests/cli/scratch_dir.h"
#include "tests/kube/status_matchers.h"

namespace topofit::history {
namespace {

using cli::testing::ScratchDir;

const absl::Time kT0 = absl::FromUnixSeconds(1'750'000'000);

// The i-th of a stream of filter refusals: pod p<i%3>, node group g<i%2>, one second apart.
Record Refusal(int i) {
  Record r;
  r.time = kT0 + absl::Seconds(i);
  r.component = Component::kExtender;
  r.kind = Kind::kFilter;
  r.reason = Reason::kNoNodeFits;
  r.correlation_id = absl::StrCat("uid-", i % 3);
  r.pods = {{r.correlation_id, absl::StrCat("ml/p", i % 3)}};
  r.node_group = absl::StrCat("g", i % 2);
  r.node = absl::StrCat("n", i);
  r.gpus = 8;
  Candidate c;
  c.name = r.node;
  c.reason = Reason::kMinLink;
  c.unresolvable = true;
  c.requested = 1;
  c.available = 5;
  c.free_gpus = 4;
  c.topology = TopologyDetail{"1,2,5,6", "SYS", 12'000};
  r.candidates = {c};
  return r;
}

std::vector<Record> Refusals(int from, int to) {
  std::vector<Record> out;
  for (int i = from; i < to; ++i) out.push_back(Refusal(i));
  return out;
}

// Ids of a page, newest first.
std::vector<int64_t> Ids(const DecisionPage& page) {
  std::vector<int64_t> ids;
  for (const Record& r : page.records) ids.push_back(r.id);
  return ids;
}

int64_t SqlInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  const int64_t value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

void SqlExec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  const int code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO((error != nullptr ? error : ""));
  sqlite3_free(error);
  REQUIRE(code == SQLITE_OK);
}

TEST_CASE("records round-trip in write order, newest first, with their pods and candidates", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  REQUIRE_OK((*store)->Append(Refusals(0, 3)));
  auto page = (*store)->Query({});
  REQUIRE_OK(page);
  REQUIRE(Ids(*page) == std::vector<int64_t>{3, 2, 1});
  CHECK(page->next_before_id == 0);
  Record expected = Refusal(2);
  expected.id = 3;
  CHECK(page->records.front() == expected);
}

TEST_CASE("pages follow the cursor without overlap or gap", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  REQUIRE_OK((*store)->Append(Refusals(0, 25)));
  DecisionQuery query;
  query.limit = 10;
  std::vector<int64_t> seen;
  std::vector<size_t> sizes;
  do {
    auto page = (*store)->Query(query);
    REQUIRE_OK(page);
    sizes.push_back(page->records.size());
    for (int64_t id : Ids(*page)) seen.push_back(id);
    query.before_id = page->next_before_id;
  } while (query.before_id != 0);
  CHECK(sizes == std::vector<size_t>{10, 10, 5});
  REQUIRE(seen.size() == 25);
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == static_cast<int64_t>(25 - i));
}

TEST_CASE("filters narrow by pod, uid, node group, node and time, together", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  REQUIRE_OK((*store)->Append(Refusals(0, 12)));
  struct Row {
    const char* name;
    DecisionQuery query;
    std::vector<int64_t> ids;  // record i has id i+1
  };
  const std::vector<Row> rows = {
      {"pod ml/p1: i%3==1", {.pod = "ml/p1"}, {11, 8, 5, 2}},
      {"uid-2: i%3==2", {.pod_uid = "uid-2"}, {12, 9, 6, 3}},
      {"group g0: even i", {.node_group = "g0"}, {11, 9, 7, 5, 3, 1}},
      {"node n4", {.node = "n4"}, {5}},
      {"since t0+9s", {.since = kT0 + absl::Seconds(9)}, {12, 11, 10}},
      {"pod ml/p1 in g1: i%3==1 and odd i", {.pod = "ml/p1", .node_group = "g1"}, {8, 2}},
      {"unknown pod", {.pod = "ml/nobody"}, {}},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      auto page = (*store)->Query(row.query);
      REQUIRE_OK(page);
      CHECK(Ids(*page) == row.ids);
    }
  }
}

TEST_CASE("a node group's decisions include the rankings that weighed it and chose another", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  Record ranking;
  ranking.time = kT0;
  ranking.component = Component::kExpander;
  ranking.kind = Kind::kRanking;
  ranking.reason = Reason::kChosen;
  ranking.node_group = "p5-a";
  ranking.candidates = {Candidate{.name = "p5-a", .reason = Reason::kChosen},
                        Candidate{.name = "g5", .reason = Reason::kGroupWouldStrand}};
  REQUIRE_OK((*store)->Append({Refusal(0), ranking}));
  for (const char* group : {"p5-a", "g5"}) {
    auto page = (*store)->Query({.node_group = group});
    REQUIRE_OK(page);
    CHECK(Ids(*page) == std::vector<int64_t>{2});
  }
}

TEST_CASE("a page size outside 1..1000 and a negative cursor are refused", "[history]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  CHECK_STATUS((*store)->Query({.limit = 0}), absl::StatusCode::kInvalidArgument, "outside 1..1000");
  CHECK_STATUS((*store)->Query({.limit = 1001}), absl::StatusCode::kInvalidArgument, "outside 1..1000");
  CHECK_STATUS((*store)->Query({.before_id = -1}), absl::StatusCode::kInvalidArgument, "negative");
}

TEST_CASE("retention evicts the oldest past the row cap and past the age, and counts them", "[history]") {
  SECTION("by rows: 25 written, 10 kept") {
    auto store = DecisionStore::Open("", {.max_age = absl::Hours(1), .max_rows = 10});
    REQUIRE_OK(store);
    REQUIRE_OK((*store)->Append(Refusals(0, 25)));
    auto evicted = (*store)->Retain(kT0 + absl::Seconds(24));
    REQUIRE_OK(evicted);
    CHECK(evicted->by_rows == 15);
    CHECK(evicted->by_age == 0);
    CHECK(*(*store)->Count() == 10);
    auto page = (*store)->Query({.pod = "ml/p0", .limit = 100});
    REQUIRE_OK(page);
    CHECK(Ids(*page) == std::vector<int64_t>{25, 22, 19, 16});  // their pods left with them
    auto again = (*store)->Retain(kT0 + absl::Seconds(24));
    CHECK(again->by_rows == 0);
  }
  SECTION("by age: records 0..24 s, kept 10 s back from t0+24s") {
    auto store = DecisionStore::Open("", {.max_age = absl::Seconds(10), .max_rows = 100});
    REQUIRE_OK(store);
    REQUIRE_OK((*store)->Append(Refusals(0, 25)));
    auto evicted = (*store)->Retain(kT0 + absl::Seconds(24));
    REQUIRE_OK(evicted);
    CHECK(evicted->by_age == 14);  // times 0..13 s are older than 24 - 10 = 14 s
    CHECK(*(*store)->Count() == 11);
  }
  SECTION("retention limits must be positive") {
    CHECK_STATUS(DecisionStore::Open("", {.max_rows = 0}), absl::StatusCode::kInvalidArgument, "max_rows");
    CHECK_STATUS(DecisionStore::Open("", {.max_age = absl::ZeroDuration()}), absl::StatusCode::kInvalidArgument,
                 "max_age");
  }
}

// The bytes of a database file and its WAL, as the file system has them.
int64_t FileBytes(const std::string& path) {
  int64_t bytes = 0;
  for (const std::string& file : {path, absl::StrCat(path, "-wal")}) {
    if (std::filesystem::exists(file)) bytes += static_cast<int64_t>(std::filesystem::file_size(file));
  }
  return bytes;
}

// A distinct pod refused by every one of 5,000 nodes (its own refusal, so nothing folds it), through the
// extender's record builder.
Record RefusedEverywhere(int pod) {
  std::vector<Candidate> nodes(5'000);
  for (size_t n = 0; n < nodes.size(); ++n) {
    nodes[n].name = absl::StrCat("gpu-node-", n);
    nodes[n].reason = Reason::kMinLink;
    nodes[n].unresolvable = true;
    nodes[n].requested = 4;
    nodes[n].available = 1;
    nodes[n].free_gpus = 4;
    nodes[n].topology = TopologyDetail{"0,1,4,5", "SYS", 12'000};
  }
  const std::string uid = absl::StrCat("uid-flood-", pod);
  return FilterRecord(kT0 + absl::Seconds(pod), {uid, absl::StrCat("flood/p", pod)}, 8, std::move(nodes));
}

TEST_CASE("a flood of distinct refused pods over 5,000 nodes keeps the file and its WAL under the byte cap",
          "[history]") {
  ScratchDir dir("history-store-bytes");
  const std::string path = dir.path("decisions.db");
  auto store = DecisionStore::Open(path, {.max_bytes = kMinMaxBytes});
  REQUIRE_OK(store);
  std::atomic<int64_t> evicted_by_bytes{0};
  std::atomic<int64_t> reported_bytes{0};
  int64_t largest = 0;
  {
    AsyncRecorder recorder(**store, {.writer_nice = 0},
                           {.on_evicted = [&](const Evictions& e) { evicted_by_bytes += e.by_bytes; },
                            .on_bytes = [&](int64_t bytes) { reported_bytes = bytes; }});
    // 400 records of about 0.9 MB: some 11 times the cap, queued as fast as a flooded extender would.
    for (int pod = 0; pod < 400; ++pod) {
      recorder.Record(RefusedEverywhere(pod));
      if (pod % 20 == 19) {
        recorder.Flush();
        largest = std::max(largest, FileBytes(path));
        CHECK(reported_bytes == FileBytes(path));
      }
    }
  }
  INFO("largest " << largest << " bytes, cap " << kMinMaxBytes);
  CHECK(largest <= kMinMaxBytes);
  CHECK(largest > kMinMaxBytes / 4);  // the records did fill it: the flood was not dropped
  CHECK(evicted_by_bytes > 0);
  // Oldest first: what is left is the newest pods', up to the last one.
  auto page = (*store)->Query({.limit = 1000});
  REQUIRE_OK(page);
  REQUIRE_FALSE(page->records.empty());
  CHECK(page->records.front().correlation_id == "uid-flood-399");
  CHECK(page->records.back().id == 400 - static_cast<int64_t>(page->records.size()) + 1);
  CHECK(evicted_by_bytes == 400 - static_cast<int64_t>(page->records.size()));
}

TEST_CASE("a lowered byte cap evicts the oldest and gives the free pages back to the file system", "[history]") {
  ScratchDir dir("history-store-lowered");
  const std::string path = dir.path("decisions.db");
  {
    auto store = DecisionStore::Open(path, {.max_bytes = 8 * kMinMaxBytes});
    REQUIRE_OK(store);
    for (int pod = 0; pod < 100; ++pod) REQUIRE_OK((*store)->Append({RefusedEverywhere(pod)}));
    auto evicted = (*store)->Retain(kT0 + absl::Seconds(100));
    REQUIRE_OK(evicted);
    REQUIRE(evicted->by_bytes == 0);  // some 90 MB, within half of 256 MiB
  }
  REQUIRE(FileBytes(path) > 2 * kMinMaxBytes);
  auto store = DecisionStore::Open(path, {.max_bytes = kMinMaxBytes});
  REQUIRE_OK(store);
  auto evicted = (*store)->Retain(kT0 + absl::Seconds(100));
  REQUIRE_OK(evicted);
  CHECK(evicted->by_bytes > 60);  // at most half of 32 MiB kept: some 18 records
  CHECK(evicted->by_rows == 0);
  CHECK(*(*store)->Bytes() <= kMinMaxBytes);
  CHECK(FileBytes(path) <= kMinMaxBytes);
  CHECK_STATUS(DecisionStore::Open(path, {.max_bytes = kMinMaxBytes - 1}), absl::StatusCode::kInvalidArgument,
               "max_bytes must be at least 32 MiB");
}

TEST_CASE("a file database is in WAL mode and keeps its records across a reopen", "[history]") {
  ScratchDir dir("history-store");
  const std::string path = dir.path("decisions.db");
  {
    auto store = DecisionStore::Open(path);
    REQUIRE_OK(store);
    REQUIRE_OK((*store)->Append(Refusals(0, 5)));
  }
  CHECK(SqlInt(path, "SELECT COUNT(*) FROM decisions") == 5);  // what the sqlite3 shell would read
  auto reopened = DecisionStore::Open(path);
  REQUIRE_OK(reopened);
  CHECK(*(*reopened)->Count() == 5);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))) == "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_CASE("a writer killed mid-transaction loses only that transaction", "[history]") {
  ScratchDir dir("history-crash");
  const std::string path = dir.path("decisions.db");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child commits 5 records, then dies inside a large transaction whose pages went to the WAL.
    auto store = DecisionStore::Open(path);
    if (!store.ok() || !(*store)->Append(Refusals(0, 5)).ok()) ::_exit(2);
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) ::_exit(3);
    sqlite3_exec(db, "PRAGMA cache_size = 1", nullptr, nullptr, nullptr);  // spill to the WAL early
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (int i = 0; i < 2000; ++i) {
      sqlite3_exec(db,
                   "INSERT INTO decisions(time_us, component, kind, reason, correlation_id, node, node_group, "
                   "provisioning_request, gpus, candidates) VALUES (0,'extender','filter','fits','u','n','g','',1,"
                   "'[]')",
                   nullptr, nullptr, nullptr);
    }
    ::_exit(0);  // no COMMIT, no close: as a crash leaves it
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  auto store = DecisionStore::Open(path);
  REQUIRE_OK(store);
  CHECK(*(*store)->Count() == 5);
  REQUIRE_OK((*store)->Append(Refusals(5, 7)));
  auto page = (*store)->Query({});
  REQUIRE_OK(page);
  CHECK(Ids(*page) == std::vector<int64_t>{7, 6, 5, 4, 3, 2, 1});
  CHECK(SqlInt(path, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'") == 1);
}

// The file may come from elsewhere (topofit explain --db), and the candidates hold what refused pods carried:
// their text is bounded before a document is built from it, and beyond the limits reads as no candidates.
TEST_CASE("candidates beyond the JSON limits read as none, and the rest of the record as written", "[history]") {
  ScratchDir dir("history-hostile");
  const std::string path = dir.path("decisions.db");
  {
    auto store = DecisionStore::Open(path);
    REQUIRE_OK(store);
    REQUIRE_OK((*store)->Append(Refusals(0, 2)));
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const std::string deep = absl::StrCat(
      "[", topofit::testing::WithRawMember({{"name", "n1"}, {"reason", "min-link"}}, "x",
                                           topofit::testing::NestedArrays(100'000)), "]");
  SqlExec(db, absl::StrCat("UPDATE decisions SET candidates = '", deep, "' WHERE id = 2"));
  sqlite3_close(db);
  auto reader = DecisionStore::OpenForReading(path);
  REQUIRE_OK(reader);
  auto page = (*reader)->Query({});
  REQUIRE_OK(page);
  REQUIRE(Ids(*page) == std::vector<int64_t>{2, 1});
  CHECK(page->records[0].candidates.empty());
  CHECK(page->records[0].node == "n1");
  CHECK(page->records[1].candidates.size() == 1);
}

TEST_CASE("a file that is not a database is reported and left as it was", "[history]") {
  ScratchDir dir("history-corrupt");
  const std::string garbage(8192, 'x');
  dir.Write("decisions.db", garbage);
  CHECK_STATUS(DecisionStore::Open(dir.path("decisions.db")), absl::StatusCode::kDataLoss,
               absl::StrCat("decision database ", dir.path("decisions.db")));
  std::ifstream in(dir.path("decisions.db"));
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == garbage);
}

TEST_CASE("a database another writer holds locked is reported as unavailable", "[history]") {
  ScratchDir dir("history-locked");
  const std::string path = dir.path("decisions.db");
  REQUIRE_OK(DecisionStore::Open(path));
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  SqlExec(other, "BEGIN EXCLUSIVE");
  CHECK_STATUS(DecisionStore::Open(path), absl::StatusCode::kUnavailable, "locked");
  SqlExec(other, "ROLLBACK");
  sqlite3_close(other);
  REQUIRE_OK(DecisionStore::Open(path));
}

TEST_CASE("a version-1 database is migrated step by step to the current version with its records", "[history]") {
  ScratchDir dir("history-migrate");
  const std::string path = dir.path("decisions.db");
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  // Schema version 1 as it shipped: the two tables, no indexes.
  SqlExec(db,
          "CREATE TABLE decisions(id INTEGER PRIMARY KEY, time_us INTEGER NOT NULL, component TEXT NOT NULL, "
          "kind TEXT NOT NULL, reason TEXT NOT NULL, correlation_id TEXT NOT NULL, node TEXT NOT NULL, node_group "
          "TEXT NOT NULL, provisioning_request TEXT NOT NULL, gpus INTEGER NOT NULL, candidates TEXT NOT NULL);"
          "CREATE TABLE decision_pods(decision_id INTEGER NOT NULL, uid TEXT NOT NULL, pod TEXT NOT NULL);"
          "INSERT INTO decisions VALUES (1, 1750000000000000, 'expander', 'ranking', 'chosen', '', '', 'p5-a', '', "
          "8, '[{\"name\":\"p5-a\",\"reason\":\"chosen\",\"qualityPerMille\":1000}]');"
          "INSERT INTO decision_pods VALUES (1, 'uid-7', 'ml/train-7');"
          "PRAGMA user_version = 1;");
  sqlite3_close(db);

  auto store = DecisionStore::Open(path);
  REQUIRE_OK(store);
  CHECK((*store)->schema_version() == DecisionStore::kSchemaVersion);
  CHECK(SqlInt(path, "PRAGMA user_version") == DecisionStore::kSchemaVersion);
  CHECK((*store)->clock() == RecordClock::kWall);
  CHECK(SqlInt(path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'decision%'") == 7);
  auto page = (*store)->Query({.pod = "ml/train-7"});
  REQUIRE_OK(page);
  REQUIRE(page->records.size() == 1);
  const Record& r = page->records.front();
  CHECK(r.kind == Kind::kRanking);
  CHECK(r.node_group == "p5-a");
  REQUIRE(r.candidates.size() == 1);
  CHECK(r.candidates[0].quality_per_mille == 1000);
  CHECK(r.pods == std::vector<PodSubject>{{"uid-7", "ml/train-7"}});
  CHECK(r.repeats == 0);  // version 3's column, for a record written before it

  Record folded = r;
  folded.repeats = 4;
  REQUIRE_OK((*store)->Append({folded}));
  auto newest = (*store)->Query({.limit = 1});
  REQUIRE_OK(newest);
  CHECK(newest->records.front().repeats == 4);
}

TEST_CASE("a database from a newer build is refused, not downgraded", "[history]") {
  ScratchDir dir("history-newer");
  const std::string path = dir.path("decisions.db");
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  SqlExec(db, "PRAGMA user_version = 9");
  sqlite3_close(db);
  CHECK_STATUS(DecisionStore::Open(path), absl::StatusCode::kFailedPrecondition, "schema version 9 is newer");
  CHECK(SqlInt(path, "PRAGMA user_version") == 9);
}

TEST_CASE("a reader opens a database read-only, and refuses a missing file instead of creating one", "[history]") {
  ScratchDir dir("history-reader");
  const std::string path = dir.path("decisions.db");
  CHECK_STATUS(DecisionStore::OpenForReading(path), absl::StatusCode::kNotFound, "no decision database there");
  CHECK_FALSE(std::filesystem::exists(path));
  {
    auto writer = DecisionStore::Open(path);
    REQUIRE_OK(writer);
    REQUIRE_OK((*writer)->Append(Refusals(0, 3)));
  }
  auto reader = DecisionStore::OpenForReading(path);
  REQUIRE_OK(reader);
  CHECK(*(*reader)->Count() == 3);
  auto page = (*reader)->Query({});
  REQUIRE_OK(page);
  CHECK(Ids(*page) == std::vector<int64_t>{3, 2, 1});
  CHECK_FALSE((*reader)->Append(Refusals(3, 4)).ok());  // read-only: nothing written
  CHECK(SqlInt(path, "SELECT COUNT(*) FROM decisions") == 3);

  dir.Write("garbage.db", std::string(8192, 'x'));
  CHECK_STATUS(DecisionStore::OpenForReading(dir.path("garbage.db")), absl::StatusCode::kDataLoss, "garbage.db");
}

TEST_CASE("a reader refuses a database of another schema version without migrating it", "[history]") {
  ScratchDir dir("history-reader-version");
  const std::string path = dir.path("decisions.db");
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  SqlExec(db, "CREATE TABLE t(x); PRAGMA user_version = 1");
  sqlite3_close(db);
  CHECK_STATUS(DecisionStore::OpenForReading(path), absl::StatusCode::kFailedPrecondition,
               "schema version 1 is older than this build's 6");
  CHECK(SqlInt(path, "PRAGMA user_version") == 1);
}

TEST_CASE("a replay's database says its clock is the replay's, to its readers and in every page", "[history]") {
  ScratchDir dir("history-clock");
  const std::string path = dir.path("decisions.db");
  {
    auto writer = DecisionStore::Open(path);
    REQUIRE_OK(writer);
    REQUIRE_OK((*writer)->Append(Refusals(0, 2)));
    auto page = (*writer)->Query({});
    REQUIRE_OK(page);
    CHECK(page->clock == RecordClock::kWall);
    REQUIRE_OK((*writer)->MarkReplayClock());
    CHECK((*writer)->clock() == RecordClock::kReplay);
  }
  auto reader = DecisionStore::OpenForReading(path);
  REQUIRE_OK(reader);
  CHECK((*reader)->clock() == RecordClock::kReplay);
  auto page = (*reader)->Query({});
  REQUIRE_OK(page);
  CHECK(page->clock == RecordClock::kReplay);
}

}  // namespace
}  // namespace topofit::history
