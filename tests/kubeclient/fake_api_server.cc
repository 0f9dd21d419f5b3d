#include "tests/kubeclient/fake_api_server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace topofit::kubeclient::testing {
namespace {

// Where the API server serves a Resource of the store, and the names it gives it.
struct ServedResource {
  Resource resource;
  std::vector<std::string> prefix;  // the group version's path segments
  std::string api_version;
  std::string plural;
  std::string kind;
  bool namespaced;
  std::string qualified;  // in messages: "<plural>.<group>", the plural alone for core
};

const std::vector<ServedResource>& ServedResources() {
  static const std::vector<ServedResource> served = {
      {.resource = Resource::kPods, .prefix = {"api", "v1"}, .api_version = "v1", .plural = "pods", .kind = "Pod",
       .namespaced = true, .qualified = "pods"},
      {.resource = Resource::kNodes, .prefix = {"api", "v1"}, .api_version = "v1", .plural = "nodes", .kind = "Node",
       .namespaced = false, .qualified = "nodes"},
      {.resource = Resource::kResourceSlices, .prefix = {"apis", "resource.k8s.io", "v1"},
       .api_version = "resource.k8s.io/v1", .plural = "resourceslices", .kind = "ResourceSlice", .namespaced = false,
       .qualified = "resourceslices.resource.k8s.io"},
      {.resource = Resource::kResourceClaims, .prefix = {"apis", "resource.k8s.io", "v1"},
       .api_version = "resource.k8s.io/v1", .plural = "resourceclaims", .kind = "ResourceClaim", .namespaced = true,
       .qualified = "resourceclaims.resource.k8s.io"},
      {.resource = Resource::kComputeDomains, .prefix = {"apis", "resource.nvidia.com", "v1beta1"},
       .api_version = "resource.nvidia.com/v1beta1", .plural = "computedomains", .kind = "ComputeDomain",
       .namespaced = true, .qualified = "computedomains.resource.nvidia.com"},
  };
  return served;
}

const ServedResource& Served(Resource resource) {
  for (const ServedResource& served : ServedResources()) {
    if (served.resource == resource) return served;
  }
  std::abort();  // every Resource has its row above
}

// A path into the store: "<prefix>[/namespaces/{ns}]/<plural>[/{name}[/{subresource}]]".
struct StorePath {
  const ServedResource* served = nullptr;
  std::string namespace_name;  // empty for a cluster-scoped resource, or a collection across all namespaces
  std::string name;            // empty for the collection
  std::string subresource;
};

std::optional<StorePath> ParseStorePath(absl::string_view path) {
  const std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  for (const ServedResource& served : ServedResources()) {
    if (parts.size() <= served.prefix.size() ||
        !std::equal(served.prefix.begin(), served.prefix.end(), parts.begin())) {
      continue;
    }
    size_t at = served.prefix.size();
    StorePath store_path{.served = &served, .namespace_name = "", .name = "", .subresource = ""};
    if (served.namespaced && parts.size() > at + 2 && parts[at] == "namespaces") {
      store_path.namespace_name = parts[at + 1];
      at += 2;
    }
    if (parts[at] != served.plural || parts.size() > at + 3) continue;
    if (parts.size() > at + 1) store_path.name = parts[at + 1];
    if (parts.size() > at + 2) store_path.subresource = parts[at + 2];
    return store_path;
  }
  return std::nullopt;
}

std::string KeyOf(const nlohmann::json& object) {
  const nlohmann::json& metadata = object["metadata"];
  return absl::StrCat(metadata.value("namespace", ""), "/", metadata.value("name", ""));
}

// A dotted field path ("spec.nodeName") read as the API server's field selectors read it: absent is "".
std::string FieldValue(const nlohmann::json& object, absl::string_view path) {
  const nlohmann::json* at = &object;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (!at->is_object()) return "";
    const auto it = at->find(std::string(part));
    if (it == at->end()) return "";
    at = &*it;
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_boolean()) return at->get<bool>() ? "true" : "false";
  return at->is_null() ? "" : at->dump();
}

// "a=b,c!=d,e==f": every term must hold.
bool FieldsMatch(const nlohmann::json& object, absl::string_view selector) {
  for (absl::string_view term : absl::StrSplit(selector, ',', absl::SkipEmpty())) {
    bool negate = false;
    size_t at = term.find("!=");
    size_t value_at = at + 2;
    if (at != absl::string_view::npos) {
      negate = true;
    } else if ((at = term.find("==")) != absl::string_view::npos) {
      value_at = at + 2;
    } else {
      at = term.find('=');
      value_at = at + 1;
    }
    if (at == absl::string_view::npos) return false;
    const bool equal = FieldValue(object, term.substr(0, at)) == term.substr(value_at);
    if (equal == negate) return false;
  }
  return true;
}

