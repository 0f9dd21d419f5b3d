#include "kubeclient/event_series.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kubeclient/rest_client.h"

namespace topofit::kubeclient {
namespace {

// metav1.MicroTime: RFC 3339 with microseconds, in UTC.
std::string MicroTime(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone()); }

}  // namespace

std::string EventsPath(const std::string& namespace_name) {
  return absl::StrCat("/apis/events.k8s.io/v1/namespaces/", EscapePathSegment(namespace_name), "/events");
}

std::string EventPath(const std::string& namespace_name, const std::string& name) {
  return absl::StrCat(EventsPath(namespace_name), "/", EscapePathSegment(name));
}

nlohmann::json EventObject(const history::PodEvent& event, const std::string& reporting_instance, absl::Time time) {
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", absl::StrFormat("%s.%x", event.name, absl::ToUnixNanos(time))},
            {"namespace", event.namespace_name}}},
          {"eventTime", MicroTime(time)},
          {"reportingController", kReportingController},
          {"reportingInstance", reporting_instance},
          {"action", history::PodEventAction(event.kind)},
          {"reason", history::PodEventReason(event.kind)},
          {"type", history::IsWarning(event.kind) ? "Warning" : "Normal"},
          {"note", event.note},
          {"regarding",
           {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"namespace", event.namespace_name},
            {"name", event.name},
            {"uid", event.uid}}}};
}

EventWrite EventSeriesCache::SeriesWrite(Entry& entry, absl::Time now) {
  entry.event["series"] = {{"count", entry.count}, {"lastObservedTime", MicroTime(entry.last_observed)}};
  entry.written_count = entry.count;
  entry.last_written = now;
  return EventWrite{true, entry.event};
}

void EventSeriesCache::EvictOldest() {
  auto oldest = std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
    return a.second.last_observed < b.second.last_observed;
  });
  if (oldest != entries_.end()) entries_.erase(oldest);
}

std::optional<EventWrite> EventSeriesCache::Observe(const history::PodEvent& event, absl::Time now) {
  Key key{event.kind, event.namespace_name, event.name, event.uid};
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= max_entries_) EvictOldest();
    Entry entry;
    entry.event = EventObject(event, reporting_instance_, now);
    entry.last_observed = entry.last_written = now;
    EventWrite write{false, entry.event};
    entries_.emplace(std::move(key), std::move(entry));
    return write;
  }
  Entry& entry = it->second;
  ++entry.count;
  entry.last_observed = now;
  if (entry.count == 2) return SeriesWrite(entry, now);
  return std::nullopt;
}

std::vector<EventWrite> EventSeriesCache::Tick(absl::Time now) {
  std::vector<EventWrite> writes;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    if (now - entry.last_observed >= kEventSeriesFinishAfter) {
      if (entry.count > entry.written_count) writes.push_back(SeriesWrite(entry, now));
      it = entries_.erase(it);
      continue;
    }
    if (entry.count > 1 && now - entry.last_written >= kEventSeriesHeartbeat) writes.push_back(SeriesWrite(entry, now));
    ++it;
  }
  return writes;
}

}  // namespace topofit::kubeclient
