#include "history/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codec/bounded_json.h"
#include "history/record_json.h"

namespace topofit::history {
namespace {

// Step i takes the schema from version i to i + 1. Never edit a step that has shipped: add one.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the records and the pods they concern.
    "CREATE TABLE decisions("
    "  id INTEGER PRIMARY KEY,"
    "  time_us INTEGER NOT NULL,"
    "  component TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  reason TEXT NOT NULL,"
    "  correlation_id TEXT NOT NULL,"
    "  node TEXT NOT NULL,"
    "  node_group TEXT NOT NULL,"
    "  provisioning_request TEXT NOT NULL,"
    "  gpus INTEGER NOT NULL,"
    "  candidates TEXT NOT NULL);"
    "CREATE TABLE decision_pods("
    "  decision_id INTEGER NOT NULL,"
    "  uid TEXT NOT NULL,"
    "  pod TEXT NOT NULL);",
    // 1 -> 2: the node groups a ranking weighed besides the one it chose (explain group: why not), and the
    // indexes GET /decisions and explain read by, and time for retention.
    "CREATE TABLE decision_groups("
    "  decision_id INTEGER NOT NULL,"
    "  node_group TEXT NOT NULL);"
    "CREATE INDEX decision_groups_group ON decision_groups(node_group, decision_id);"
    "CREATE INDEX decisions_time ON decisions(time_us);"
    "CREATE INDEX decisions_group ON decisions(node_group, id);"
    "CREATE INDEX decisions_node ON decisions(node, id);"
    "CREATE INDEX decision_pods_pod ON decision_pods(pod, decision_id);"
    "CREATE INDEX decision_pods_uid ON decision_pods(uid, decision_id);"
    "CREATE INDEX decision_pods_decision ON decision_pods(decision_id);",
    // 2 -> 3: a filter record's count of identical refusals folded into the pod's previous one.
    "ALTER TABLE decisions ADD COLUMN repeats INTEGER NOT NULL DEFAULT 0;",
    // 3 -> 4: facts about the database itself; `clock` = `replay` when a replay wrote it (record times count
    // from the replay's start, not the wall clock).
    "CREATE TABLE store_info(key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    // 4 -> 5: the gang a gang record is about.
    "ALTER TABLE decisions ADD COLUMN gang TEXT NOT NULL DEFAULT '';",
    // 5 -> 6: what a restart record holds beyond the common columns (RestartDetailToJson), '' for the rest;
    // a headroom record's HeadroomDetailToJson since (no schema change: the column holds JSON).
    "ALTER TABLE decisions ADD COLUMN detail TEXT NOT NULL DEFAULT '';",
};
static_assert(std::size(kMigrations) == DecisionStore::kSchemaVersion);

// How long a write waits for another connection's lock (the sqlite3 shell, a second process) before failing;
// writes run on the writer thread, never on a request's path.
constexpr int kBusyTimeoutMs = 200;

absl::Status SqliteError(sqlite3* db, int code, absl::string_view what) {
  const std::string message = absl::StrCat(what, ": ", db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code));
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(message);
    default:
      return absl::InternalError(message);
  }
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    code_ = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  absl::Status status() const { return code_ == SQLITE_OK ? absl::OkStatus() : SqliteError(db_, code_, "prepare"); }
  void Bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }
  void Bind(int i, const std::string& value) {
    sqlite3_bind_text(stmt_, i, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, absl::string_view value) {
    sqlite3_bind_text(stmt_, i, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::string Text(int column) const {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text),
                                                         static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int code_;
};

absl::Status ExecOn(sqlite3* db, const char* sql, absl::string_view what) {
  const int code = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  return code == SQLITE_OK ? absl::OkStatus() : SqliteError(db, code, what);
}

absl::StatusOr<int64_t> SingleInt(sqlite3* db, const std::string& sql, absl::string_view what) {
  Statement stmt(db, sql);
  if (!stmt.status().ok()) return SqliteError(db, sqlite3_errcode(db), what);
  const int code = stmt.Step();
  if (code != SQLITE_ROW) return SqliteError(db, code, what);
  return stmt.Int(0);
}

// Brings the schema to kSchemaVersion in one write transaction; a locked database fails here, at start.
absl::StatusOr<int> Migrate(sqlite3* db) {
  if (absl::Status begun = ExecOn(db, "BEGIN IMMEDIATE", "locking the database"); !begun.ok()) return begun;
  absl::StatusOr<int64_t> version = SingleInt(db, "PRAGMA user_version", "reading the schema version");
  absl::Status status = version.status();
  if (status.ok() && *version > DecisionStore::kSchemaVersion) {
    status = absl::FailedPreconditionError(absl::StrCat("schema version ", *version, " is newer than this build's ",
                                                        DecisionStore::kSchemaVersion));
  }
  for (int64_t v = version.ok() ? *version : 0; status.ok() && v < DecisionStore::kSchemaVersion; ++v) {
    status = ExecOn(db, kMigrations[v], absl::StrCat("migrating the schema from version ", v));
  }
  if (status.ok()) {
    status = ExecOn(db, absl::StrCat("PRAGMA user_version = ", DecisionStore::kSchemaVersion).c_str(),
                    "writing the schema version");
  }
  if (!status.ok()) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  if (absl::Status committed = ExecOn(db, "COMMIT", "committing the schema"); !committed.ok()) return committed;
  return DecisionStore::kSchemaVersion;
}

absl::Status Prefixed(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("decision database ", path.empty() ? ":memory:" : path, ": ",
                                                  status.message()));
}

Record RowToRecord(const Statement& row) {
  Record r;
  r.id = row.Int(0);
  r.time = absl::FromUnixMicros(row.Int(1));
  // The codes were written by this store from the enums; a row another writer garbled reads as defaults.
  r.component = ParseComponent(row.Text(2)).value_or(Component::kExtender);
  r.kind = ParseKind(row.Text(3)).value_or(Kind::kFilter);
  r.reason = ParseReason(row.Text(4)).value_or(Reason::kFits);
  r.correlation_id = row.Text(5);
  r.node = row.Text(6);
  r.node_group = row.Text(7);
  r.provisioning_request = row.Text(8);
  r.gpus = static_cast<int>(row.Int(9));
  // Bounded like any input (codec/json_limits.h): the file may come from elsewhere (--db), and what this
  // store wrote holds names and reasons from pods it refused. Text beyond the limits reads as none.
  const absl::StatusOr<nlohmann::json> candidates =
      codec::ParseBoundedJson(row.Text(10), codec::kObjectJsonLimits, "candidates");
  r.candidates = candidates.ok() ? CandidatesFromJson(*candidates).value_or(std::vector<Candidate>{})
                                 : std::vector<Candidate>{};
  r.repeats = row.Int(11);
  r.gang = row.Text(12);
  if (r.kind == Kind::kRestart || r.kind == Kind::kHeadroom) {
    const absl::StatusOr<nlohmann::json> detail = codec::ParseBoundedJson(row.Text(13), codec::kObjectJsonLimits, "detail");
    if (detail.ok() && r.kind == Kind::kRestart) {
      if (absl::StatusOr<RestartDetail> restart = RestartDetailFromJson(*detail); restart.ok()) r.restart = *std::move(restart);
    } else if (detail.ok()) {
      if (absl::StatusOr<HeadroomDetail> headroom = HeadroomDetailFromJson(*detail); headroom.ok()) {
        r.headroom = *std::move(headroom);
      }
    }
  }
  return r;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DecisionStore>> DecisionStore::Open(const std::string& path, Retention retention,
                                                                    int64_t cache_kib) {
  if (retention.max_rows <= 0) return absl::InvalidArgumentError("retention: max_rows must be positive");
  if (retention.max_age <= absl::ZeroDuration()) return absl::InvalidArgumentError("retention: max_age must be positive");
  if (retention.max_bytes < kMinMaxBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("retention: max_bytes must be at least ", kMinMaxBytes >> 20, " MiB, not ", retention.max_bytes));
  }
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  const int opened = sqlite3_open_v2(path.empty() ? ":memory:" : path.c_str(), &db, flags, nullptr);
  if (opened != SQLITE_OK) {
    absl::Status status = SqliteError(db, opened, "opening");
    sqlite3_close(db);
    return Prefixed(path, status);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // Before the first table exists (a database made by an older build keeps its mode): free pages can be
  // given back to the file system when the byte cap is lowered (Retain).
  absl::Status status = ExecOn(db, "PRAGMA auto_vacuum = INCREMENTAL", "enabling incremental vacuum");
  // WAL on a file (a crash loses only the transaction in flight); NORMAL sync is durable across a process
  // crash in WAL mode, and the history is not worth an fsync per batch against power loss. The WAL is
  // checkpointed, and its file truncated, at kWalBytes.
  if (status.ok() && !path.empty()) status = ExecOn(db, "PRAGMA journal_mode = WAL", "enabling WAL");
  if (status.ok() && !path.empty()) {
    status = ExecOn(db, absl::StrCat("PRAGMA journal_size_limit = ", kWalBytes).c_str(), "limiting the WAL");
  }
  absl::StatusOr<int64_t> page_size = status.ok() ? SingleInt(db, "PRAGMA page_size", "reading the page size")
                                                  : absl::StatusOr<int64_t>(status);
  status = page_size.status();
  if (status.ok() && !path.empty()) {
    status = ExecOn(db, absl::StrCat("PRAGMA wal_autocheckpoint = ", kWalBytes / *page_size).c_str(),
                    "setting the WAL's checkpoint");
  }
  if (status.ok()) status = ExecOn(db, "PRAGMA synchronous = NORMAL", "setting synchronous");
  if (status.ok()) {
    status = ExecOn(db, absl::StrCat("PRAGMA cache_size = -", cache_kib).c_str(), "setting the cache size");
  }
  absl::StatusOr<int> version = status.ok() ? Migrate(db) : absl::StatusOr<int>(status);
  if (!version.ok()) {
    sqlite3_close(db);
    return Prefixed(path, version.status());
  }
  return std::unique_ptr<DecisionStore>(new DecisionStore(db, path, retention, *version));
}

absl::StatusOr<std::unique_ptr<DecisionStore>> DecisionStore::OpenForReading(const std::string& path) {
  std::error_code error;
  if (path.empty() || !std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat(path, ": no decision database there (a server's or topofit bench's ",
                                            "--decision-db writes one)"));
  }
  sqlite3* db = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, nullptr);
  absl::StatusOr<int64_t> version = opened == SQLITE_OK ? SingleInt(db, "PRAGMA user_version", "reading the schema version")
                                                        : SqliteError(db, opened, "opening");
  if (version.ok() && *version != kSchemaVersion) {
    version = absl::FailedPreconditionError(
        *version > kSchemaVersion
            ? absl::StrCat("schema version ", *version, " is newer than this build's ", kSchemaVersion)
            : absl::StrCat("schema version ", *version, " is older than this build's ", kSchemaVersion,
                           ": a server's --decision-db migrates it when it opens it"));
  }
  if (!version.ok()) {
    sqlite3_close(db);
    return Prefixed(path, version.status());
  }
  auto store = std::unique_ptr<DecisionStore>(new DecisionStore(db, path, Retention{}, kSchemaVersion));
  Statement clock(db, "SELECT value FROM store_info WHERE key = 'clock'");
  if (!clock.status().ok()) return Prefixed(path, clock.status());
  const int code = clock.Step();
  if (code == SQLITE_ROW) {
    store->clock_ = clock.Text(0) == "replay" ? RecordClock::kReplay : RecordClock::kWall;
  } else if (code != SQLITE_DONE) {
    return Prefixed(path, SqliteError(db, code, "reading the store's clock"));
  }
  return store;
}