// Equality-based label selectors: "k=v", "k==v", "k!=v", "k", "!k", comma-separated.
bool LabelsMatch(const nlohmann::json& object, absl::string_view selector) {
  const nlohmann::json labels = object["metadata"].value("labels", nlohmann::json::object());
  for (absl::string_view term : absl::StrSplit(selector, ',', absl::SkipEmpty())) {
    size_t at = term.find("!=");
    if (at != absl::string_view::npos) {
      const std::string key(term.substr(0, at));
      if (labels.contains(key) && labels[key] == std::string(term.substr(at + 2))) return false;
      continue;
    }
    if (absl::ConsumePrefix(&term, "!")) {
      if (labels.contains(std::string(term))) return false;
      continue;
    }
    at = term.find('=');
    const std::string key(term.substr(0, at));
    if (!labels.contains(key)) return false;
    if (at == absl::string_view::npos) continue;
    const absl::string_view value = term.substr(term[at + 1] == '=' ? at + 2 : at + 1);
    if (labels[key] != std::string(value)) return false;
  }
  return true;
}

std::string EventLine(absl::string_view type, const nlohmann::json& object) {
  return absl::StrCat(nlohmann::json{{"type", type}, {"object", object}}.dump(), "\n");
}

}  // namespace

std::string RecordedRequest::Param(const std::string& key) const {
  const size_t query = target.find('?');
  if (query == std::string::npos) return "";
  for (absl::string_view pair : absl::StrSplit(absl::string_view(target).substr(query + 1), '&')) {
    const std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first == key) return httplib::detail::decode_url(std::string(kv.second), true);
  }
  return "";
}

std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  return nlohmann::json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                        {"status", "Failure"}, {"message", message}, {"reason", reason},
                        {"code", code}}
      .dump();
}

// One open watch stream. Lines wait in `pending` for the server thread that streams them.
struct FakeApiServer::Watch {
  Resource resource = Resource::kPods;
  std::string namespace_filter;
  std::string field_selector, label_selector;
  bool bookmarks = false;
  absl::Time deadline;
  std::deque<std::string> pending;
  bool close = false;  // after the pending lines, end the body cleanly
  bool drop = false;   // cut the connection now

  bool Matches(const nlohmann::json& object) const {
    if (object.is_null()) return false;
    if (!namespace_filter.empty() && object["metadata"].value("namespace", "") != namespace_filter) return false;
    return FieldsMatch(object, field_selector) && LabelsMatch(object, label_selector);
  }
};

namespace {

constexpr size_t kServerThreads = 32;

}  // namespace

FakeApiServer::FakeApiServer(const topofit::testing::TestCerts& certs, const char* client_ca_file)
    : server_(certs.server_cert_file().c_str(), certs.server_key_file().c_str(), client_ca_file) {
  const auto handler = [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); };
  server_.set_tcp_nodelay(true);  // replies go out whole at once, as from the API server (Go's default)
  // A thread per connection, as the API server serves any number: each open watch holds one, and so does
  // each client's idle keep-alive connection (an end-to-end test has a dozen clients), which httplib's
  // default pool (8 threads on a small machine) would make later requests queue behind.
  server_.new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  server_.Get(".*", handler);
  server_.Post(".*", handler);
  server_.Put(".*", handler);
  server_.Patch(".*", handler);
  server_.Delete(".*", handler);
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeApiServer::~FakeApiServer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // streaming threads leave their loops, so the server's pool can be joined
  }
  server_.stop();
  thread_.join();
}

std::string FakeApiServer::url() const { return absl::StrCat("https://127.0.0.1:", port_); }

void FakeApiServer::Script(int status, std::string body, httplib::Headers headers, Match match) {
  absl::MutexLock lock(&mu_);
  replies_.push_back({status, std::move(body), std::move(headers), match});
}

std::vector<RecordedRequest> FakeApiServer::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

std::vector<RecordedRequest> FakeApiServer::watch_requests() const {
  std::vector<RecordedRequest> out;
  for (RecordedRequest& request : requests()) {
    if (request.IsWatch()) out.push_back(std::move(request));
  }
  return out;
}

void FakeApiServer::BeforeNext(std::string method, std::function<void()> action) {
  absl::MutexLock lock(&mu_);
  before_next_method_ = std::move(method);
  before_next_ = std::move(action);
}

void FakeApiServer::DelayReplies(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  reply_delay_ = delay;
}

