#include "kubeclient/list_watcher.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "codec/bounded_json.h"
#include "codec/compute_domain_json.h"
#include "codec/dra_json.h"
#include "codec/kube_json.h"

namespace topofit::kubeclient {
namespace {

// The resourceVersion in an object's (or a list's) metadata, or "" when it has none.
std::string ResourceVersionOf(const nlohmann::json& object) {
  if (!object.is_object()) return "";
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  const auto rv = metadata->find("resourceVersion");
  return rv != metadata->end() && rv->is_string() ? rv->get<std::string>() : "";
}

template <typename T>
ListWatcher::Sink TypedSink(absl::StatusOr<T> (*decode)(const nlohmann::json&), WatchHandler<T> handler) {
  struct State {
    WatchHandler<T> handler;
    std::vector<T> listing;  // the LIST so far, decoded page by page
  };
  auto shared = std::make_shared<State>(State{std::move(handler), {}});
  ListWatcher::Sink sink;
  sink.on_list_page = [decode, shared](std::vector<nlohmann::json> page, bool first) {
    if (first) shared->listing.clear();
    int64_t undecodable = 0;
    for (nlohmann::json& object : page) {
      absl::StatusOr<T> one = decode(object);
      object = nlohmann::json();  // its memory goes now, not with the page
      if (one.ok()) {
        shared->listing.push_back(*std::move(one));
      } else {
        ++undecodable;
      }
    }
    return undecodable;
  };
  sink.on_sync = [shared] {
    std::vector<T> listed = std::move(shared->listing);
    shared->listing = {};
    if (shared->handler.on_sync) shared->handler.on_sync(std::move(listed));
  };
  sink.on_event = [decode, shared](WatchEventType type, const nlohmann::json& object) {
    absl::StatusOr<T> one = decode(object);
    if (!one.ok()) return false;
    if (shared->handler.on_event) shared->handler.on_event(type, *std::move(one));
    return true;
  };
  return sink;
}

// A watcher of `collection_path` that hands `handler` the objects `decode` makes of what the server sends.
template <typename T>
std::unique_ptr<ListWatcher> TypedListWatcher(RestClient& rest, std::string collection_path, ListWatchOptions options,
                                              absl::StatusOr<T> (*decode)(const nlohmann::json&),
                                              WatchHandler<T> handler) {
  return std::make_unique<ListWatcher>(rest, std::move(collection_path), std::move(options),
                                       TypedSink<T>(decode, std::move(handler)));
}

// resource.k8s.io's collection of `resource` at `version`, in all namespaces.
std::string ResourceCollection(absl::string_view version, absl::string_view resource) {
  return absl::StrCat("/apis/resource.k8s.io/", version, "/", resource);
}

}  // namespace

absl::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

std::unique_ptr<ListWatcher> ListWatcher::ForPods(RestClient& rest, ListWatchOptions options,
                                                  WatchHandler<kube::Pod> handler) {
  return TypedListWatcher(rest, "/api/v1/pods", std::move(options), &codec::PodFromJson, std::move(handler));
}

std::unique_ptr<ListWatcher> ListWatcher::ForNodes(RestClient& rest, ListWatchOptions options,
                                                   WatchHandler<kube::Node> handler) {
  return TypedListWatcher(rest, "/api/v1/nodes", std::move(options), &codec::NodeFromJson, std::move(handler));
}

std::unique_ptr<ListWatcher> ListWatcher::ForResourceSlices(RestClient& rest, absl::string_view version,
                                                            ListWatchOptions options,
                                                            WatchHandler<kube::ResourceSlice> handler) {
  return TypedListWatcher(rest, ResourceCollection(version, "resourceslices"), std::move(options),
                          &codec::ResourceSliceFromJson, std::move(handler));
}

std::unique_ptr<ListWatcher> ListWatcher::ForResourceClaims(RestClient& rest, absl::string_view version,
                                                            ListWatchOptions options,
                                                            WatchHandler<kube::ResourceClaim> handler) {
  return TypedListWatcher(rest, ResourceCollection(version, "resourceclaims"), std::move(options),
                          &codec::ResourceClaimFromJson, std::move(handler));
}

std::unique_ptr<ListWatcher> ListWatcher::ForComputeDomains(RestClient& rest, absl::string_view version,
                                                            ListWatchOptions options,
                                                            WatchHandler<kube::ComputeDomain> handler) {
  return TypedListWatcher(rest, absl::StrCat("/apis/resource.nvidia.com/", version, "/computedomains"),
                          std::move(options), &codec::ComputeDomainFromJson, std::move(handler));
}

ListWatcher::ListWatcher(RestClient& rest, std::string collection_path, ListWatchOptions options, Sink sink)
    : rest_(rest), collection_path_(std::move(collection_path)), options_(std::move(options)),
      sink_(std::move(sink)) {}

ListWatcher::~ListWatcher() { Stop(); }

void ListWatcher::Start() {
  if (started_.exchange(true)) return;
  thread_ = std::thread([this] {
    Run();
    done_.Notify();
  });
}

void ListWatcher::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (!thread_.joinable()) return;
  // A stream that was connecting when Cancel() ran misses it (see StreamCanceller), so repeat it until the
  // thread is out.
  canceller_.Cancel();
  while (!done_.WaitForNotificationWithTimeout(absl::Milliseconds(10))) canceller_.Cancel();
  thread_.join();
}

