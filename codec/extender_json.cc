#include "codec/extender_json.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include <simdjson.h>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codec/json_string.h"
#include "codec/kube_json.h"

namespace topofit::codec {
namespace {

using Json = nlohmann::json;

absl::Status TooDeep(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": JSON nested deeper than ", kMaxJsonDepth, " levels"));
}

absl::StatusOr<Json> ParseObject(absl::string_view body, absl::string_view what) {
  absl::StatusOr<Json> parsed = ParseBoundedJson(body, kRequestJsonLimits, what);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": expected a JSON object, found ", parsed->type_name()));
  }
  return parsed;
}

// Go matches struct fields to keys case-insensitively; null reads as absent.
const Json* Member(const Json& object, absl::string_view key) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (absl::EqualsIgnoreCase(it.key(), key)) return it->is_null() ? nullptr : &it.value();
  }
  return nullptr;
}
Json* Member(Json& object, absl::string_view key) {
  return const_cast<Json*>(Member(static_cast<const Json&>(object), key));
}

absl::Status TypeError(absl::string_view path, absl::string_view expected, const Json& found) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": expected ", expected, ", found ", found.type_name()));
}

absl::StatusOr<std::string> ReadString(const Json& object, absl::string_view key) {
  const Json* value = Member(object, key);
  if (value == nullptr) return std::string();
  if (!value->is_string()) return TypeError(key, "a string", *value);
  return value->get<std::string>();
}

// ExtenderArgs.Pod and ExtenderPreemptionArgs.Pod; nullptr when absent or null.
absl::StatusOr<kube::Pod> ReadPod(const Json* pod) {
  if (pod == nullptr) return absl::InvalidArgumentError("Pod: missing");
  if (!pod->is_object()) return TypeError("Pod", "an object", *pod);
  absl::StatusOr<kube::Pod> decoded = PodFromJson(*pod);
  if (!decoded.ok()) return absl::InvalidArgumentError(absl::StrCat("Pod.", decoded.status().message()));
  return decoded;
}

// One node's entry of NodeNameToVictims ({"Pods": [v1.Pod]}) or NodeNameToMetaVictims ({"Pods": [{"UID"}]}).
absl::StatusOr<MetaVictims> ReadVictims(const Json& entry, const std::string& path, bool full_pods) {
  if (!entry.is_object()) return TypeError(path, "an object", entry);
  MetaVictims victims;
  if (const Json* pdb = Member(entry, "NumPDBViolations"); pdb != nullptr) {
    if (!pdb->is_number_integer()) return TypeError(path + ".NumPDBViolations", "an integer", *pdb);
    // Go's int64: a larger integer parses as unsigned here and would wrap to a negative count.
    if (pdb->is_number_unsigned() && pdb->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".NumPDBViolations: ", pdb->dump(), " is out of int64 range"));
    }
    victims.num_pdb_violations = pdb->get<int64_t>();
  }
  const Json* pods = Member(entry, "Pods");
  if (pods == nullptr) return victims;
  if (!pods->is_array()) return TypeError(path + ".Pods", "an array", *pods);
  for (size_t i = 0; i < pods->size(); ++i) {
    const Json& pod = (*pods)[i];
    const std::string pod_path = absl::StrCat(path, ".Pods[", i, "]");
    if (!pod.is_object()) return TypeError(pod_path, "an object", pod);
    std::string uid;
    if (full_pods) {
      absl::StatusOr<kube::Pod> decoded = PodFromJson(pod);
      if (!decoded.ok()) return absl::InvalidArgumentError(absl::StrCat(pod_path, ".", decoded.status().message()));
      uid = decoded->metadata.uid;
    } else {
      absl::StatusOr<std::string> meta_uid = ReadString(pod, "UID");
      if (!meta_uid.ok()) return absl::InvalidArgumentError(absl::StrCat(pod_path, ".", meta_uid.status().message()));
      uid = *meta_uid;
    }
    if (uid.empty()) return absl::InvalidArgumentError(absl::StrCat(pod_path, ": no uid"));
    victims.pod_uids.push_back(std::move(uid));
  }
  return victims;
}

