#pragma once

// List+watch of one API collection (pods, nodes), as client-go's Reflector does it, on a thread of its own:
//
//   LIST (paged, no resourceVersion: a consistent read)  -> on_sync(the whole set)
//   WATCH ?resourceVersion=<last seen>&allowWatchBookmarks=true&timeoutSeconds=N
//        -> on_event(ADDED | MODIFIED | DELETED, object) for each event, in order
//   the server ends the watch (timeoutSeconds)          -> WATCH again from the last resourceVersion
//   410 Gone (HTTP status, or an ERROR event with a Status of code 410) -> LIST again -> on_sync
//   dropped connection, silence, 5xx, 429, an ERROR event -> back off (exponential, equal jitter; the
//        server's Retry-After when it sends one), then WATCH again from the last resourceVersion
//
// Every event moves the resourceVersion, BOOKMARKs included (they carry nothing else), so a reconnect
// resumes where the stream stopped and a quiet collection does not drift into 410s. on_sync replaces the
// consumer's set: an object it holds that is not in the new set vanished while the watch was down.
// Both callbacks run on the watcher's thread, one at a time, never under a lock of the watcher's.
// An object the codec cannot decode is skipped and counted (stats().undecodable).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "kube/compute_domain.h"
#include "kube/dra_objects.h"
#include "kube/objects.h"
#include "kubeclient/rest_client.h"
#include "server/clock.h"

namespace topofit::kubeclient {

enum class WatchEventType { kAdded, kModified, kDeleted };

absl::string_view WatchEventTypeName(WatchEventType type);

template <typename T>
struct WatchHandler {
  // After each (re)list, with every object in the collection that matches the selectors.
  std::function<void(std::vector<T> objects)> on_sync;
  // Each change after that. A DELETED object is its last state; with a selector, an object that stops
  // matching arrives as DELETED and one that starts matching as ADDED, as the API server sends them.
  std::function<void(WatchEventType type, T object)> on_event;
};

// The handler of a consumer with a method for the whole set and one for each change, e.g.
// WatchHandlerOf(sync, &GpuStateSync::SyncPods, &GpuStateSync::PodChanged). `consumer` must outlive it.
template <typename T, typename Consumer>
WatchHandler<T> WatchHandlerOf(Consumer& consumer, void (Consumer::*sync)(const std::vector<T>&),
                               void (Consumer::*changed)(WatchEventType, const T&)) {
  WatchHandler<T> handler;
  handler.on_sync = [&consumer, sync](std::vector<T> objects) { (consumer.*sync)(objects); };
  handler.on_event = [&consumer, changed](WatchEventType type, T object) { (consumer.*changed)(type, object); };
  return handler;
}

struct ListWatchOptions {
  std::string field_selector;  // e.g. "spec.schedulerName=topofit" or "spec.nodeName!="
  std::string label_selector;  // e.g. "topofit.io/gpu=true"
  int64_t page_size = 500;     // LIST limit per page; 0 lists in one page

  // timeoutSeconds of each WATCH: the server ends the stream then and the watcher opens a new one.
  // client-go picks 5-10 min at random; a fixed value keeps runs reproducible.
  absl::Duration watch_timeout = absl::Minutes(5);
  // The read timeout of the watch connection is watch_timeout + read_slack: a server that stops
  // answering is noticed even if it never closes the connection.
  absl::Duration read_slack = absl::Seconds(30);

  // Backoff after a failure: initial * 2^(n-1) capped at max, of which half is fixed and half random.
  // Reset by any event. client-go's reflector uses 800 ms and 30 s.
  absl::Duration initial_backoff = absl::Milliseconds(800);
  absl::Duration max_backoff = absl::Seconds(30);
  absl::Duration max_retry_after = absl::Seconds(60);  // a longer Retry-After is cut to this
  // A watch the server ends sooner than this without any event counts as a failure (backs off), so a
  // server that closes streams at once is not hammered.
  absl::Duration min_watch_duration = absl::Seconds(1);

  // Injected time (its monotonic reading times the watches) and randomness; a null sleep or random
  // means the real one. The real sleep returns early on Stop(); an injected one must return promptly.
  const server::Clock* clock = &server::SystemClock();
  std::function<void(absl::Duration)> sleep;
  std::function<double()> uniform_random;  // in [0, 1)