absl::Status DecisionStore::MarkReplayClock() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status = Exec("INSERT OR REPLACE INTO store_info(key, value) VALUES ('clock', 'replay')");
  if (status.ok()) clock_ = RecordClock::kReplay;
  return status;
}

DecisionStore::DecisionStore(sqlite3* db, std::string path, Retention retention, int schema_version)
    : db_(db), path_(std::move(path)), retention_(retention), schema_version_(schema_version) {}

DecisionStore::~DecisionStore() { sqlite3_close(db_); }

absl::Status DecisionStore::Exec(const char* sql) const { return ExecOn(db_, sql, sql); }

absl::Status DecisionStore::Append(const std::vector<Record>& records) {
  if (records.empty()) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status begun = Exec("BEGIN IMMEDIATE"); !begun.ok()) return begun;
  Statement decision(db_,
                     "INSERT INTO decisions(time_us, component, kind, reason, correlation_id, node, node_group, "
                     "provisioning_request, gpus, candidates, repeats, gang, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  Statement pod(db_, "INSERT INTO decision_pods(decision_id, uid, pod) VALUES (?,?,?)");
  Statement group(db_, "INSERT INTO decision_groups(decision_id, node_group) VALUES (?,?)");
  absl::Status status = !decision.status().ok() ? decision.status() : !pod.status().ok() ? pod.status() : group.status();
  for (size_t i = 0; status.ok() && i < records.size(); ++i) {
    const Record& r = records[i];
    decision.Bind(1, absl::ToUnixMicros(r.time));
    decision.Bind(2, ComponentName(r.component));
    decision.Bind(3, KindName(r.kind));
    decision.Bind(4, ReasonName(r.reason));
    decision.Bind(5, r.correlation_id);
    decision.Bind(6, r.node);
    decision.Bind(7, r.node_group);
    decision.Bind(8, r.provisioning_request);
    decision.Bind(9, static_cast<int64_t>(r.gpus));
    decision.Bind(10, CandidatesJson(r.candidates));
    decision.Bind(11, r.repeats);
    decision.Bind(12, r.gang);
    decision.Bind(13, r.restart    ? RestartDetailToJson(*r.restart).dump()
                      : r.headroom ? HeadroomDetailToJson(*r.headroom).dump()
                                   : std::string());
    if (const int code = decision.Step(); code != SQLITE_DONE) {
      status = SqliteError(db_, code, "writing a decision");
      break;
    }
    decision.Reset();
    const int64_t id = sqlite3_last_insert_rowid(db_);
    for (const PodSubject& subject : r.pods) {
      pod.Bind(1, id);
      pod.Bind(2, subject.uid);
      pod.Bind(3, subject.key);
      if (const int code = pod.Step(); code != SQLITE_DONE) {
        status = SqliteError(db_, code, "writing a decision's pods");
        break;
      }
      pod.Reset();
    }
    // A ranking's candidates are node groups; the chosen one is the record's own.
    for (size_t c = 0; status.ok() && r.kind == Kind::kRanking && c < r.candidates.size(); ++c) {
      if (r.candidates[c].name == r.node_group) continue;
      group.Bind(1, id);
      group.Bind(2, r.candidates[c].name);
      if (const int code = group.Step(); code != SQLITE_DONE) {
        status = SqliteError(db_, code, "writing a ranking's node groups");
        break;
      }
      group.Reset();
    }
  }
  if (status.ok()) status = Exec("COMMIT");
  if (!status.ok()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return status;
}

absl::StatusOr<Evictions> DecisionStore::Retain(absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  Evictions evicted;
  // Records only ever leave from the oldest end, so ids stay contiguous: the newest max_rows are the ids
  // above max(id) - max_rows, and everything up to the newest id past its age can go.
  absl::StatusOr<int64_t> newest = SingleInt(db_, "SELECT IFNULL(MAX(id), 0) FROM decisions", "retention");
  if (!newest.ok()) return newest.status();
  absl::StatusOr<int64_t> aged = SingleInt(
      db_,
      absl::StrCat("SELECT IFNULL(MAX(id), 0) FROM decisions WHERE time_us < ",
                   absl::ToUnixMicros(now - retention_.max_age)),
      "retention");
  if (!aged.ok()) return aged.status();
  const int64_t by_rows_cutoff = *newest - retention_.max_rows;
  for (auto [cutoff, counter] : {std::pair{*aged, &evicted.by_age}, std::pair{by_rows_cutoff, &evicted.by_rows}}) {
    if (cutoff <= 0) continue;
    absl::StatusOr<int64_t> deleted = EvictThrough(cutoff);
    if (!deleted.ok()) return deleted.status();
    *counter = *deleted;
  }
  absl::StatusOr<int64_t> by_bytes = EvictByBytes();
  if (!by_bytes.ok()) return by_bytes.status();
  evicted.by_bytes = *by_bytes;
  return evicted;
}

absl::StatusOr<int64_t> DecisionStore::EvictThrough(int64_t cutoff) {
  if (absl::Status begun = Exec("BEGIN IMMEDIATE"); !begun.ok()) return begun;
  absl::Status status = ExecOn(db_, absl::StrCat("DELETE FROM decisions WHERE id <= ", cutoff).c_str(), "retention");
  const int64_t deleted = sqlite3_changes(db_);
  for (const char* table : {"decision_pods", "decision_groups"}) {
    if (!status.ok()) break;
    status = ExecOn(db_, absl::StrCat("DELETE FROM ", table, " WHERE decision_id <= ", cutoff).c_str(), "retention");
  }
  if (status.ok()) status = Exec("COMMIT");
  if (!status.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  }
  return deleted;
}

absl::StatusOr<int64_t> DecisionStore::EvictByBytes() {
  // The records' pages (free ones are reused before the file grows) are kept within half the cap; the file
  // then grows past that by at most a batch, and the WAL by kWalBytes and a batch.
  const int64_t kept = retention_.max_bytes / 2;
  int64_t evicted = 0;
  absl::StatusOr<int64_t> page_size = SingleInt(db_, "PRAGMA page_size", "retention");
  if (!page_size.ok()) return page_size.status();
  for (;;) {
    absl::StatusOr<int64_t> pages = SingleInt(db_, "PRAGMA page_count", "retention");
    if (!pages.ok()) return pages.status();
    absl::StatusOr<int64_t> free_pages = SingleInt(db_, "PRAGMA freelist_count", "retention");
    if (!free_pages.ok()) return free_pages.status();
    const int64_t used = (*pages - *free_pages) * *page_size;
    if (used <= kept) {
      // The file holds more pages than the cap lets it grow to (it was lowered): give the free ones back.
      // Only a database created with auto_vacuum incremental (2) can; another keeps its pages for reuse.
      const int64_t excess = std::min(*free_pages, *pages - (kept + retention_.max_bytes / 8) / *page_size);
      if (excess <= 0) return evicted;
      absl::StatusOr<int64_t> vacuum = SingleInt(db_, "PRAGMA auto_vacuum", "retention");
      if (!vacuum.ok()) return vacuum.status();
      if (*vacuum != 2) return evicted;
      absl::Status status = Exec(absl::StrCat("PRAGMA incremental_vacuum(", excess, ")").c_str());
      // In WAL mode the file shrinks when the WAL is checkpointed into it; the WAL then goes too.
      if (status.ok() && !path_.empty()) status = Exec("PRAGMA wal_checkpoint(TRUNCATE)");
      if (!status.ok()) return status;
      return evicted;
    }
    absl::StatusOr<int64_t> oldest = SingleInt(db_, "SELECT IFNULL(MIN(id), 0) FROM decisions", "retention");
    if (!oldest.ok()) return oldest.status();
    absl::StatusOr<int64_t> newest = SingleInt(db_, "SELECT IFNULL(MAX(id), 0) FROM decisions", "retention");
    if (!newest.ok()) return newest.status();
    if (*newest == 0) return evicted;  // nothing left but the schema
    // The oldest records' share of the excess, as if records were of a size; smaller ones go round again.
    const int64_t rows = *newest - *oldest + 1;
    const auto share = static_cast<int64_t>(std::ceil(static_cast<double>(rows) * static_cast<double>(used - kept) /
                                                      static_cast<double>(used)));
    absl::StatusOr<int64_t> deleted = EvictThrough(*oldest + std::max<int64_t>(share, 1) - 1);
    if (!deleted.ok()) return deleted.status();
    evicted += *deleted;
  }
}

absl::StatusOr<int64_t> DecisionStore::Bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (path_.empty()) {
    absl::StatusOr<int64_t> pages = SingleInt(db_, "PRAGMA page_count", "measuring the database");
    if (!pages.ok()) return pages.status();
    absl::StatusOr<int64_t> page_size = SingleInt(db_, "PRAGMA page_size", "measuring the database");
    if (!page_size.ok()) return page_size.status();
    return *pages * *page_size;
  }
  int64_t bytes = 0;
  for (const std::string& file : {path_, path_ + "-wal"}) {
    std::error_code error;
    const uintmax_t size = std::filesystem::file_size(file, error);
    if (!error) bytes += static_cast<int64_t>(size);  // no WAL yet: nothing
  }
  return bytes;
}