// ------------------------------------------------------------------------------------------ ExtenderArgs
//
// ExtenderArgs with full Nodes is large (about 9 KB per node, 44 MiB for 5,000) and mostly read for
// nothing: kube-scheduler sends the same nodes every cycle, and the reply echoes the passing ones. So it
// is not parsed into a document. One simdjson On-Demand pass over the body checks every value outside the
// nodes (as a DOM parser would: a malformed value anywhere is an error) and records where the Pod and each
// node lie, and each node's metadata.name and resourceVersion; each node's bytes are then checked on their
// own unless the same bytes were checked before (CheckedNodes). Then the Pod, and each node the caller does
// not already hold at that resourceVersion, are decoded from their own bytes by the one decoder (kube_json.h).

namespace od = simdjson::ondemand;

const char* TypeName(od::json_type type) {
  switch (type) {
    case od::json_type::array: return "array";
    case od::json_type::object: return "object";
    case od::json_type::number: return "number";
    case od::json_type::string: return "string";
    case od::json_type::boolean: return "boolean";
    case od::json_type::null: return "null";
  }
  return "unknown";
}

bool KeyIs(std::string_view key, absl::string_view name) {
  return absl::EqualsIgnoreCase(absl::string_view(key.data(), key.size()), name);
}

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A field's key. Keys without a backslash (nearly all) are read in place; the rest are unescaped, which
// also checks their escapes. Stage 1 has checked UTF-8 and control characters for the whole body.
simdjson::error_code KeyOf(simdjson::simdjson_result<od::field>& result, std::string_view* key, od::value* value) {
  od::field field;
  if (simdjson::error_code e = std::move(result).get(field)) return e;
  const char* raw = field.key().raw();
  // Stage 1 found the closing quote, and strings hold no NUL, so strchr stops there (or at an escaped
  // quote, after a backslash).
  const char* quote = std::strchr(raw, '"');
  if (quote != nullptr && std::memchr(raw, '\\', static_cast<size_t>(quote - raw)) == nullptr) {
    *key = std::string_view(raw, static_cast<size_t>(quote - raw));
  } else if (simdjson::error_code e = field.unescaped_key().get(*key)) {
    return e;
  }
  *value = std::move(field).value();
  return simdjson::SUCCESS;
}

// A string value: unescaped (checking its escapes) only when it has any.
simdjson::error_code CheckString(od::value& value) {
  const std::string_view token = value.raw_json_token();  // the quoted string and the spaces after it
  if (token.find('\\') == std::string_view::npos) return value.get_raw_json_string().error();
  return value.get_string().error();
}

// Calls f(key, value) for each field of an object value, f(value) for each element of an array value.
template <typename F>
simdjson::error_code ForEachField(od::value& value, F f) {
  od::object object;
  if (simdjson::error_code e = value.get_object().get(object)) return e;
  for (auto field : object) {
    std::string_view key;
    od::value child;
    if (simdjson::error_code e = KeyOf(field, &key, &child)) return e;
    if (simdjson::error_code e = f(key, child)) return e;
  }
  return simdjson::SUCCESS;
}
template <typename F>
simdjson::error_code ForEachElement(od::value& value, F f) {
  od::array array;
  if (simdjson::error_code e = value.get_array().get(array)) return e;
  for (auto element : array) {
    od::value child;
    if (simdjson::error_code e = element.get(child)) return e;
    if (simdjson::error_code e = f(child)) return e;
  }
  return simdjson::SUCCESS;
}