void FakeApiServer::Handle(const httplib::Request& req, httplib::Response& res) {
  std::function<void()> before;
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    if (before_next_ && before_next_method_ == req.method) before.swap(before_next_);
    delay = reply_delay_;
  }
  if (before) before();  // outside the lock: it may send requests of its own to this server
  if (delay > absl::ZeroDuration() && !RecordedRequest{req.method, req.target, req.headers, req.body}.IsWatch()) {
    absl::SleepFor(delay);
  }
  absl::MutexLock lock(&mu_);
  RecordedRequest recorded{req.method, req.target, req.headers, req.body};
  requests_.push_back(recorded);

  // Which collection of the store a GET lists or watches, if any.
  std::optional<StorePath> collection = ParseStorePath(req.path);
  if (req.method != "GET" || (collection.has_value() && !collection->name.empty())) collection.reset();
  const Match kind = !collection.has_value() ? Match::kAny : recorded.IsWatch() ? Match::kWatch : Match::kList;
  for (auto it = replies_.begin(); it != replies_.end(); ++it) {
    if (it->match != Match::kAny && it->match != kind) continue;
    res.status = it->status;
    for (const auto& [key, value] : it->headers) res.set_header(key, value);
    res.set_content(it->body, "application/json");
    replies_.erase(it);
    return;
  }
  if (!collection.has_value() && req.method == "GET") {
    if (auto served = discovery_.find(req.path); served != discovery_.end()) {
      res.status = 200;
      res.set_content(served->second.dump(), "application/json");
      return;
    }
  }
  if (!collection.has_value() && (HandleStoredObject(req, res) || HandleObject(req, res))) return;
  if (!collection.has_value()) {
    res.status = 404;
    res.set_content(StatusJson(404, "NotFound", "the server could not find the requested resource"),
                    "application/json");
  } else if (kind == Match::kWatch) {
    StartWatch(collection->served->resource, collection->namespace_name, req, res);
  } else {
    List(collection->served->resource, collection->namespace_name, req, res);
  }
}

namespace {

// The namespaced collections kept in `stored_`: the path's segments before "namespaces", the plural, and
// the name the API server's messages give the resource ("<plural>.<group>", the plural alone for core).
struct StoredCollection {
  std::vector<std::string> prefix;
  std::string plural;
  std::string qualified;
  bool namespaced = true;  // else cluster-scoped: <prefix>/<plural>
};

const std::vector<StoredCollection>& StoredCollections() {
  static const std::vector<StoredCollection> collections = {
      {{"api", "v1"}, "configmaps", "configmaps"},
      {{"api", "v1"}, "podtemplates", "podtemplates"},
      {{"apis", "autoscaling.x-k8s.io", "v1"}, "provisioningrequests", "provisioningrequests.autoscaling.x-k8s.io"},
      {{"apis", "coordination.k8s.io", "v1"}, "leases", "leases.coordination.k8s.io"},
      {{"apis", "events.k8s.io", "v1"}, "events", "events.events.k8s.io"},
      {{"api", "v1"}, "events", "events"},  // the core/v1 view the kubelet writes and the restart collector reads
      {{"apis", "autoscaling.x-k8s.io", "v1beta1"}, "capacitybuffers", "capacitybuffers.autoscaling.x-k8s.io"},
      {{"apis", "autoscaling.x-k8s.io", "v1alpha1"}, "capacitybuffers", "capacitybuffers.autoscaling.x-k8s.io"},
      {{"apis", "apps", "v1"}, "deployments", "deployments.apps"},
      {{"apis", "scheduling.k8s.io", "v1"}, "priorityclasses", "priorityclasses.scheduling.k8s.io", false},
  };
  return collections;
}

}  // namespace

bool FakeApiServer::HandleStoredListOfAllNamespaces(const std::vector<std::string>& parts, const httplib::Request& req,
                                                    httplib::Response& res) {
  for (const StoredCollection& candidate : StoredCollections()) {
    if (!candidate.namespaced || parts.size() != candidate.prefix.size() + 1 || parts.back() != candidate.plural ||
        !std::equal(candidate.prefix.begin(), candidate.prefix.end(), parts.begin())) {
      continue;
    }
    if (req.get_param_value("watch") == "true") {
      // Not modelled: a watcher backs off and watches again, and its LIST is what the tests read.
      res.status = 405;
      res.set_content(StatusJson(405, "MethodNotAllowed", absl::StrCat("the fake API server serves no watch of ", candidate.qualified)),
                      "application/json");
      return true;
    }
    const std::string root = absl::StrCat("/", absl::StrJoin(candidate.prefix, "/"), "/namespaces/");
    nlohmann::json items = nlohmann::json::array();
    for (auto it = stored_.lower_bound(root); it != stored_.end() && it->first.starts_with(root); ++it) {
      // <root><namespace>/<plural>/<name>
      const std::vector<std::string> rest = absl::StrSplit(it->first.substr(root.size()), '/');
      if (rest.size() == 3 && rest[1] == candidate.plural) items.push_back(it->second);
    }
    res.status = 200;
    res.set_content(nlohmann::json{{"kind", "List"}, {"apiVersion", "v1"},
                                   {"metadata", {{"resourceVersion", absl::StrCat(revision_)}}}, {"items", std::move(items)}}
                        .dump(),
                    "application/json");
    return true;
  }
  return false;
}