bool ListWatcher::synced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

bool ListWatcher::WaitForSync(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&synced_), timeout);
}

std::string ListWatcher::resource_version() const {
  absl::MutexLock lock(&mu_);
  return resource_version_;
}

ListWatchStats ListWatcher::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::Status ListWatcher::last_failure() const {
  absl::MutexLock lock(&mu_);
  return last_failure_;
}


void ListWatcher::Sleep(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return;
  if (options_.sleep) {
    options_.sleep(d);
  } else {
    stop_.WaitForNotificationWithTimeout(d);
  }
}

absl::Duration ListWatcher::Backoff(int failures, const absl::Status& status) {
  if (const std::optional<absl::Duration> retry_after = RetryAfterOf(status)) {
    return std::min(*retry_after, options_.max_retry_after);
  }
  return JitteredBackoff(failures, options_.initial_backoff, options_.max_backoff, options_.uniform_random);
}

std::string ListWatcher::Query(bool watch) const {
  std::string query;
  const auto add = [&query](absl::string_view key, absl::string_view value) {
    absl::StrAppend(&query, query.empty() ? "?" : "&", key, "=", EscapePathSegment(value));
  };
  if (!options_.field_selector.empty()) add("fieldSelector", options_.field_selector);
  if (!options_.label_selector.empty()) add("labelSelector", options_.label_selector);
  if (watch) {
    add("watch", "true");
    add("resourceVersion", resource_version());
    add("allowWatchBookmarks", "true");
    add("timeoutSeconds", absl::StrCat(std::max<int64_t>(1, absl::ToInt64Seconds(options_.watch_timeout))));
  } else if (options_.page_size > 0) {
    add("limit", absl::StrCat(options_.page_size));
  }
  return query;
}

void ListWatcher::Run() {
  bool need_list = true;
  int failures = 0;  // consecutive, since the last event or successful LIST
  while (!stopping()) {
    absl::Status failed;
    if (need_list) {
      failed = ListAndSync();
      ReturnListMemory();
      if (failed.ok()) {
        need_list = false;
        if (failures > 0 && options_.on_recovered) options_.on_recovered();
        failures = 0;
        absl::MutexLock lock(&mu_);
        last_failure_ = absl::OkStatus();
        continue;
      }
    } else {
      const absl::Duration started = options_.clock->Monotonic();
      WatchOutcome outcome = WatchOnce();
      if (outcome.end == WatchEnd::kStopped) break;
      if (outcome.events > 0) {
        if (failures > 0 && options_.on_recovered) options_.on_recovered();
        failures = 0;
        absl::MutexLock lock(&mu_);
        last_failure_ = absl::OkStatus();
      }
      if (outcome.end == WatchEnd::kClosed &&
          (outcome.events > 0 || options_.clock->Monotonic() - started >= options_.min_watch_duration)) {
        continue;  // the server's timeoutSeconds ran out: watch again at once
      }
      if (outcome.end == WatchEnd::kClosed) {
        outcome.status = absl::UnavailableError(absl::StrCat(collection_path_, " watch: ended at once, no event"));
      }
      if (outcome.end == WatchEnd::kGone) {
        need_list = true;
        absl::MutexLock lock(&mu_);
        ++stats_.gone;
      }
      failed = outcome.status;
    }
    if (stopping()) break;
    ++failures;
    {
      absl::MutexLock lock(&mu_);
      ++stats_.failures;
      last_failure_ = failed;
    }
    const absl::Duration backoff = Backoff(failures, failed);
    if (options_.on_failure) options_.on_failure(failed, backoff);
    Sleep(backoff);
  }
}