// Walks `value` to its end, reading every scalar, so that anything malformed in it is an error. `depth` is
// the nesting of `value` below where the check began; deeper than kMaxJsonDepth is DEPTH_ERROR, so the
// recursion (a stack frame per level) is bounded whatever the input.
simdjson::error_code Check(od::value value, int depth = 1) {
  if (depth > kMaxJsonDepth) return simdjson::DEPTH_ERROR;
  od::json_type type;
  if (simdjson::error_code e = value.type().get(type)) return e;
  switch (type) {
    case od::json_type::object:
      return ForEachField(value, [depth](std::string_view, od::value& child) { return Check(child, depth + 1); });
    case od::json_type::array:
      return ForEachElement(value, [depth](od::value& child) { return Check(child, depth + 1); });
    // Not get_number(): in simdjson 3.0 it does not move past the number. Any valid JSON number reads as a
    // double (an integer beyond 64 bits too), so this checks the syntax alone.
    case od::json_type::number: return value.get_double().error();
    case od::json_type::string: return CheckString(value);
    case od::json_type::boolean: return value.get_bool().error();
    case od::json_type::null: return value.is_null().error();
  }
  return simdjson::TAPE_ERROR;
}

// Where a value lies in the padded body: from its first byte to the token after it, less the whitespace
// between. `consume` must read the value to its end.
template <typename Consume>
simdjson::error_code Span(od::document& doc, od::value& value, std::string_view* span, Consume consume) {
  const char* begin = value.raw_json_token().data();
  if (simdjson::error_code e = consume()) return e;
  const char* end = nullptr;
  if (simdjson::error_code e = doc.current_location().get(end)) return e;
  while (end > begin && IsJsonSpace(end[-1])) --end;
  *span = std::string_view(begin, static_cast<size_t>(end - begin));
  return simdjson::SUCCESS;
}

// A string member read in passing: its last occurrence wins, null clears it, another type makes it
// nullopt (the decoder will say what is wrong).
simdjson::error_code ReadLenientString(od::value& value, std::optional<std::string>* out) {
  od::json_type type;
  if (simdjson::error_code e = value.type().get(type)) return e;
  if (type == od::json_type::string) {
    std::string_view text;
    if (simdjson::error_code e = value.get_string().get(text)) return e;
    *out = std::string(text);
    return simdjson::SUCCESS;
  }
  *out = type == od::json_type::null ? std::optional<std::string>(std::string()) : std::nullopt;
  return Check(value);
}

struct NodeItem {
  std::string_view span;
  bool checked = false;  // every value checked by the walk (not an object); else CheckNodes checks it
  std::optional<std::string> name;  // nullopt: not a string
  std::optional<std::string> resource_version;
};

// One element of Nodes.items: its span, and metadata.name / resourceVersion if they are strings. The other
// values of an object are skipped, not checked: CheckNodes checks the span afterwards.
simdjson::error_code WalkNode(od::document& doc, od::value& value, NodeItem* item) {
  item->name = item->resource_version = std::string();
  const auto metadata_field = [&](std::string_view key, od::value& child) {
    return key == "name"              ? ReadLenientString(child, &item->name)
           : key == "resourceVersion" ? ReadLenientString(child, &item->resource_version)
                                      : simdjson::SUCCESS;
  };
  const auto node_field = [&](std::string_view key, od::value& child) -> simdjson::error_code {
    if (key != "metadata") return simdjson::SUCCESS;
    item->name = item->resource_version = std::string();
    od::json_type type;
    if (simdjson::error_code e = child.type().get(type)) return e;
    if (type == od::json_type::object) return ForEachField(child, metadata_field);
    if (type != od::json_type::null) item->name.reset();
    return Check(child);
  };
  return Span(doc, value, &item->span, [&]() -> simdjson::error_code {
    od::json_type type;
    if (simdjson::error_code e = value.type().get(type)) return e;
    if (type == od::json_type::object) return ForEachField(value, node_field);
    item->checked = true;
    return Check(value);
  });
}

// What the walk found at the top level, errors of shape included; a key given twice keeps its last value.
struct ArgsWalk {
  std::optional<od::json_type> top;
  std::optional<std::string_view> pod;  // absent or null: nullopt
  bool has_nodes = false;
  absl::Status nodes_error;
  std::vector<NodeItem> items;
  bool has_names = false;
  absl::Status names_error;
  std::vector<std::string> names;
};

