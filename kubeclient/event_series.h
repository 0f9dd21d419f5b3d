#pragma once

// Aggregation of Kubernetes Events as client-go's tools/events does it (event_broadcaster.go), over
// injected time so that it can be tested without waiting:
//
//   - Occurrences are alike when type, reason, action, reporting controller and instance and the regarding
//     object are (the note is not part of the key: the first one's stays).
//   - The first occurrence is created. The second turns it into a series (series.count 2,
//     series.lastObservedTime) and patches it at once; later ones only count in the cache.
//   - Tick: a series not observed for kFinishAfter (6 min) has its final count patched and is forgotten; a
//     single event that old is forgotten; a series whose last write is kHeartbeat (30 min) old is patched
//     again (its TTL in the API server is refreshed), as client-go's refreshExistingEventSeries does.
//
// Bounded: past `max_entries` the entry observed longest ago is forgotten (its uncounted repeats lost).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/time/time.h"
#include "history/pod_events.h"

namespace topofit::kubeclient {

inline constexpr absl::Duration kEventSeriesFinishAfter = absl::Minutes(6);
inline constexpr absl::Duration kEventSeriesHeartbeat = absl::Minutes(30);
inline constexpr char kReportingController[] = "topofit";

// One write to the API server: create `event`, or (a series) patch its series, creating it when the API
// server no longer has it.
struct EventWrite {
  bool series = false;
  nlohmann::json event;  // the whole events.k8s.io/v1 Event, with its series when it is one
};

// The Event's path: /apis/events.k8s.io/v1/namespaces/{ns}/events[/{name}], each segment escaped.
std::string EventsPath(const std::string& namespace_name);
std::string EventPath(const std::string& namespace_name, const std::string& name);

// The events.k8s.io/v1 Event for a pod event first observed at `time`: named "<pod>.<hex nanoseconds>"
// as client-go names them, eventTime in microseconds, regarding the pod (apiVersion v1, kind Pod, uid).
nlohmann::json EventObject(const history::PodEvent& event, const std::string& reporting_instance, absl::Time time);

class EventSeriesCache {
 public:
  explicit EventSeriesCache(std::string reporting_instance, size_t max_entries = 4096)
      : reporting_instance_(std::move(reporting_instance)), max_entries_(max_entries) {}

  // What to write for an occurrence at `now`; nothing when it only counted.
  std::optional<EventWrite> Observe(const history::PodEvent& event, absl::Time now);
  // Finished series and heartbeats due at `now`.
  std::vector<EventWrite> Tick(absl::Time now);
  size_t size() const { return entries_.size(); }

 private:
  using Key = std::tuple<history::PodEventKind, std::string, std::string, std::string>;  // kind, ns, name, uid
  struct Entry {
    nlohmann::json event;
    int32_t count = 1;
    int32_t written_count = 1;
    absl::Time last_observed;
    absl::Time last_written;
  };
  EventWrite SeriesWrite(Entry& entry, absl::Time now);
  void EvictOldest();

  const std::string reporting_instance_;
  const size_t max_entries_;
  std::map<Key, Entry> entries_;
};

}  // namespace topofit::kubeclient