namespace {

std::string ConflictMessage(absl::string_view qualified, absl::string_view name) {
  return absl::StrCat("Operation cannot be fulfilled on ", qualified, " \"", name,
                      "\": the object has been modified; please apply your changes to the latest version and try "
                      "again");
}

// What the API server's validation says of a PodTemplate's claims (ValidatePodSpec): each of spec.resourceClaims
// names exactly one source, and each claim a container names is one of them. Empty when valid.
std::string InvalidTemplateClaims(const nlohmann::json& pod_template) {
  const nlohmann::json spec = pod_template.value("template", nlohmann::json::object()).value("spec", nlohmann::json::object());
  std::set<std::string> names;
  const nlohmann::json claims = spec.value("resourceClaims", nlohmann::json::array());
  for (size_t i = 0; i < claims.size(); ++i) {
    if (claims[i].contains("resourceClaimName") == claims[i].contains("resourceClaimTemplateName")) {
      return absl::StrCat("template.spec.resourceClaims[", i,
                          "]: Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`");
    }
    names.insert(claims[i].value("name", ""));
  }
  for (const char* key : {"initContainers", "containers"}) {
    const nlohmann::json containers = spec.value(key, nlohmann::json::array());
    for (size_t c = 0; c < containers.size(); ++c) {
      const nlohmann::json used =
          containers[c].value("resources", nlohmann::json::object()).value("claims", nlohmann::json::array());
      for (size_t i = 0; i < used.size(); ++i) {
        const std::string name = used[i].value("name", "");
        if (names.count(name) == 0) {
          return absl::StrCat("template.spec.", key, "[", c, "].resources.claims[", i, "].name: Invalid value: \"", name,
                              "\": must be the name of one entry in pod.spec.resourceClaims");
        }
      }
    }
  }
  return "";
}

}  // namespace

bool FakeApiServer::HandleStoredObject(const httplib::Request& req, httplib::Response& res) {
  const std::vector<std::string> parts = absl::StrSplit(req.path, '/', absl::SkipEmpty());
  if (req.method == "GET" && HandleStoredListOfAllNamespaces(parts, req, res)) return true;
  const StoredCollection* collection = nullptr;
  size_t collection_size = 0;  // segments up to and including the plural
  for (const StoredCollection& candidate : StoredCollections()) {
    const size_t size = candidate.prefix.size() + (candidate.namespaced ? 3 : 1);
    if (parts.size() >= size && std::equal(candidate.prefix.begin(), candidate.prefix.end(), parts.begin()) &&
        (!candidate.namespaced || parts[size - 3] == "namespaces") && parts[size - 1] == candidate.plural) {
      collection = &candidate;
      collection_size = size;
    }
  }
  if (collection == nullptr || parts.size() > collection_size + 1) return false;
  std::string collection_path;
  for (size_t i = 0; i < collection_size; ++i) absl::StrAppend(&collection_path, "/", parts[i]);
  const auto reply = [&res](int status, const std::string& body) {
    res.status = status;
    res.set_content(body, "application/json");
  };
  const bool to_collection = parts.size() == collection_size;
  if (to_collection && req.method == "GET") {  // a LIST in one page, the fieldSelector applied
    nlohmann::json items = nlohmann::json::array();
    const std::string selector = req.get_param_value("fieldSelector");
    const std::string prefix = absl::StrCat(collection_path, "/");
    for (auto it = stored_.lower_bound(prefix); it != stored_.end() && it->first.starts_with(prefix); ++it) {
      if (FieldsMatch(it->second, selector)) items.push_back(it->second);
    }
    reply(200, nlohmann::json{{"kind", "List"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", absl::StrCat(revision_)}}},
                              {"items", std::move(items)}}.dump());
    return true;
  }
  if (to_collection != (req.method == "POST")) return false;

  nlohmann::json object;
  std::string name = to_collection ? "" : parts.back();
  if (req.method == "POST" || req.method == "PUT") {
    object = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (!object.is_object() || !object.contains("metadata") || !object["metadata"].contains("name") ||
        !object["metadata"]["name"].is_string()) {
      reply(400, StatusJson(400, "BadRequest", "object has no metadata.name"));
      return true;
    }
    if (to_collection) name = object["metadata"]["name"].get<std::string>();
    if (collection->plural == "podtemplates") {
      if (const std::string invalid = InvalidTemplateClaims(object); !invalid.empty()) {
        reply(422, StatusJson(422, "Invalid", absl::StrCat("PodTemplate \"", name, "\" is invalid: ", invalid)));
        return true;
      }
    }
    if (object["metadata"]["name"] != name) {
      reply(400, StatusJson(400, "BadRequest",
                            absl::StrCat("the name of the object (", object["metadata"]["name"].get<std::string>(),
                                         ") does not match the name on the URL (", name, ")")));
      return true;
    }
  }
  const std::string path = absl::StrCat(collection_path, "/", name);
  const auto it = stored_.find(path);
  if (req.method == "POST") {
    if (it != stored_.end()) {
      reply(409, StatusJson(409, "AlreadyExists", absl::StrCat(collection->qualified, " \"", name, "\" already exists")));
      return true;
    }
    object["metadata"]["uid"] = absl::StrCat("uid-", revision_ + 1);
    object["metadata"]["resourceVersion"] = absl::StrCat(++revision_);
    stored_[path] = object;
    reply(201, object.dump());
    return true;
  }
  if (req.method != "GET" && req.method != "DELETE" && req.method != "PUT" && req.method != "PATCH") return false;
  if (it == stored_.end()) {
    reply(404, StatusJson(404, "NotFound", absl::StrCat(collection->qualified, " \"", name, "\" not found")));
    return true;
  }
  if (req.method == "GET") {
    reply(200, it->second.dump());
  } else if (req.method == "PATCH") {
    // A strategic merge patch of maps only (an Event's series) merges as a JSON merge patch does.
    const std::string type = req.get_header_value("Content-Type");
    if (type != "application/merge-patch+json" && type != "application/strategic-merge-patch+json") {
      reply(415, StatusJson(415, "UnsupportedMediaType", "the fake serves merge patches only"));
      return true;
    }
    const nlohmann::json patch = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (!patch.is_object()) {
      reply(400, StatusJson(400, "BadRequest", "the patch is not a JSON object"));
      return true;
    }
    it->second.merge_patch(patch);
    it->second["metadata"]["resourceVersion"] = absl::StrCat(++revision_);
    reply(200, it->second.dump());
  } else if (req.method == "PUT") {
    // Optimistic concurrency: a resourceVersion that is not the stored one is 409 Conflict; none at all is
    // an unconditional update.
    const std::string sent = object["metadata"].value("resourceVersion", "");
    if (!sent.empty() && sent != it->second["metadata"].value("resourceVersion", "")) {
      reply(409, StatusJson(409, "Conflict", ConflictMessage(collection->qualified, name)));
      return true;
    }
    object["metadata"]["uid"] = it->second["metadata"]["uid"];
    object["metadata"]["resourceVersion"] = absl::StrCat(++revision_);
    it->second = object;
    reply(200, object.dump());
  } else {
    stored_.erase(it);
    ++revision_;
    reply(200, nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}}.dump());
  }
  return true;
}