// `value` when it has type `want`; else records `error` (unless null, which reads as absent) and checks
// it. Returns whether the caller should read the value.
simdjson::error_code ExpectType(od::value& value, od::json_type want, absl::string_view path,
                                absl::string_view expected, absl::Status* error, bool* present, bool* read) {
  od::json_type type;
  if (simdjson::error_code e = value.type().get(type)) return e;
  *present = type != od::json_type::null;
  *read = type == want;
  if (*read) return simdjson::SUCCESS;
  if (*present) *error = absl::InvalidArgumentError(absl::StrCat(path, ": expected ", expected, ", found ", TypeName(type)));
  return Check(value);
}

simdjson::error_code WalkNodes(od::document& doc, od::value& value, ArgsWalk* walk) {
  walk->nodes_error = absl::OkStatus();
  walk->items.clear();
  bool read = false;
  if (simdjson::error_code e = ExpectType(value, od::json_type::object, "Nodes", "a NodeList object",
                                          &walk->nodes_error, &walk->has_nodes, &read)) {
    return e;
  }
  if (!read) return simdjson::SUCCESS;
  return ForEachField(value, [&](std::string_view key, od::value& child) -> simdjson::error_code {
    if (!KeyIs(key, "items")) return Check(child);
    walk->nodes_error = absl::OkStatus();
    walk->items.clear();
    bool present = false, is_array = false;
    if (simdjson::error_code e = ExpectType(child, od::json_type::array, "Nodes.items", "an array",
                                            &walk->nodes_error, &present, &is_array)) {
      return e;
    }
    if (!is_array) return simdjson::SUCCESS;
    return ForEachElement(child, [&](od::value& item) { return WalkNode(doc, item, &walk->items.emplace_back()); });
  });
}

simdjson::error_code WalkNames(od::value& value, ArgsWalk* walk) {
  walk->names_error = absl::OkStatus();
  walk->names.clear();
  bool read = false;
  if (simdjson::error_code e = ExpectType(value, od::json_type::array, "NodeNames", "an array", &walk->names_error,
                                          &walk->has_names, &read)) {
    return e;
  }
  if (!read) return simdjson::SUCCESS;
  size_t i = 0;
  return ForEachElement(value, [&](od::value& name) -> simdjson::error_code {
    const std::string path = absl::StrCat("NodeNames[", i++, "]");
    absl::Status error;
    bool present = false, is_string = false;
    if (simdjson::error_code e =
            ExpectType(name, od::json_type::string, path, "a string", &error, &present, &is_string)) {
      return e;
    }
    if (!is_string) {
      if (!present) error = absl::InvalidArgumentError(absl::StrCat(path, ": expected a string, found null"));
      if (walk->names_error.ok()) walk->names_error = error;
      return simdjson::SUCCESS;
    }
    std::string_view text;
    if (simdjson::error_code e = name.get_string().get(text)) return e;
    walk->names.emplace_back(text);
    return simdjson::SUCCESS;
  });
}

simdjson::error_code WalkArgs(od::document& doc, ArgsWalk* walk) {
  od::json_type type;
  if (simdjson::error_code e = doc.type().get(type)) return e;
  walk->top = type;
  switch (type) {
    case od::json_type::object:
    case od::json_type::array: break;
    // A scalar document is not a value to simdjson: read at the root.
    case od::json_type::number: return doc.get_double().error();
    case od::json_type::string: return doc.get_string().error();
    case od::json_type::boolean: return doc.get_bool().error();
    case od::json_type::null: return doc.is_null().error();
  }
  od::value top;
  if (simdjson::error_code e = doc.get_value().get(top)) return e;
  if (type == od::json_type::array) return Check(top);
  return ForEachField(top, [&](std::string_view key, od::value& value) -> simdjson::error_code {
    if (KeyIs(key, "Nodes")) return WalkNodes(doc, value, walk);
    if (KeyIs(key, "NodeNames")) return WalkNames(value, walk);
    if (!KeyIs(key, "Pod")) return Check(value);
    od::json_type pod_type;
    if (simdjson::error_code e = value.type().get(pod_type)) return e;
    std::string_view span;
    if (simdjson::error_code e = Span(doc, value, &span, [&] { return Check(value); })) return e;
    walk->pod = pod_type == od::json_type::null ? std::nullopt : std::optional<std::string_view>(span);
    return simdjson::SUCCESS;
  });
}