// jemalloc's control call, present when the binary links jemalloc (CMakeLists.txt: the servers do), null
// otherwise.
extern "C" int mallctl(const char* name, void* old_value, size_t* old_size, void* new_value, size_t new_size)
    __attribute__((weak));

// A LIST's pages and the decoded collection are freed once on_sync returns, and the allocator keeps what
// was freed: the process stayed at the list's peak. Measured with scripts/extender-rss.sh (100 nodes,
// 50,000 bound pods, glibc): 286 MB after the sync, 24 MB once trimmed. A LIST is rare (the start, a 410),
// so giving the pages back after each costs nothing that matters. jemalloc is told to purge every arena
// (MALLCTL_ARENAS_ALL is 4096); glibc's malloc to trim.
// Under AddressSanitizer the allocator is ASan's, not glibc's: glibc's trim would walk arenas nothing
// allocates from, and crashed doing so (SEGV in mtrim) while other threads ran.
#if defined(__SANITIZE_ADDRESS__)
#define TOPOFIT_GLIBC_ALLOCATOR 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOPOFIT_GLIBC_ALLOCATOR 0
#endif
#endif
#if !defined(TOPOFIT_GLIBC_ALLOCATOR) && defined(__GLIBC__)
#define TOPOFIT_GLIBC_ALLOCATOR 1
#endif

void ListWatcher::ReturnListMemory() {
  if (mallctl != nullptr) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
#if TOPOFIT_GLIBC_ALLOCATOR
  malloc_trim(0);
#endif
}

absl::Status ListWatcher::ListAndSync() {
  int64_t listed = 0, undecodable = 0;
  bool first = true;
  std::string resource_version;
  std::string continue_token;
  do {
    std::string path = absl::StrCat(collection_path_, Query(/*watch=*/false));
    if (!continue_token.empty()) absl::StrAppend(&path, "&continue=", EscapePathSegment(continue_token));
    absl::StatusOr<nlohmann::json> page = rest_.GetOnce(path);
    if (!page.ok()) return page.status();
    if (stopping()) return absl::CancelledError("stopped");
    const auto items = page->find("items");
    if (!page->is_object() || items == page->end() || !(items->is_array() || items->is_null())) {
      return absl::DataLossError(absl::StrCat("GET ", path, ": not a list (no items array)"));
    }
    resource_version = ResourceVersionOf(*page);
    continue_token.clear();
    if (const auto metadata = page->find("metadata"); metadata != page->end() && metadata->is_object()) {
      continue_token = metadata->value("continue", "");
    }
    if (items->is_array()) {
      std::vector<nlohmann::json> objects;
      objects.reserve(items->size());
      for (nlohmann::json& item : *items) objects.push_back(std::move(item));
      listed += static_cast<int64_t>(objects.size());
      if (sink_.on_list_page) undecodable += sink_.on_list_page(std::move(objects), first);
      first = false;
    }
  } while (!continue_token.empty());
  if (resource_version.empty()) {
    return absl::DataLossError(absl::StrCat("GET ", collection_path_, ": list has no metadata.resourceVersion"));
  }

  if (first && sink_.on_list_page) undecodable += sink_.on_list_page({}, true);  // an empty collection
  if (sink_.on_sync) sink_.on_sync();
  bool relist = false;
  {
    absl::MutexLock lock(&mu_);
    relist = synced_;  // only this thread sets it
  }
  // Before the sync is published: whoever WaitForSync wakes finds the listing's metrics already there.
  if (options_.on_listed) options_.on_listed(relist, listed);
  {
    absl::MutexLock lock(&mu_);
    resource_version_ = resource_version;
    synced_ = true;
    ++stats_.lists;
    stats_.undecodable += undecodable;
  }
  return absl::OkStatus();
}