bool FakeApiServer::HandleObject(const httplib::Request& req, httplib::Response& res) {
  const std::optional<StorePath> store_path = ParseStorePath(req.path);
  if (!store_path.has_value() || store_path->name.empty()) return false;
  const Resource resource = store_path->served->resource;
  // A namespaced object is addressed in its namespace; a pod's subresources here are its binding and log.
  if (store_path->served->namespaced == store_path->namespace_name.empty()) return false;
  const std::string& subresource = store_path->subresource;
  if (!subresource.empty() && !(resource == Resource::kPods && (subresource == "binding" || subresource == "log"))) {
    return false;
  }
  const std::string& name = store_path->name;
  const std::string key = absl::StrCat(store_path->namespace_name, "/", name);
  const auto reply = [&res](int status, const std::string& body) {
    res.status = status;
    res.set_content(body, "application/json");
  };
  auto& objects = objects_[resource];
  const auto it = objects.find(key);
  if (it == objects.end()) {
    reply(404, StatusJson(404, "NotFound", absl::StrCat(store_path->served->qualified, " \"", name, "\" not found")));
    return true;
  }
  if (subresource.empty() && req.method == "GET") {
    reply(200, it->second.dump());
  } else if (subresource == "log" && req.method == "GET") {
    // The previous instance's log as SetPreviousLog gave it, its last tailLines lines (a container with no
    // previous instance: 400, as the kubelet answers).
    const auto log = previous_logs_.find(absl::StrCat(key, "/", req.get_param_value("container")));
    if (req.get_param_value("previous") != "true" || log == previous_logs_.end()) {
      reply(400, StatusJson(400, "BadRequest", absl::StrCat("previous terminated container \"",
                                                            req.get_param_value("container"), "\" in pod \"", name,
                                                            "\" not found")));
      return true;
    }
    std::vector<absl::string_view> lines = absl::StrSplit(log->second, '\n', absl::SkipEmpty());
    int64_t tail = static_cast<int64_t>(lines.size());
    if (req.has_param("tailLines")) absl::SimpleAtoi(req.get_param_value("tailLines"), &tail);
    std::string text;
    for (size_t i = lines.size() - std::min<size_t>(lines.size(), std::max<int64_t>(0, tail)); i < lines.size(); ++i) {
      absl::StrAppend(&text, lines[i], "\n");
    }
    int64_t limit = 0;
    if (req.has_param("limitBytes") && absl::SimpleAtoi(req.get_param_value("limitBytes"), &limit) && limit >= 0 &&
        static_cast<size_t>(limit) < text.size()) {
      text.resize(static_cast<size_t>(limit));
    }
    res.status = 200;
    res.set_content(text, "text/plain");
  } else if (subresource.empty() && req.method == "PATCH") {
    if (req.get_header_value("Content-Type") != "application/merge-patch+json") {
      reply(415, StatusJson(415, "UnsupportedMediaType", "the fake serves JSON merge patches only"));
      return true;
    }
    const nlohmann::json patch = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (!patch.is_object()) {
      reply(400, StatusJson(400, "BadRequest", "the patch is not a JSON object"));
      return true;
    }
    nlohmann::json object = it->second;
    object.merge_patch(patch);
    UpsertLocked(resource, object);
    reply(200, objects.at(key).dump());
  } else if (resource == Resource::kPods && subresource == "binding" && req.method == "POST") {
    // As the API server's binding REST storage: the uid precondition, then a pod bound once only.
    const nlohmann::json binding = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    const nlohmann::json& object = it->second;
    const auto field = [&binding](const char* key) {
      return binding.is_object() ? binding.value(key, nlohmann::json::object()) : nlohmann::json::object();
    };
    const nlohmann::json metadata = field("metadata");
    const std::string uid = metadata.is_object() ? metadata.value("uid", "") : "";
    const nlohmann::json target = field("target");
    const std::string node = target.is_object() ? target.value("name", "") : "";
    const std::string bound_to = object["spec"].value("nodeName", "");
    const std::string conflict = absl::StrCat("Operation cannot be fulfilled on pods/binding \"", name, "\": ");
    if (node.empty()) {
      reply(400, StatusJson(400, "BadRequest", "binding has no target node"));
    } else if (!uid.empty() && uid != object["metadata"].value("uid", "")) {
      reply(409, StatusJson(409, "Conflict", absl::StrCat(conflict, "Precondition failed: UID in precondition: ",
                                                          uid, ", UID in object meta: ",
                                                          object["metadata"].value("uid", ""))));
    } else if (!bound_to.empty()) {
      reply(409, StatusJson(409, "Conflict", absl::StrCat(conflict, "pod ", name, " is already assigned to node \"",
                                                          bound_to, "\"")));
    } else {
      nlohmann::json bound = object;
      bound["spec"]["nodeName"] = node;
      // As the binding storage's setPodHostAndAnnotations: the Binding's annotations land on the pod too.
      // A Binding may carry none (a claim pod's bind writes no GPU ids).
      if (const nlohmann::json annotations = metadata.value("annotations", nlohmann::json::object());
          annotations.is_object()) {
        for (const auto& [key, value] : annotations.items()) bound["metadata"]["annotations"][key] = value;
      }
      UpsertLocked(resource, std::move(bound));
      reply(201, nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}, {"code", 201}}.dump());
    }
  } else {
    reply(405, StatusJson(405, "MethodNotAllowed", absl::StrCat(req.method, " is not supported here")));
  }
  return true;
}

