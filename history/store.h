#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "history/record.h"

struct sqlite3;

namespace topofit::history {

// The byte cap's default (half the 1 GiB emptyDir the manifests give the database), and its least.
inline constexpr int64_t kDefaultMaxBytes = int64_t{512} << 20;
inline constexpr int64_t kMinMaxBytes = int64_t{32} << 20;

// How much history is kept: records older than `max_age` (against the newest record's time, so a replay
// keeps its own clock), all but the newest `max_rows`, and the oldest past `max_bytes` are evicted, oldest
// first.
struct Retention {
  absl::Duration max_age = absl::Hours(24 * 7);
  int64_t max_rows = 1'000'000;
  // The database's bytes on disk, its WAL included (in memory: its pages). Records fill at most half of it:
  // their pages are reused by later records before the file grows, and the rest is for the WAL (truncated
  // back to kWalBytes after each checkpoint) and the batch being written. At least kMinMaxBytes.
  int64_t max_bytes = kDefaultMaxBytes;
};
// The WAL grows past this only by the transaction in flight: SQLite checkpoints it back into the database
// there, and truncates the file to it.
inline constexpr int64_t kWalBytes = int64_t{4} << 20;

// SQLite's page cache, at most: its default (2 MiB) for a server; a replay writing a million records into
// indexes keyed by pod and uid reads pages back from the file with it, and is given more.
inline constexpr int64_t kDefaultCacheKib = 2048;

// A page of GET /decisions: newest first, narrowed by every field given.
struct DecisionQuery {
  std::string pod{};        // namespace/name: decisions about that pod (its chain)
  std::string pod_uid{};    // or by uid (the correlation id)
  std::string node_group{};  // decisions about that group, and rankings that weighed it
  std::string node{};
  std::optional<Kind> kind{};  // only decisions of this kind
  std::optional<absl::Time> since{};
  int limit = 100;             // 1..kMaxPageSize
  int64_t before_id = 0;       // the cursor: only records older than this id; 0 from the newest
};
inline constexpr int kMaxPageSize = 1000;

struct DecisionPage {
  std::vector<Record> records{};
  int64_t next_before_id = 0;  // 0 when this is the last page
  RecordClock clock = RecordClock::kWall;  // the store's (DecisionStore::clock)
};

// What a retention pass removed.
struct Evictions {
  int64_t by_age = 0;
  int64_t by_rows = 0;
  int64_t by_bytes = 0;
};

// The decision history in an embedded SQLite database: `decisions` (one row per record, its candidates as
// JSON), `decision_pods` (the pods each record concerns) and `decision_groups` (the node groups a ranking
// weighed and did not choose), indexed for the queries above. The schema's
// version is the database's user_version, and Open migrates an older one step by step. A file database runs
// in WAL mode, so a crash mid-write loses only the transaction in flight and readers (the sqlite3 shell)
// never block the writer. Thread-safe: one connection, one lock (writes come in batches from one writer
// thread; queries come from the ops port).
class DecisionStore {
 public:
  // The schema this build writes.
  static constexpr int kSchemaVersion = 6;

  // `path` empty: in memory. A file that is not a database, is locked by another writer or holds a newer
  // schema is an error naming it (the caller runs without history).
  static absl::StatusOr<std::unique_ptr<DecisionStore>> Open(const std::string& path, Retention retention = {},
                                                             int64_t cache_kib = kDefaultCacheKib);
  // For readers (`topofit explain --db`, `topofit mcp --db`): the file opened read-only, never created nor
  // migrated. A missing file, a file that is not a database, or one of another schema version is an
  // error naming it. Append and Retain fail on such a store.
  static absl::StatusOr<std::unique_ptr<DecisionStore>> OpenForReading(const std::string& path);
  ~DecisionStore();
  DecisionStore(const DecisionStore&) = delete;
  DecisionStore& operator=(const DecisionStore&) = delete;

  // Writes `records` in one transaction, in order; ids follow. All or none.
  absl::Status Append(const std::vector<Record>& records);
  // Evicts by age (older than `now` - max_age), by row count, and by bytes: the oldest records until those
  // left fill at most max_bytes / 2 of pages. A database file larger than that leaves room for (the cap
  // was lowered) gives its free pages back when it was created by this build (auto_vacuum incremental).
  absl::StatusOr<Evictions> Retain(absl::Time now);
  // The database's bytes: its file and WAL's, or its pages in memory.
  absl::StatusOr<int64_t> Bytes() const;

  absl::StatusOr<DecisionPage> Query(const DecisionQuery& query) const;
  absl::StatusOr<int64_t> Count() const;
  int schema_version() const { return schema_version_; }
  // A replay's store: its record times count from the replay's start (the Unix epoch), and explain tells
  // them so. Kept in the database, for the readers that open it later.
  absl::Status MarkReplayClock();
  // What OpenForReading found (kWall for a server's database), or MarkReplayClock set.
  RecordClock clock() const { return clock_; }

 private:
  DecisionStore(sqlite3* db, std::string path, Retention retention, int schema_version);
  absl::Status Exec(const char* sql) const;
  // Deletes the records with ids up to `cutoff` and their pods and groups, in one transaction.
  absl::StatusOr<int64_t> EvictThrough(int64_t cutoff);
  absl::StatusOr<int64_t> EvictByBytes();

  sqlite3* db_;
  const std::string path_;  // empty: in memory
  const Retention retention_;
  const int schema_version_;
  RecordClock clock_ = RecordClock::kWall;
  mutable std::mutex mu_;
};

}  // namespace topofit::history