// A parser keeps buffers sized for the largest body it parsed (about 1.7 times its size once touched).
// Bodies up to kThreadParserBytes use one kept per thread; larger ones the one spare parser, or a parser
// of their own while another request holds the spare: fresh buffers cost a page fault per 4 KiB, which
// for a 40 MiB body is more than the parse itself.
constexpr size_t kThreadParserBytes = 2 << 20;

class ParserLease {
 public:
  explicit ParserLease(size_t bytes) {
    if (bytes <= kThreadParserBytes) {
      thread_local od::parser per_thread;
      parser_ = &per_thread;
    } else if (SpareMu().try_lock()) {
      lock_ = std::unique_lock<std::mutex>(SpareMu(), std::adopt_lock);
      parser_ = &Spare();
    } else {
      own_ = std::make_unique<od::parser>();
      parser_ = own_.get();
    }
  }
  od::parser& operator*() { return *parser_; }

 private:
  static std::mutex& SpareMu() {
    static std::mutex mu;
    return mu;
  }
  static od::parser& Spare() {
    static od::parser* spare = new od::parser();  // never destroyed: threads may parse during exit
    return *spare;
  }
  od::parser* parser_ = nullptr;
  std::unique_lock<std::mutex> lock_;
  std::unique_ptr<od::parser> own_;
};

// Node objects already checked, by the hash of their bytes. kube-scheduler sends the same nodes every cycle
// (and the ones that passed the filter again to prioritize), and checking every value of 5,000 nodes was
// most of a request's parse; hashing the bytes costs a fraction of it. Bytes that hash like bytes checked
// before are taken as checked: absl::Hash is seeded per process, so a request cannot be made to collide.
// Cleared when full, so it holds the nodes of recent requests.
class CheckedNodes {
 public:
  static CheckedNodes& Get() {
    static CheckedNodes* checked = new CheckedNodes();  // never destroyed: threads may parse during exit
    return *checked;
  }
  // Whether each of `hashes` was checked before, under one lock.
  std::vector<bool> Contains(const std::vector<size_t>& hashes) {
    std::vector<bool> out(hashes.size());
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < hashes.size(); ++i) out[i] = hashes_.contains(hashes[i]);
    return out;
  }
  void Insert(const std::vector<size_t>& hashes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (hashes_.size() + hashes.size() > kMaxNodes) hashes_.clear();
    hashes_.insert(hashes.begin(), hashes.end());
  }

 private:
  static constexpr size_t kMaxNodes = 1 << 18;  // versions of nodes; 8 bytes each
  std::mutex mu_;
  absl::flat_hash_set<size_t> hashes_;
};

// Whether `span`, which lies in `padded`, is one JSON value with nothing after it. Reuses the parser that
// walked `padded` (its document is gone by then).
simdjson::error_code CheckAlone(od::parser& parser, const simdjson::padded_string_view& padded,
                                std::string_view span) {
  const size_t offset = static_cast<size_t>(span.data() - padded.data());
  od::document doc;
  if (simdjson::error_code e =
          parser.iterate(simdjson::padded_string_view(span.data(), span.size(), padded.capacity() - offset)).get(doc)) {
    return e;
  }
  od::value value;
  if (simdjson::error_code e = doc.get_value().get(value)) return e;
  if (simdjson::error_code e = Check(value)) return e;
  return doc.current_location().error() == simdjson::OUT_OF_BOUNDS ? simdjson::SUCCESS : simdjson::TRAILING_CONTENT;
}