nlohmann::json FakeApiServer::Object(Resource resource, const std::string& namespace_name,
                                     const std::string& name) const {
  absl::MutexLock lock(&mu_);
  const auto objects = objects_.find(resource);
  if (objects == objects_.end()) return nlohmann::json();
  const auto it = objects->second.find(absl::StrCat(namespace_name, "/", name));
  return it == objects->second.end() ? nlohmann::json() : it->second;
}

nlohmann::json FakeApiServer::StoredObject(const std::string& object_path) const {
  absl::MutexLock lock(&mu_);
  const auto it = stored_.find(object_path);
  return it == stored_.end() ? nlohmann::json() : it->second;
}

std::vector<nlohmann::json> FakeApiServer::StoredObjects(const std::string& collection_path) const {
  absl::MutexLock lock(&mu_);
  std::vector<nlohmann::json> objects;
  const std::string prefix = absl::StrCat(collection_path, "/");
  for (auto it = stored_.lower_bound(prefix); it != stored_.end() && it->first.starts_with(prefix); ++it) {
    objects.push_back(it->second);
  }
  return objects;
}

void FakeApiServer::ServeDiscovery(const std::string& path, nlohmann::json resource_list) {
  absl::MutexLock lock(&mu_);
  discovery_[path] = std::move(resource_list);
}

void FakeApiServer::SetPreviousLog(const std::string& namespace_name, const std::string& name,
                                   const std::string& container, std::string log) {
  absl::MutexLock lock(&mu_);
  previous_logs_[absl::StrCat(namespace_name, "/", name, "/", container)] = std::move(log);
}

void FakeApiServer::PutStoredObject(const std::string& object_path, nlohmann::json object) {
  absl::MutexLock lock(&mu_);
  if (object.is_null()) {
    stored_.erase(object_path);
  } else {
    stored_[object_path] = std::move(object);
  }
}

