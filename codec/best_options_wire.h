#pragma once

// cluster-autoscaler's BestOptionsRequest read at the wire level: its strings and every pod's and node's
// bytes are views into the request's own bytes, none copied. A request of 500 node groups' templates and
// 8,000 pod entries is 3-4 MB, and parsing it into the generated message copied every entry into a string
// of its own (2.4 ms of a 14 ms call) only for DecodeBestOptions to read each once.
//
// It accepts what the generated parser accepts and reads it as that parser does: the last of a repeated
// singular field wins, a field of another wire type than its own is an unknown field and skipped, strings
// must be UTF-8 (proto3), the last entry of a map key wins, and a message value given in parts within one
// entry is their merge. One difference: a Pod or Node message inside (`pod`, `nodeMap`) is read when it is
// decoded (codec/kube_proto.h), which says where in the request it was bad, not here.

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::codec {

struct OptionWire {
  absl::string_view node_group_id;
  int32_t node_count = 0;
  absl::string_view debug;
  std::vector<absl::string_view> pods;       // `pod` (4): Pod messages, which are a Pod's bytes
  std::vector<absl::string_view> pod_bytes;  // `podBytes` (5)
};

struct BestOptionsWire {
  std::vector<OptionWire> options;
  std::map<absl::string_view, absl::string_view> node_map;        // `nodeMap` (2): Node messages, by key
  std::map<absl::string_view, absl::string_view> node_bytes_map;  // `nodeBytesMap` (3)
  std::deque<std::string> merged;  // what node_map views when an entry gave its value in parts
};

// `request` must outlive what is returned. InvalidArgument, saying what, for bytes that are not a
// BestOptionsRequest.
absl::StatusOr<BestOptionsWire> ReadBestOptions(absl::string_view request);

}  // namespace topofit::codec