  // Told of the watcher's condition on its thread, for the process's metrics and logs; each may be null.
  // on_listed: after every complete LIST (relist: not the first one, e.g. after 410 Gone), before
  // WaitForSync's waiters are woken for the first one.
  std::function<void(bool relist, int64_t objects)> on_listed;
  // on_failure: every failed LIST or WATCH, with the wait before the next attempt.
  std::function<void(const absl::Status& failure, absl::Duration retry_in)> on_failure;
  // on_recovered: the first LIST or watch event after failures.
  std::function<void()> on_recovered;
};

struct ListWatchStats {
  int64_t lists = 0;        // complete LISTs delivered through on_sync
  int64_t watches = 0;      // WATCH requests sent
  int64_t events = 0;       // ADDED/MODIFIED/DELETED delivered
  int64_t bookmarks = 0;
  int64_t gone = 0;         // 410s that forced a relist
  int64_t failures = 0;     // failed LISTs and WATCHes (each followed by a backoff)
  int64_t undecodable = 0;  // objects skipped because the codec rejected them
};

class ListWatcher {
 public:
  // The untyped form the typed factories wrap: each object as the API server sent it.
  struct Sink {
    // A LIST's objects a page at a time, as they arrive, so that the whole collection is never held as
    // JSON at once; `first` begins a LIST (pages of an earlier LIST that failed are to be dropped).
    // Returns how many of the page's objects could not be decoded.
    std::function<int64_t(std::vector<nlohmann::json> page, bool first)> on_list_page;
    // The LIST is complete: the pages since the last `first` are the whole collection.
    std::function<void()> on_sync;
    // Returns false when the object could not be decoded.
    std::function<bool(WatchEventType type, const nlohmann::json& object)> on_event;

    // Delivers `objects` as a whole LIST in one page (a server that does not page answers so); returns how
    // many could not be decoded.
    int64_t List(std::vector<nlohmann::json> objects) const {
      const int64_t undecodable = on_list_page ? on_list_page(std::move(objects), true) : 0;
      if (on_sync) on_sync();
      return undecodable;
    }
  };

  // All pods in all namespaces (/api/v1/pods), and all nodes (/api/v1/nodes), matching the selectors.
  static std::unique_ptr<ListWatcher> ForPods(RestClient& rest, ListWatchOptions options,
                                              WatchHandler<kube::Pod> handler);
  static std::unique_ptr<ListWatcher> ForNodes(RestClient& rest, ListWatchOptions options,
                                               WatchHandler<kube::Node> handler);
  // All ResourceSlices and all ResourceClaims in all namespaces of resource.k8s.io at `version` ("v1",
  // or "v1beta2" / "v1beta1" where the cluster serves only those).
  static std::unique_ptr<ListWatcher> ForResourceSlices(RestClient& rest, absl::string_view version,
                                                        ListWatchOptions options,
                                                        WatchHandler<kube::ResourceSlice> handler);
  static std::unique_ptr<ListWatcher> ForResourceClaims(RestClient& rest, absl::string_view version,
                                                        ListWatchOptions options,
                                                        WatchHandler<kube::ResourceClaim> handler);
  // All ComputeDomains of NVIDIA's DRA driver in all namespaces, resource.nvidia.com at `version`
  // ("v1beta1", or "v1beta2" from the driver that serves it).
  static std::unique_ptr<ListWatcher> ForComputeDomains(RestClient& rest, absl::string_view version,
                                                        ListWatchOptions options,
                                                        WatchHandler<kube::ComputeDomain> handler);

  // `collection_path` as "/api/v1/pods". `rest` must outlive this object.
  ListWatcher(RestClient& rest, std::string collection_path, ListWatchOptions options, Sink sink);
  ~ListWatcher();  // Stop()s
  ListWatcher(const ListWatcher&) = delete;
  ListWatcher& operator=(const ListWatcher&) = delete;

  // Starts the thread. Once only.
  void Start();
  // Ends the thread and joins it: the open watch's connection is shut down and a real backoff sleep
  // is cut short, so this returns within milliseconds (plus a callback that is running). Idempotent.
  void Stop();

  // True once the first LIST has been delivered; WaitForSync waits up to `timeout` for it.
  bool synced() const;
  bool WaitForSync(absl::Duration timeout) const;
  // The resourceVersion the next watch would start from ("" before the first LIST).
  std::string resource_version() const;
  ListWatchStats stats() const;
  // The last LIST or WATCH failure since the watcher last listed or received an event; OK when none.
  absl::Status last_failure() const;

 private:
  enum class WatchEnd { kClosed, kGone, kFailed, kStopped };
  struct WatchOutcome {
    WatchEnd end = WatchEnd::kClosed;
    absl::Status status;  // why, for kFailed
    int64_t events = 0;   // events and bookmarks seen on this stream
  };

  void Run();
  absl::Status ListAndSync();
  static void ReturnListMemory();
  WatchOutcome WatchOnce();
  // Handles one line of a watch stream; false ends the stream with `outcome` set.
  bool HandleLine(absl::string_view line, WatchOutcome& outcome);
  absl::Duration Backoff(int failures, const absl::Status& status);
  void Sleep(absl::Duration d);
  std::string Query(bool watch) const;
  bool stopping() const { return stop_.HasBeenNotified(); }

  RestClient& rest_;
  const std::string collection_path_;
  const ListWatchOptions options_;
  const Sink sink_;

  absl::Notification stop_;
  absl::Notification done_;
  StreamCanceller canceller_;
  std::thread thread_;
  std::atomic<bool> started_{false};

  mutable absl::Mutex mu_;
  std::string resource_version_ ABSL_GUARDED_BY(mu_);
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status last_failure_ ABSL_GUARDED_BY(mu_);
  ListWatchStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topofit::kubeclient