void FakeApiServer::List(Resource resource, const std::string& namespace_filter, const httplib::Request& req,
                         httplib::Response& res) {
  Watch filter;  // only its matching rules
  filter.namespace_filter = namespace_filter;
  filter.field_selector = req.get_param_value("fieldSelector");
  filter.label_selector = req.get_param_value("labelSelector");
  int64_t limit = 0;
  if (req.has_param("limit")) absl::SimpleAtoi(req.get_param_value("limit"), &limit);
  // The continue token: opaque to clients; here "<revision>/<offset>".
  int64_t offset = 0;
  if (const std::string token = req.get_param_value("continue"); !token.empty()) {
    const std::pair<std::string, std::string> parts = absl::StrSplit(token, absl::MaxSplits('/', 1));
    int64_t token_revision = 0;
    if (!absl::SimpleAtoi(parts.first, &token_revision) || !absl::SimpleAtoi(parts.second, &offset)) {
      res.status = 400;
      res.set_content(StatusJson(400, "BadRequest", "invalid continue token"), "application/json");
      return;
    }
    if (token_revision < compacted_) {
      res.status = 410;
      res.set_content(StatusJson(410, "Expired",
                                 "The provided continue parameter is too old to display a consistent list "
                                 "result. You can start a new list without the continue parameter."),
                      "application/json");
      return;
    }
  }
  nlohmann::json items = nlohmann::json::array();
  int64_t index = 0;
  bool more = false;
  for (const auto& [key, object] : objects_[resource]) {
    if (!filter.Matches(object)) continue;
    if (index++ < offset) continue;
    if (limit > 0 && static_cast<int64_t>(items.size()) == limit) {
      more = true;
      break;
    }
    nlohmann::json item = object;
    item.erase("kind");  // list items carry no kind or apiVersion
    item.erase("apiVersion");
    items.push_back(std::move(item));
  }
  nlohmann::json metadata = {{"resourceVersion", absl::StrCat(revision_)}};
  if (more) metadata["continue"] = absl::StrCat(revision_, "/", offset + limit);
  const nlohmann::json list = {{"kind", absl::StrCat(Served(resource).kind, "List")},
                               {"apiVersion", Served(resource).api_version},
                               {"metadata", std::move(metadata)},
                               {"items", std::move(items)}};
  res.status = 200;
  res.set_content(list.dump(), "application/json");
}

void FakeApiServer::StartWatch(Resource resource, const std::string& namespace_filter, const httplib::Request& req,
                               httplib::Response& res) {
  auto watch = std::make_shared<Watch>();
  watch->resource = resource;
  watch->namespace_filter = namespace_filter;
  watch->field_selector = req.get_param_value("fieldSelector");
  watch->label_selector = req.get_param_value("labelSelector");
  watch->bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
  int64_t timeout_seconds = 1800;
  if (req.has_param("timeoutSeconds")) absl::SimpleAtoi(req.get_param_value("timeoutSeconds"), &timeout_seconds);
  watch->deadline = absl::Now() + absl::Seconds(timeout_seconds);

  const std::string rv_param = req.get_param_value("resourceVersion");
  int64_t from = 0;
  if (rv_param.empty() || rv_param == "0") {
    // "Any point": the current state as synthetic ADDED events, then changes.
    for (const auto& [key, object] : objects_[resource]) {
      if (watch->Matches(object)) watch->pending.push_back(EventLine("ADDED", object));
    }
    from = revision_;
  } else if (!absl::SimpleAtoi(rv_param, &from)) {
    res.status = 400;
    res.set_content(StatusJson(400, "BadRequest", absl::StrCat("invalid resource version: ", rv_param)),
                    "application/json");
    return;
  } else if (from < compacted_) {
    const std::string message = absl::StrCat("too old resource version: ", from, " (", compacted_, ")");
    watch->pending.push_back(EventLine("ERROR", nlohmann::json::parse(StatusJson(410, "Expired", message))));
    watch->close = true;
  } else {
    for (const Change& change : history_) {
      if (change.revision > from && change.resource == resource) Send(*watch, change);
    }
  }
  watches_.push_back(watch);

  res.status = 200;
  res.set_chunked_content_provider(
      "application/json",
      [this, watch](size_t /*offset*/, httplib::DataSink& sink) {
        std::deque<std::string> lines;
        bool close = false;
        {
          absl::MutexLock lock(&mu_);
          const auto ready = [this, &watch]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
            return stopping_ || watch->drop || watch->close || !watch->pending.empty();
          };
          mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(20));
          if (stopping_ || watch->drop) return false;  // httplib closes the connection mid-body
          lines.swap(watch->pending);
          close = watch->close || absl::Now() >= watch->deadline;
        }
        for (const std::string& line : lines) {
          if (!sink.write(line.data(), line.size())) return false;
        }
        if (close) sink.done();
        return true;
      },
      [this, watch](bool /*success*/) {
        absl::MutexLock lock(&mu_);
        watches_.remove(watch);
      });
}

void FakeApiServer::Send(Watch& watch, const Change& change) {
  if (watch.resource != change.resource) return;
  const bool before = watch.Matches(change.before);
  const bool after = watch.Matches(change.after);
  if (change.type == "DELETED") {
    if (before) watch.pending.push_back(EventLine("DELETED", change.before));
  } else if (before && after) {
    watch.pending.push_back(EventLine("MODIFIED", change.after));
  } else if (after) {
    watch.pending.push_back(EventLine("ADDED", change.after));
  } else if (before) {
    watch.pending.push_back(EventLine("DELETED", change.after));
  }
}

void FakeApiServer::Record(const Change& change) {
  history_.push_back(change);
  for (const std::shared_ptr<Watch>& watch : watches_) {
    if (!watch->close) Send(*watch, change);
  }
}

std::string FakeApiServer::Upsert(Resource resource, nlohmann::json object) {
  absl::MutexLock lock(&mu_);
  return UpsertLocked(resource, std::move(object));
}