// Checks the nodes WalkNode only located, each whose bytes were not checked before.
simdjson::error_code CheckNodes(od::parser& parser, const simdjson::padded_string_view& padded,
                                const std::vector<NodeItem>& items) {
  std::vector<size_t> hashes;
  hashes.reserve(items.size());
  for (const NodeItem& item : items) hashes.push_back(absl::HashOf(item.span));
  const std::vector<bool> known = CheckedNodes::Get().Contains(hashes);
  std::vector<size_t> checked;
  for (size_t i = 0; i < items.size(); ++i) {
    if (known[i] || items[i].checked) continue;
    if (simdjson::error_code e = CheckAlone(parser, padded, items[i].span)) return e;
    checked.push_back(hashes[i]);
  }
  CheckedNodes::Get().Insert(checked);
  return simdjson::SUCCESS;
}

absl::StatusOr<kube::Node> DecodeNodeBytes(absl::string_view raw, size_t index) {
  const std::string path = absl::StrCat("Nodes.items[", index, "]");
  const Json json = Json::parse(raw.begin(), raw.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InvalidArgumentError("ExtenderArgs: malformed JSON");
  if (!json.is_object()) return TypeError(path, "an object", json);
  absl::StatusOr<kube::Node> node = NodeFromJson(json);
  if (!node.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ".", node.status().message()));
  if (node->metadata.name.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ".metadata.name: missing"));
  return node;
}

}  // namespace

absl::StatusOr<kube::Node> DecodeNodeArg(const NodeArg& arg, size_t index) { return DecodeNodeBytes(arg.raw, index); }

absl::StatusOr<ExtenderArgs> ParseExtenderArgs(const std::string& body, const NodeIsCurrent& is_current) {
  const auto malformed = [](simdjson::error_code e = simdjson::TAPE_ERROR) {
    return e == simdjson::DEPTH_ERROR ? TooDeep("ExtenderArgs") : absl::InvalidArgumentError("ExtenderArgs: malformed JSON");
  };
  // The limits first, in a pass that builds nothing: simdjson indexes every structural byte (4 bytes each)
  // before the walk below can refuse anything, so a refused 28 MB body of nested arrays, or of a flat array
  // of zeros, raised the peak memory by 6 times its size (scripts/refused-body-rss.sh); now by the body.
  if (absl::Status within = CheckJsonLimits(body, kRequestJsonLimits, "ExtenderArgs"); !within.ok()) return within;
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: the string's spare capacity when it has
  // enough (the HTTP server reserves it), else a copy.
  std::optional<simdjson::padded_string> copy;
  simdjson::padded_string_view padded(body);
  if (padded.padding() < simdjson::SIMDJSON_PADDING) padded = copy.emplace(body.data(), body.size());
  ParserLease parser(body.size());
  ArgsWalk walk;
  {
    od::document doc;
    if (simdjson::error_code e = (*parser).iterate(padded).get(doc)) return malformed(e);
    if (simdjson::error_code e = WalkArgs(doc, &walk)) return malformed(e);
    // Nothing may follow the value (the location is past the end only there).
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) return malformed();
  }
  if (simdjson::error_code e = CheckNodes(*parser, padded, walk.items)) return malformed(e);
  if (walk.top != od::json_type::object) {
    return absl::InvalidArgumentError(absl::StrCat("ExtenderArgs: expected a JSON object, found ", TypeName(*walk.top)));
  }
  // Spans found in the padded copy, as views into `body`.
  const auto in_body = [&](std::string_view span) {
    return absl::string_view(body).substr(static_cast<size_t>(span.data() - padded.data()), span.size());
  };

  ExtenderArgs args;
  {
    std::optional<Json> pod;
    if (walk.pod) {
      const absl::string_view raw = in_body(*walk.pod);
      pod = Json::parse(raw.begin(), raw.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
      if (pod->is_discarded()) return malformed();
    }
    absl::StatusOr<kube::Pod> decoded = ReadPod(pod ? &*pod : nullptr);
    if (!decoded.ok()) return decoded.status();
    args.pod = *std::move(decoded);
  }
  if (walk.has_nodes) {
    if (!walk.nodes_error.ok()) return walk.nodes_error;
    std::vector<NodeArg>& nodes = args.nodes.emplace();
    nodes.reserve(walk.items.size());
    for (size_t i = 0; i < walk.items.size(); ++i) {
      NodeItem& item = walk.items[i];
      NodeArg& arg = nodes.emplace_back();
      arg.raw = in_body(item.span);
      if (item.name && !item.name->empty() && item.resource_version && !item.resource_version->empty() &&
          is_current && is_current(*item.name, *item.resource_version)) {
        arg.name = *std::move(item.name);
        arg.resource_version = *std::move(item.resource_version);
        continue;
      }
      absl::StatusOr<kube::Node> node = DecodeNodeBytes(arg.raw, i);
      if (!node.ok()) return node.status();
      arg.name = node->metadata.name;
      arg.resource_version = node->metadata.resource_version;
      arg.node = *std::move(node);
    }
  }
  if (walk.has_names) {
    if (!walk.names_error.ok()) return walk.names_error;
    args.node_names = std::move(walk.names);
  }
  return args;
}
absl::StatusOr<ExtenderBindingArgs> ParseBindingArgs(absl::string_view body) {
  absl::StatusOr<Json> json = ParseObject(body, "ExtenderBindingArgs");
  if (!json.ok()) return json.status();
  ExtenderBindingArgs args;
  for (auto [key, field] : {std::pair{"PodName", &args.pod_name}, std::pair{"PodNamespace", &args.pod_namespace},
                            std::pair{"PodUID", &args.pod_uid}, std::pair{"Node", &args.node}}) {
    absl::StatusOr<std::string> value = ReadString(*json, key);
    if (!value.ok()) return value.status();
    if (value->empty()) return absl::InvalidArgumentError(absl::StrCat(key, ": missing"));
    *field = *std::move(value);
  }
  return args;
}