ListWatcher::WatchOutcome ListWatcher::WatchOnce() {
  WatchOutcome outcome;
  const std::string path = absl::StrCat(collection_path_, Query(/*watch=*/true));
  {
    absl::MutexLock lock(&mu_);
    ++stats_.watches;
  }
  std::string buffer;  // an event split across chunks waits here for its newline
  bool reader_stopped = false;
  const absl::Status status = rest_.Stream(
      path, options_.watch_timeout + options_.read_slack,
      [&](absl::string_view data) {
        buffer.append(data.data(), data.size());
        size_t start = 0;
        for (size_t newline; (newline = buffer.find('\n', start)) != std::string::npos; start = newline + 1) {
          if (!HandleLine(absl::string_view(buffer).substr(start, newline - start), outcome)) {
            reader_stopped = true;
            return false;
          }
        }
        buffer.erase(0, start);
        // An event is one object: one longer than an object may be is refused, not buffered on.
        if (buffer.size() > codec::kObjectJsonLimits.max_bytes) {
          outcome.end = WatchEnd::kFailed;
          outcome.status = absl::DataLossError(absl::StrCat(collection_path_, " watch: an event of more than ",
                                                            codec::kObjectJsonLimits.max_bytes, " bytes"));
          reader_stopped = true;
          return false;
        }
        return true;
      },
      canceller_);
  if (stopping()) {
    outcome.end = WatchEnd::kStopped;
    return outcome;
  }
  if (reader_stopped) return outcome;  // HandleLine set why
  if (!status.ok()) {
    outcome.end = HttpStatusOf(status) == 410 ? WatchEnd::kGone : WatchEnd::kFailed;
    outcome.status = status;
    return outcome;
  }
  // The server ended the body. A last event without its newline still counts.
  if (!buffer.empty() && !HandleLine(buffer, outcome)) return outcome;
  outcome.end = WatchEnd::kClosed;
  return outcome;
}

bool ListWatcher::HandleLine(absl::string_view line, WatchOutcome& outcome) {
  if (line.find_first_not_of(" \t\r") == absl::string_view::npos) return true;
  const auto fail = [&outcome](absl::Status status) {
    outcome.end = WatchEnd::kFailed;
    outcome.status = std::move(status);
    return false;
  };
  // One event is one object: bounded before anything is built (codec/json_limits.h).
  absl::StatusOr<nlohmann::json> parsed =
      codec::ParseBoundedJson(line, codec::kObjectJsonLimits, absl::StrCat(collection_path_, " watch"));
  if (!parsed.ok()) {
    return fail(absl::DataLossError(absl::StrCat(parsed.status().message(), ": ", line.substr(0, 200))));
  }
  const nlohmann::json& event = *parsed;
  if (!event.is_object() || !event.contains("type") || !event["type"].is_string() || !event.contains("object")) {
    return fail(absl::DataLossError(absl::StrCat(collection_path_, " watch: not a watch event: ",
                                                 line.substr(0, 200))));
  }
  const std::string type = event["type"].get<std::string>();
  const nlohmann::json& object = event["object"];
  if (type == "ERROR") {
    // The object is a Status; code 410 means the resourceVersion was compacted away: relist.
    const int code = object.is_object() && object.contains("code") && object["code"].is_number_integer()
                         ? object["code"].get<int>()
                         : 500;
    absl::Status status = StatusFromHttp(code, object.dump());
    outcome.end = code == 410 ? WatchEnd::kGone : WatchEnd::kFailed;
    outcome.status = absl::Status(status.code(), absl::StrCat(collection_path_, " watch: ERROR event: ",
                                                              status.message()));
    return false;
  }
  WatchEventType event_type;
  if (type == "ADDED") {
    event_type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    event_type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    event_type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    const std::string rv = ResourceVersionOf(object);
    ++outcome.events;
    absl::MutexLock lock(&mu_);
    if (!rv.empty()) resource_version_ = rv;
    ++stats_.bookmarks;
    return true;
  } else {
    return fail(absl::DataLossError(absl::StrCat(collection_path_, " watch: unknown event type \"", type, "\"")));
  }
  ++outcome.events;
  const bool decoded = sink_.on_event ? sink_.on_event(event_type, object) : true;
  const std::string rv = ResourceVersionOf(object);
  absl::MutexLock lock(&mu_);
  if (!rv.empty()) resource_version_ = rv;
  if (decoded) {
    ++stats_.events;
  } else {
    ++stats_.undecodable;
  }
  return true;
}

}  // namespace topofit::kubeclient