std::string FakeApiServer::UpsertLocked(Resource resource, nlohmann::json object) {
  Change change;
  change.revision = ++revision_;
  change.resource = resource;
  object["kind"] = Served(resource).kind;
  object["apiVersion"] = Served(resource).api_version;
  object["metadata"]["resourceVersion"] = absl::StrCat(change.revision);
  if (!object["metadata"].contains("uid")) object["metadata"]["uid"] = absl::StrCat("uid-", KeyOf(object));
  auto& objects = objects_[resource];
  const std::string key = KeyOf(object);
  if (const auto it = objects.find(key); it != objects.end()) {
    change.type = "MODIFIED";
    change.before = it->second;
  } else {
    change.type = "ADDED";
  }
  change.after = object;
  objects[key] = std::move(object);
  Record(change);
  return absl::StrCat(change.revision);
}

std::string FakeApiServer::Delete(Resource resource, const std::string& namespace_name, const std::string& name) {
  return Remove(resource, namespace_name, name, /*seen=*/true);
}

std::string FakeApiServer::DeleteUnseen(Resource resource, const std::string& namespace_name,
                                        const std::string& name) {
  return Remove(resource, namespace_name, name, /*seen=*/false);
}

std::string FakeApiServer::Remove(Resource resource, const std::string& namespace_name, const std::string& name,
                                  bool seen) {
  absl::MutexLock lock(&mu_);
  auto& objects = objects_[resource];
  const auto it = objects.find(absl::StrCat(namespace_name, "/", name));
  if (it == objects.end()) return "";
  Change change;
  change.revision = ++revision_;
  change.resource = resource;
  change.type = "DELETED";
  change.before = std::move(it->second);
  change.before["metadata"]["resourceVersion"] = absl::StrCat(change.revision);
  objects.erase(it);
  if (seen) {
    Record(change);
  } else {
    history_.push_back(change);
  }
  return absl::StrCat(change.revision);
}

void FakeApiServer::Bookmark() {
  absl::MutexLock lock(&mu_);
  for (const std::shared_ptr<Watch>& watch : watches_) {
    if (!watch->bookmarks || watch->close) continue;
    watch->pending.push_back(EventLine(
        "BOOKMARK", {{"kind", Served(watch->resource).kind},
                     {"apiVersion", Served(watch->resource).api_version},
                     {"metadata", {{"resourceVersion", absl::StrCat(revision_)}}}}));
  }
}

void FakeApiServer::Compact() {
  absl::MutexLock lock(&mu_);
  compacted_ = revision_;
  history_.clear();
  for (const std::shared_ptr<Watch>& watch : watches_) {
    if (watch->close) continue;
    watch->pending.push_back(EventLine(
        "ERROR", nlohmann::json::parse(StatusJson(
                     410, "Expired", absl::StrCat("The resourceVersion for the provided watch is too old.")))));
    watch->close = true;
  }
}

void FakeApiServer::CloseWatches() {
  absl::MutexLock lock(&mu_);
  for (const std::shared_ptr<Watch>& watch : watches_) watch->close = true;
}

void FakeApiServer::DropWatches() {
  absl::MutexLock lock(&mu_);
  for (const std::shared_ptr<Watch>& watch : watches_) watch->drop = true;
}

bool FakeApiServer::WaitForOpenWatches(int n, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const auto open = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int count = 0;
    for (const std::shared_ptr<Watch>& watch : watches_) count += watch->close || watch->drop ? 0 : 1;
    return count >= n;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&open), timeout);
}

std::string FakeApiServer::resource_version() const {
  absl::MutexLock lock(&mu_);
  return absl::StrCat(revision_);
}

ClusterConfig ConfigFor(const FakeApiServer& server, const topofit::testing::TestCerts& certs) {
  ClusterConfig config;
  config.server = server.url();
  config.ca_pem = ReadFileToString(certs.ca_cert_file()).value();
  config.bearer_token = "test-token";
  return config;
}

std::unique_ptr<RestClient> DirectClientFor(const FakeApiServer& server, const topofit::testing::TestCerts& certs) {
  RestOptions options;
  options.qps = 0;
  options.max_attempts = 1;
  return RestClient::Create(ConfigFor(server, certs), options).value();
}

nlohmann::json PodJson(const std::string& namespace_name, const std::string& name, const std::string& node,
                       const std::string& scheduler) {
  nlohmann::json pod = {
      {"metadata", {{"name", name}, {"namespace", namespace_name}, {"creationTimestamp", "2024-05-01T12:00:00Z"}}},
      {"spec",
       {{"schedulerName", scheduler},
        {"containers",
         {{{"name", "main"},
           {"image", "trainer:1"},
           {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}, {"requests", {{"nvidia.com/gpu", "1"}}}}}}}}}},
      {"status", {{"phase", node.empty() ? "Pending" : "Running"}}},
  };
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

nlohmann::json NodeJson(const std::string& name, int gpus) {
  return {
      {"metadata",
       {{"name", name},
        {"labels", {{"kubernetes.io/hostname", name}, {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}}},
      {"status",
       {{"capacity", {{"nvidia.com/gpu", std::to_string(gpus)}}},
        {"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}}}}},
  };
}

}  // namespace topofit::kubeclient::testing