absl::StatusOr<ExtenderPreemptionArgs> ParsePreemptionArgs(absl::string_view body) {
  absl::StatusOr<Json> json = ParseObject(body, "ExtenderPreemptionArgs");
  if (!json.ok()) return json.status();
  ExtenderPreemptionArgs args;
  absl::StatusOr<kube::Pod> pod = ReadPod(Member(*json, "Pod"));
  if (!pod.ok()) return pod.status();
  args.pod = *std::move(pod);
  for (auto [key, full_pods] : {std::pair{"NodeNameToVictims", true}, std::pair{"NodeNameToMetaVictims", false}}) {
    const Json* map = Member(*json, key);
    if (map == nullptr) continue;
    if (!map->is_object()) return TypeError(key, "an object", *map);
    for (auto it = map->begin(); it != map->end(); ++it) {
      absl::StatusOr<MetaVictims> victims = ReadVictims(it.value(), absl::StrCat(key, "[\"", it.key(), "\"]"), full_pods);
      if (!victims.ok()) return victims.status();
      args.victims[it.key()] = *std::move(victims);
    }
  }
  return args;
}

namespace {

// {"name":"reason",...} in key order, as dump() writes a std::map.
void AppendStringMap(std::string& out, const absl::btree_map<std::string, std::string>& map) {
  out += '{';
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it != map.begin()) out += ',';
    AppendJsonString(out, it->first);
    out += ':';
    AppendJsonString(out, it->second);
  }
  out += '}';
}