absl::StatusOr<DecisionPage> DecisionStore::Query(const DecisionQuery& query) const {
  if (query.limit < 1 || query.limit > kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("limit ", query.limit, " is outside 1..", kMaxPageSize));
  }
  if (query.before_id < 0) return absl::InvalidArgumentError("the cursor is negative");
  std::string sql =
      "SELECT d.id, d.time_us, d.component, d.kind, d.reason, d.correlation_id, d.node, d.node_group, "
      "d.provisioning_request, d.gpus, d.candidates, d.repeats, d.gang, d.detail FROM decisions d WHERE 1";
  std::vector<std::string> texts;
  std::vector<int64_t> ints;
  std::vector<std::pair<bool, size_t>> binds;  // (text?, index)
  auto text = [&](const std::string& value) {
    texts.push_back(value);
    binds.emplace_back(true, texts.size() - 1);
  };
  auto integer = [&](int64_t value) {
    ints.push_back(value);
    binds.emplace_back(false, ints.size() - 1);
  };
  if (!query.pod.empty()) {
    sql += " AND d.id IN (SELECT decision_id FROM decision_pods WHERE pod = ?)";
    text(query.pod);
  }
  if (!query.pod_uid.empty()) {
    sql += " AND d.id IN (SELECT decision_id FROM decision_pods WHERE uid = ?)";
    text(query.pod_uid);
  }
  if (!query.node_group.empty()) {
    sql += " AND (d.node_group = ? OR d.id IN (SELECT decision_id FROM decision_groups WHERE node_group = ?))";
    text(query.node_group);
    text(query.node_group);
  }
  if (!query.node.empty()) {
    sql += " AND d.node = ?";
    text(query.node);
  }
  if (query.kind) {
    sql += " AND d.kind = ?";
    text(std::string(KindName(*query.kind)));
  }
  if (query.since) {
    sql += " AND d.time_us >= ?";
    integer(absl::ToUnixMicros(*query.since));
  }
  if (query.before_id > 0) {
    sql += " AND d.id < ?";
    integer(query.before_id);
  }
  sql += " ORDER BY d.id DESC LIMIT ?";
  integer(query.limit + 1);  // one more: is there a next page?

  std::lock_guard<std::mutex> lock(mu_);
  Statement stmt(db_, sql);
  if (!stmt.status().ok()) return stmt.status();
  for (size_t i = 0; i < binds.size(); ++i) {
    if (binds[i].first) stmt.Bind(static_cast<int>(i + 1), texts[binds[i].second]);
    else stmt.Bind(static_cast<int>(i + 1), ints[binds[i].second]);
  }
  DecisionPage page;
  page.clock = clock_;
  int code;
  while ((code = stmt.Step()) == SQLITE_ROW) {
    if (page.records.size() == static_cast<size_t>(query.limit)) {
      page.next_before_id = page.records.back().id;
      break;
    }
    page.records.push_back(RowToRecord(stmt));
  }
  if (code != SQLITE_ROW && code != SQLITE_DONE) return SqliteError(db_, code, "reading decisions");
  Statement pods(db_, "SELECT uid, pod FROM decision_pods WHERE decision_id = ? ORDER BY rowid");
  if (!pods.status().ok()) return pods.status();
  for (Record& r : page.records) {
    pods.Bind(1, r.id);
    while ((code = pods.Step()) == SQLITE_ROW) r.pods.push_back({pods.Text(0), pods.Text(1)});
    if (code != SQLITE_DONE) return SqliteError(db_, code, "reading a decision's pods");
    pods.Reset();
  }
  return page;
}

absl::StatusOr<int64_t> DecisionStore::Count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return SingleInt(db_, "SELECT COUNT(*) FROM decisions", "counting decisions");
}

}  // namespace topofit::history
