#pragma once

// A stand-in for the Kubernetes API server on 127.0.0.1: HTTPS with a throwaway CA, every request
// recorded. Two layers:
//
// - Scripted replies, taken in order by the requests they match (any request, or only LISTs or WATCHes of
//   a collection): for error paths (429 and 5xx with Retry-After, a 403) and for single-object calls.
// - An object store of pods, nodes, and resource.k8s.io/v1 ResourceSlices and ResourceClaims, served as the
//   API server serves collections, in its JSON shapes: GET /api/v1/pods, /api/v1/namespaces/{ns}/pods,
//   /api/v1/nodes, /apis/resource.k8s.io/v1/resourceslices, .../resourceclaims and
//   .../namespaces/{ns}/resourceclaims list (PodList, NodeList, ... with
//   metadata.resourceVersion, limit/continue paging) and, with ?watch=true, watch: a chunked stream of
//   newline-delimited {"type","object"} events from ?resourceVersion on (history replayed, then live),
//   BOOKMARKs when allowed, timeoutSeconds honoured, fieldSelector/labelSelector applied with the API
//   server's transitions (an object that stops matching is DELETED to that watch, one that starts is
//   ADDED). A resourceVersion older than the last Compact() is 410 Gone: an ERROR event with a Status of
//   code 410 in a 200 stream, as the watch cache answers (an HTTP 410 can be scripted).
//
// With nothing scripted and no store path, it answers as the API server does for an unknown object:
// 404 with a Status. Each write to the store takes the next resourceVersion from one counter (etcd's
// revision), starting at 100.

#include <httplib.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kubeclient/config.h"
#include "kubeclient/rest_client.h"
#include "tests/server/test_certs.h"

namespace topofit::kubeclient::testing {

struct RecordedRequest {
  std::string method;
  std::string target;  // path and query exactly as sent, before the server's URL decoding
  httplib::Headers headers;
  std::string body;

  std::string Header(const std::string& key) const {
    auto it = headers.find(key);
    return it == headers.end() ? "" : it->second;
  }
  // A query parameter, URL-decoded; "" when absent.
  std::string Param(const std::string& key) const;
  bool IsWatch() const { return Param("watch") == "true" || Param("watch") == "1"; }
};

// Which requests a scripted reply may answer.
enum class Match { kAny, kList, kWatch };

struct ScriptedReply {
  int status = 200;
  std::string body;
  httplib::Headers headers;
  Match match = Match::kAny;
};

// The collections of the object store. Pods and ResourceClaims are namespaced (listed per namespace or
// across all), nodes and ResourceSlices cluster-scoped (their namespace is "").
enum class Resource { kPods, kNodes, kResourceSlices, kResourceClaims, kComputeDomains };

// A Kubernetes metav1.Status, as the API server writes it for a failed request.
std::string StatusJson(int code, const std::string& reason, const std::string& message);

class FakeApiServer {
 public:
  // `client_ca_file`: when set, the server demands a client certificate signed by it (mutual TLS).
  explicit FakeApiServer(const topofit::testing::TestCerts& certs, const char* client_ca_file = nullptr);
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  bool valid() const { return server_.is_valid() && port_ > 0; }
  std::string url() const;

  void Script(int status, std::string body, httplib::Headers headers = {}, Match match = Match::kAny);
  // Runs `action` once, when the next request with `method` ("PUT", ...) arrives and before it is
  // handled, on the server's thread: a test puts another client's requests between one client's read and
  // its write.
  void BeforeNext(std::string method, std::function<void()> action);
  std::vector<RecordedRequest> requests() const;
  std::vector<RecordedRequest> watch_requests() const;
  // Every request but a watch is answered `delay` after it arrives (waiting outside the server's lock, so
  // concurrent requests overlap as on a real API server): bench/bind_bench's 5 ms API server.
  void DelayReplies(absl::Duration delay);

  // --- the object store ---
  // Creates or replaces the object (keyed by namespace and name), stamping metadata.resourceVersion with
  // the next revision; open watches get ADDED or MODIFIED. Returns the revision.
  std::string Upsert(Resource resource, nlohmann::json object);
  // Removes it; open watches get DELETED with its last state at the new revision. "" when absent.
  std::string Delete(Resource resource, const std::string& namespace_name, const std::string& name);
  // The same, but open watches are not told: the change happened while they were not looking (it is in
  // the history, so a watch opened from an older revision still replays it).
  std::string DeleteUnseen(Resource resource, const std::string& namespace_name, const std::string& name);
  // A BOOKMARK at the current revision to every open watch that allowed bookmarks.
  void Bookmark();
  // Forgets history up to the current revision: open watches get an ERROR event (410 Expired) and end,
  // and a LIST continue token or a WATCH from an older revision is 410 from now on.
  void Compact();
  // Ends every open watch: cleanly (the terminating chunk, as when timeoutSeconds runs out) or by cutting
  // the connection mid-stream.
  void CloseWatches();
  void DropWatches();
  // Waits until at least `n` watches are open (registered and about to stream).
  bool WaitForOpenWatches(int n, absl::Duration timeout) const;
  std::string resource_version() const;

  // Single objects, as the API server serves them: GET one; PATCH one with a JSON merge patch
  // (watches see MODIFIED); POST a pod's binding, which sets spec.nodeName once — a bound pod, or a uid
  // other than the Binding's precondition, is 409 Conflict with the API server's message.
  // The object itself, null when absent.
  nlohmann::json Object(Resource resource, const std::string& namespace_name, const std::string& name) const;