// The bytes EncodeFilterResult writes when nothing needs escaping (a little more otherwise), so that the
// text is allocated once: a 5,000-node reply is half a megabyte, and growing it by doubling copied it again
// at each step and faulted in fresh pages for each copy.
size_t PlainFilterResultSize(const ExtenderFilterResult& result) {
  size_t size = 128 + result.error.size();
  for (const auto* map : {&result.failed_and_unresolvable_nodes, &result.failed_nodes}) {
    for (const auto& [name, reason] : *map) size += name.size() + reason.size() + 6;
  }
  if (result.node_names) {
    for (const std::string& name : *result.node_names) size += name.size() + 3;
  }
  return size;
}

}  // namespace

EncodedFilterResult EncodeFilterResult(const ExtenderFilterResult& result) {
  // The keys in the order dump() sorts them, then "Nodes": each passing node as the bytes kube-scheduler
  // sent (a valid JSON object: ParseExtenderArgs checked it).
  EncodedFilterResult encoded;
  std::string& text = encoded.text;
  text.reserve(PlainFilterResultSize(result));
  text += "{\"Error\":";
  AppendJsonString(text, result.error);
  text += ",\"FailedAndUnresolvableNodes\":";
  AppendStringMap(text, result.failed_and_unresolvable_nodes);
  text += ",\"FailedNodes\":";
  AppendStringMap(text, result.failed_nodes);
  text += ",\"NodeNames\":";
  if (result.node_names) {
    text += '[';
    for (size_t i = 0; i < result.node_names->size(); ++i) {
      if (i > 0) text += ',';
      AppendJsonString(text, (*result.node_names)[i]);
    }
    text += ']';
  } else {
    text += "null";
  }
  if (!result.nodes) {
    encoded.text.append(",\"Nodes\":null}");
    return encoded;
  }
  encoded.text.append(",\"Nodes\":{\"items\":[");
  encoded.nodes_at = encoded.text.size();
  encoded.text.append("],\"metadata\":{}}}");
  static constexpr absl::string_view kComma = ",";
  for (absl::string_view raw : *result.nodes) {
    if (encoded.nodes.empty()) {
      encoded.nodes.push_back(raw);
      continue;
    }
    absl::string_view& run = encoded.nodes.back();
    // The views all point into the request's body, so `raw` starting one byte after the run's end means the
    // byte between them is the body's separator. (Compared as integers: the pointer past that byte need
    // not exist as a C++ pointer.)
    const uintptr_t run_end = reinterpret_cast<uintptr_t>(run.data()) + run.size();
    if (reinterpret_cast<uintptr_t>(raw.data()) == run_end + 1 && run.data()[run.size()] == ',') {
      run = absl::string_view(run.data(), run.size() + 1 + raw.size());
    } else {
      encoded.nodes.push_back(kComma);
      encoded.nodes.push_back(raw);
    }
  }
  return encoded;
}

std::string SerializeFilterResult(const ExtenderFilterResult& result) {
  const EncodedFilterResult encoded = EncodeFilterResult(result);
  size_t size = encoded.text.size();
  for (absl::string_view piece : encoded.nodes) size += piece.size();
  std::string text;
  text.reserve(size);
  text.append(encoded.text, 0, encoded.nodes_at);
  for (absl::string_view piece : encoded.nodes) text.append(piece.data(), piece.size());
  text.append(encoded.text, encoded.nodes_at);
  return text;
}

std::string SerializeHostPriorityList(const std::vector<HostPriority>& priorities) {
  std::string out = "[";
  for (size_t i = 0; i < priorities.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"Host\":";
    AppendJsonString(out, priorities[i].host);
    absl::StrAppend(&out, ",\"Score\":", priorities[i].score, "}");
  }
  out += ']';
  return out;
}

std::string SerializeBindingResult(absl::string_view error) {
  return Json{{"Error", std::string(error)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string SerializePreemptionResult(const std::map<std::string, MetaVictims>& victims) {
  Json map = Json::object();
  for (const auto& [node, meta] : victims) {
    Json pods = Json::array();
    for (const std::string& uid : meta.pod_uids) pods.push_back({{"UID", uid}});
    map[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", meta.num_pdb_violations}};
  }
  return Json{{"NodeNameToMetaVictims", std::move(map)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace topofit::codec
