#pragma once

// What each source of JSON may send, declared once so that the limits are seen side by side; every entry
// point hands one of these to ParseBoundedJson (codec/bounded_json.h), which refuses text beyond them
// before anything is built from it. docs/extender.md ("Request bodies are bounded") lists them too.

#include <cstddef>

namespace topofit::codec {

struct JsonLimits {
  size_t max_bytes;         // the whole text
  int max_depth;            // arrays and objects within one another
  size_t max_values;        // every value (an array or object counts one, each of its members too) and member name
  size_t max_string_bytes;  // one string as written, escapes not decoded
};

// Kubernetes objects nest about 15 levels (managedFields included), MCP messages and topofit's own
// documents fewer. What is built from a document is walked, copied and destroyed recursively (a stack
// frame per level), so every source has this depth.
inline constexpr int kMaxJsonDepth = 64;

// The API server keeps an object in etcd whole, 1.5 MiB by default (--max-request-bytes), so no one string
// of a Kubernetes object is longer; 4 MiB leaves room for a raised limit.
inline constexpr size_t kMaxKubeStringBytes = 4 << 20;

// Requests to topofit's servers: the extender's verbs, the webhook's AdmissionReview, MCP over /mcp and
// stdio. The HTTP servers refuse a body beyond --max-body-bytes (64 MiB for the extender, 8 MiB for ops and
// the webhook) before reading it; 256 MiB is the ceiling for an operator who raises it. A 5,000-node
// filter request with full Node objects of 50 images each (bench/extender_bench.cc; 72 MiB) holds 3.2
// million values; 4 million refuses a flat array of zeros from 8 MB on, before simdjson indexes it at 4
// bytes per structural byte (scripts/refused-body-rss.sh: a refused 28 MB body now raises the extender's
// peak memory by the body itself, not 6 times it).
inline constexpr JsonLimits kRequestJsonLimits{256 << 20, kMaxJsonDepth, 4'000'000, kMaxKubeStringBytes};

// Replies topofit reads as a client: the Kubernetes API's (a LIST page, an object, a Status) and an
// extender's /decisions page (`topofit explain --server`). A LIST of 5,000 nodes in one page fits: 16
// million is 5 times the values of the same nodes as a filter request sends them (3.2 million in 72 MiB),
// room for the managedFields and the rest an API reply carries.
inline constexpr JsonLimits kReplyJsonLimits{256 << 20, kMaxJsonDepth, 16'000'000, kMaxKubeStringBytes};

// One Kubernetes object, or a document kept inside one: a watch event line, the node-groups ConfigMap's
// value, the ledger's pod annotations, the expander's --prices-file (mounted from a ConfigMap), and the
// candidates of a decision record as the store wrote them (the database may be read from a file handed
// over, and its records hold what refused pods carried). An object is at most 1.5 MiB in etcd.
inline constexpr JsonLimits kObjectJsonLimits{16 << 20, kMaxJsonDepth, 1'000'000, kMaxKubeStringBytes};

}  // namespace topofit::codec