  // --- ConfigMaps, PodTemplates, ProvisioningRequests, Leases and Events ---
  // POST to /api/v1/namespaces/{ns}/configmaps or .../podtemplates, /apis/autoscaling.x-k8s.io/v1/namespaces/{ns}/
  // provisioningrequests, /apis/coordination.k8s.io/v1/namespaces/{ns}/leases or
  // /apis/events.k8s.io/v1/namespaces/{ns}/events stores the body (201, with uid and resourceVersion
  // stamped; 409 AlreadyExists when the name is taken); GET, PUT, PATCH (a merge patch, or a strategic
  // merge patch of maps only) and DELETE on "<collection>/<name>" read, replace, patch and remove it (404
  // when absent). A PUT whose metadata.resourceVersion
  // is not the stored one is 409 Conflict, as the API server's optimistic concurrency answers; without one
  // it replaces unconditionally. Objects are keyed by that object path; null when absent.
  nlohmann::json StoredObject(const std::string& object_path) const;
  // The stored objects of a collection ("/apis/events.k8s.io/v1/namespaces/ml/events"), by name.
  std::vector<nlohmann::json> StoredObjects(const std::string& collection_path) const;
  // Replaces a stored object (e.g. to give a ProvisioningRequest a status), as a controller would; null
  // removes it.
  // A GET of such a collection lists it in one page, its fieldSelector applied (core/v1 events by
  // involvedObject.uid and type, as the restart collector reads them).
  void PutStoredObject(const std::string& object_path, nlohmann::json object);
  // What GET .../pods/{name}/log?container=C&previous=true serves (its last tailLines lines, cut to
  // limitBytes); without one, or without previous=true, 400 as the kubelet answers.
  void SetPreviousLog(const std::string& namespace_name, const std::string& name, const std::string& container,
                      std::string log);
  // What GET `path` serves (200), e.g. the APIResourceList of /apis/autoscaling.x-k8s.io/v1beta1 where a CRD
  // is installed; paths not served this way and not stored are 404, as for an API group nobody serves.
  void ServeDiscovery(const std::string& path, nlohmann::json resource_list);

 private:
  struct Watch;
  struct Change {
    int64_t revision = 0;
    Resource resource = Resource::kPods;
    std::string type;  // ADDED, MODIFIED or DELETED
    nlohmann::json before;  // null for ADDED
    nlohmann::json after;   // null for DELETED
  };

  void Handle(const httplib::Request& req, httplib::Response& res);
  void List(Resource resource, const std::string& namespace_filter, const httplib::Request& req,
            httplib::Response& res) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartWatch(Resource resource, const std::string& namespace_filter, const httplib::Request& req,
                  httplib::Response& res) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Record(const Change& change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string Remove(Resource resource, const std::string& namespace_name, const std::string& name, bool seen);
  static void Send(Watch& watch, const Change& change);
  // The PodTemplate, ProvisioningRequest and Lease paths; false when `req` is not for one of them.
  bool HandleStoredObject(const httplib::Request& req, httplib::Response& res) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // GET of a stored namespaced collection across namespaces ("/api/v1/podtemplates"): a LIST in one page; a
  // WATCH is 405 (not modelled). False for other paths.
  bool HandleStoredListOfAllNamespaces(const std::vector<std::string>& parts, const httplib::Request& req,
                                       httplib::Response& res) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One object of the store: GET, PATCH (JSON merge patch) and, for pods, POST binding; false for other paths.
  bool HandleObject(const httplib::Request& req, httplib::Response& res) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string UpsertLocked(Resource resource, nlohmann::json object) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  httplib::SSLServer server_;
  int port_ = -1;
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::deque<ScriptedReply> replies_ ABSL_GUARDED_BY(mu_);
  std::string before_next_method_ ABSL_GUARDED_BY(mu_);
  std::function<void()> before_next_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
  absl::Duration reply_delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();

  int64_t revision_ ABSL_GUARDED_BY(mu_) = 100;
  int64_t compacted_ ABSL_GUARDED_BY(mu_) = 0;  // watches from below this are Gone
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<Resource, std::map<std::string, nlohmann::json>> objects_ ABSL_GUARDED_BY(mu_);  // by "ns/name"
  std::vector<Change> history_ ABSL_GUARDED_BY(mu_);
  std::list<std::shared_ptr<Watch>> watches_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, nlohmann::json> stored_ ABSL_GUARDED_BY(mu_);  // by object path
  std::map<std::string, std::string> previous_logs_ ABSL_GUARDED_BY(mu_);  // by namespace/name/container
  std::map<std::string, nlohmann::json> discovery_ ABSL_GUARDED_BY(mu_);    // by path
};

// The CA bundle a client needs to trust the fake server, plus a bearer token.
ClusterConfig ConfigFor(const FakeApiServer& server, const topofit::testing::TestCerts& certs);

// A client of the fake server that sends every request once, unthrottled: a test sees each reply the
// server scripts, and its timing, exactly.
std::unique_ptr<RestClient> DirectClientFor(const FakeApiServer& server, const topofit::testing::TestCerts& certs);

// Builders for objects in the API server's JSON shape.
nlohmann::json PodJson(const std::string& namespace_name, const std::string& name, const std::string& node = "",
                       const std::string& scheduler = "default-scheduler");
nlohmann::json NodeJson(const std::string& name, int gpus = 8);

}  // namespace topofit::kubeclient::testing
