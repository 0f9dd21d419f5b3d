#include "mcp/live_tools.h"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "codec/ledger_json.h"
#include "codec/topology_json.h"
#include "decision/capacity_hold.h"
#include "decision/node_group_identity.h"
#include "mcp/tool_parts.h"
#include "topology/link.h"

namespace topofit::mcp {
namespace {

using nlohmann::json;
using Snapshots = std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>>;

constexpr int kMaxTopologyNodes = 100;
constexpr int kDefaultTopologyNodes = 20;
constexpr int kMaxLedgerEntries = 500;
constexpr int kDefaultLedgerEntries = 100;
// Cursors carry their tool's prefix, so that one tool's cursor (or a made-up string) is refused by another.
constexpr absl::string_view kNodeCursor = "after-node:";
constexpr absl::string_view kLedgerCursor = "ledger-offset:";
// Groups named at most in the error for an unknown one.
constexpr size_t kGroupsNamed = 20;

json Ids(topology::GpuSet set) {
  json ids = json::array();
  for (topology::GpuId id : set.ids()) ids.push_back(id.value);
  return ids;
}

std::string GroupOf(const decision::NodeGpuSnapshot& node) { return decision::NodeGroupName(node.origin->labels); }

// One node as get_topology tells it: the topology through its one JSON codec, where it came from, its
// NVLink islands and weakest link, and which of its GPUs are free or held by whom.
json NodeTopologyJson(const decision::NodeGpuSnapshot& node) {
  const topology::Topology& t = *node.topology;
  json islands = json::array();
  for (topology::GpuSet island : t.NvLinkIslands()) islands.push_back(Ids(island));
  json by_pod = json::object();
  for (const auto& [uid, gpus] : node.by_pod) by_pod[uid] = Ids(gpus);
  const topology::GpuSet free = node.free();
  json gpus = {{"free", Ids(free)}, {"byTopofit", Ids(node.ours)}, {"elsewhere", Ids(node.elsewhere)},
               {"byPod", std::move(by_pod)}};
  if (free.size() >= 2) {
    const topology::SetQuality quality = t.quality().Of(free);
    gpus["freeWeakestLink"] = std::string(topology::LinkClassName(quality.weakest));
    gpus["freeBandwidthGBps"] = static_cast<double>(quality.bandwidth_mbps) / 1000.0;
  }
  json out = {{"node", node.node},
              {"nodeGroup", GroupOf(node)},
              {"source",
               {{"origin", node.topology_origin},
                {"model", t.source()},
                {"reason", node.topology_reason},
                {"warnings", t.warnings()}}},
              {"topology", codec::TopologyToJson(t)},
              {"nvlinkIslands", std::move(islands)},
              {"gpus", std::move(gpus)}};
  if (t.gpu_count() >= 2) out["weakestLink"] = std::string(topology::LinkClassName(t.quality().Of(t.all_gpus()).weakest));
  return out;
}

json TopologySchema() {
  const json ids = {{"type", "array"}, {"items", {{"type", "integer"}}}};
  const json node = {
      {"type", "object"},
      {"properties",
       {{"node", {{"type", "string"}}},
        {"nodeGroup", {{"type", "string"}, {"description", "its node-pool label, else its instance type"}}},
        {"source",
         {{"type", "object"},
          {"description",
           "where the topology came from: origin (annotation | catalog:SHAPE | fallback: WHY), model (what it was "
           "built from: json | nvidia-smi | catalog:SHAPE | fallback), reason (the annotation's form, the label "
           "that picked the catalog shape, or why none did), warnings (assumptions made)"},
          {"required", json::array({"origin", "model", "reason", "warnings"})}}},
        {"topology", {{"type", "object"}, {"description", "the GPU topology descriptor (docs/topology-descriptor.md)"}}},
        {"weakestLink", {{"type", "string"}, {"description", "the weakest link between any two of its GPUs"}}},
        {"nvlinkIslands", {{"type", "array"}, {"items", ids}, {"description", "GPUs joined by NVLink paths"}}},
        {"gpus",
         {{"type", "object"},
          {"description", "free GPUs (with their weakest link and ring bandwidth), those topofit assigned, those "
                          "held otherwise, and each pod's by uid"},
          {"required", json::array({"free", "byTopofit", "elsewhere", "byPod"})}}}}},
      {"required", json::array({"node", "nodeGroup", "source", "topology", "nvlinkIslands", "gpus"})}};
  return {{"type", "object"},
          {"properties",
           {{"node", {{"type", "string"}}},
            {"group", {{"type", "string"}}},
            {"nodes", {{"type", "array"}, {"items", node}}},
            {"nextCursor", {{"type", "string"}, {"description", "pass as `cursor` for the group's next nodes"}}},
            {"truncated", {{"type", "boolean"}}}}},
          {"required", json::array({"nodes"})}};
}

json LedgerSchema() {
  const json list = {{"type", "array"}, {"items", {{"type", "object"}}}};
  return {{"type", "object"},
          {"properties",
           {{"preferences", list},
            {"intents", list},
            {"holds", list},
            {"nodeGroups", list},
            {"total",
             {{"type", "object"},
              {"description", "how many of each the ledger has, on this page or not"},
              {"required", json::array({"preferences", "intents", "holds", "nodeGroups"})}}},
            {"nextCursor", {{"type", "string"}}},
            {"truncated", {{"type", "boolean"}}}}},
          {"required", json::array({"preferences", "intents", "holds", "nodeGroups", "total"})}};
}

std::string KnownGroups(const Snapshots& nodes) {
  std::set<std::string> groups;
  for (const auto& node : nodes) groups.insert(GroupOf(*node));
  groups.erase("");
  if (groups.empty()) return "none";
  std::vector<std::string> named(groups.begin(), groups.end());
  const bool more = named.size() > kGroupsNamed;
  if (more) named.resize(kGroupsNamed);
  return absl::StrCat(absl::StrJoin(named, ", "), more ? ", ..." : "");
}

absl::StatusOr<json> GetTopology(const json& args, const LiveState& live) {
  Arguments a(args, {"node", "group", "limit", "cursor"});
  if (absl::Status known = a.CheckKnown(); !known.ok()) return known;
  absl::StatusOr<std::string> node = a.String("node", false);
  if (!node.ok()) return node.status();
  absl::StatusOr<std::string> group = a.String("group", false);
  if (!group.ok()) return group.status();
  if (node->empty() == group->empty()) return absl::InvalidArgumentError("give exactly one of 'node' and 'group'");
  absl::StatusOr<int64_t> limit = a.Integer("limit", 1, kMaxTopologyNodes, kDefaultTopologyNodes);
  if (!limit.ok()) return limit.status();
  absl::StatusOr<std::string> cursor = a.String("cursor", false);
  if (!cursor.ok()) return cursor.status();
  if (!node->empty() && (args.contains("limit") || args.contains("cursor"))) {
    return absl::InvalidArgumentError("'limit' and 'cursor' page a group's nodes, not one node");
  }
  return TopologyOf(*node, *group, static_cast<int>(*limit), *cursor, live);
}

absl::StatusOr<json> GetLedger(const json& args, const LiveState& live) {
  Arguments a(args, {"limit", "cursor"});
  if (absl::Status known = a.CheckKnown(); !known.ok()) return known;
  absl::StatusOr<int64_t> limit = a.Integer("limit", 1, kMaxLedgerEntries, kDefaultLedgerEntries);
  if (!limit.ok()) return limit.status();
  absl::StatusOr<std::string> cursor = a.String("cursor", false);
  if (!cursor.ok()) return cursor.status();

  const std::vector<decision::Preference> preferences = live.ledger->Preferences();
  const std::vector<decision::Intent> intents = live.ledger->Intents();
  const Snapshots snapshots = live.gpus->Snapshots();
  std::vector<const decision::NodeGpuSnapshot*> nodes;
  for (const auto& snapshot : snapshots) nodes.push_back(snapshot.get());
  const decision::CapacityHolds holds(intents, preferences, nodes);
  // One sequence: preferences, then intents, then holds, each oldest first, then node groups by id; a page
  // is a slice of it.
  const std::pair<const char*, json> lists[] = {{"preferences", codec::PreferencesToJson(preferences)},
                                                {"intents", codec::IntentsToJson(intents)},
                                                {"holds", codec::HoldsToJson(holds)},
                                                {"nodeGroups", codec::NodeGroupsToJson(live.ledger->NodeGroups())}};
  size_t total = 0;
  for (const auto& [name, entries] : lists) total += entries.size();

  size_t offset = 0;
  if (!cursor->empty()) {
    absl::string_view rest = *cursor;
    if (!absl::ConsumePrefix(&rest, kLedgerCursor) || !absl::SimpleAtoi(rest, &offset) || offset > total) {
      return absl::InvalidArgumentError(absl::StrCat("'cursor' ", *cursor, " is not one this tool gave (or the ledger "
                                                     "shrank below it: start again without a cursor)"));
    }
  }
  json page = {{"entries", json::array()}};
  std::vector<const char*> kinds;
  size_t index = 0;
  for (const auto& [name, entries] : lists) {
    for (const json& entry : entries) {
      if (index >= offset && index < offset + static_cast<size_t>(*limit)) {
        page["entries"].push_back(entry);
        kinds.push_back(name);
      }
      ++index;
    }
  }
  CapBytes(page, "entries");
  json out = json::object();
  for (const auto& [name, entries] : lists) out[name] = json::array();
  for (size_t i = 0; i < page["entries"].size(); ++i) out[kinds[i]].push_back(std::move(page["entries"][i]));
  out["total"] = json::object();
  for (const auto& [name, entries] : lists) out["total"][name] = entries.size();
  if (page.contains("truncated")) out["truncated"] = true;
  if (const size_t next = offset + page["entries"].size(); next < total) {
    out["nextCursor"] = absl::StrCat(kLedgerCursor, next);
  }
  return out;
}

}  // namespace

json LiveToolDefinitions() {
  return json::array({
      Tool("get_topology", "A node's or node group's GPU topology",
           "The GPU topology topofit decides with, for one node or every node of a node group (its node-pool label, "
           "else its instance type): GPUs, links, NICs, NVLink islands, the weakest link; where the topology came "
           "from (the node's topofit.io/gpu-topology annotation, a catalog shape its instance type or GPU product "
           "picked, or a PCIe-only fallback, and why); and which GPUs are free, assigned by topofit or held "
           "otherwise. Nodes are those the extender knows now.",
           ObjectSchema({{"node", {{"type", "string"}, {"description", "a node's name"}}},
                         {"group", {{"type", "string"}, {"description", "a node group's name"}}},
                         {"limit", Limit(kMaxTopologyNodes, kDefaultTopologyNodes, "a group's nodes at most")},
                         {"cursor", {{"type", "string"}, {"description", "the previous answer's nextCursor"}}}},
                        json::array()),
           TopologySchema()),
      Tool("get_ledger", "Preferences, intents, holds and node groups now",
           "The ledger the extender and the expander share, as it is now: each pending GPU pod's placement "
           "preference (GPUs, minimum link and bandwidth, nodes that refused it), each scale-up intent (node group, "
           "nodes asked, the pods it is for), the GPUs those intents hold on the nodes they brought, and the GPU "
           "node groups cluster-autoscaler offered the expander in the last day (GPUs, labels, taints: what the "
           "extender knows a group can grow, even at size zero). One sequence (preferences, intents, holds, each "
           "oldest first, then node groups by id) paged by `limit` and `cursor`.",
           ObjectSchema({{"limit", Limit(kMaxLedgerEntries, kDefaultLedgerEntries, "entries at most")},
                         {"cursor", {{"type", "string"}, {"description", "the previous answer's nextCursor"}}}},
                        json::array()),
           LedgerSchema()),
  });
}

bool IsLiveTool(const std::string& name) { return name == "get_topology" || name == "get_ledger"; }

absl::StatusOr<json> TopologyOf(const std::string& node, const std::string& group, int limit,
                                const std::string& cursor, const LiveState& live) {
  if (group.empty()) {
    const std::shared_ptr<const decision::NodeGpuSnapshot> snapshot = live.gpus->Snapshot(node);
    if (snapshot == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          "no node '", node, "' in the GPU state (topofit knows ", live.gpus->Snapshots().size(),
          " node(s): a node is known once a filter request names it, or with --live-state once its watch lists it)"));
    }
    return json{{"node", node}, {"nodes", json::array({NodeTopologyJson(*snapshot)})}};
  }
  std::string after;
  if (!cursor.empty()) {
    absl::string_view rest = cursor;
    if (!absl::ConsumePrefix(&rest, kNodeCursor) || rest.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'cursor' ", cursor, " is not one this tool gave"));
    }
    after = std::string(rest);
  }
  const Snapshots all = live.gpus->Snapshots();
  Snapshots members;
  for (const auto& snapshot : all) {
    if (GroupOf(*snapshot) == group) members.push_back(snapshot);
  }
  if (members.empty()) {
    return absl::NotFoundError(absl::StrCat("no node of group '", group, "' in the GPU state (groups known: ",
                                            KnownGroups(all), ")"));
  }
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a->node < b->node; });
  json out = {{"group", group}, {"nodes", json::array()}};
  for (const auto& member : members) {
    if (!after.empty() && member->node <= after) continue;
    if (static_cast<int>(out["nodes"].size()) == limit) {
      out["nextCursor"] = "";  // set below, after the byte cap
      break;
    }
    out["nodes"].push_back(NodeTopologyJson(*member));
  }
  if (CapBytes(out, "nodes") || out.contains("nextCursor")) {
    out["nextCursor"] = out["nodes"].empty() ? cursor : absl::StrCat(kNodeCursor, out["nodes"].back()["node"].get<std::string>());
  }
  return out;
}

json CallLiveTool(const std::string& name, const json& arguments, const LiveState& live) {
  absl::StatusOr<json> out = absl::InternalError("no such tool");
  if (name == "get_topology") out = GetTopology(arguments, live);
  if (name == "get_ledger") out = GetLedger(arguments, live);
  if (!out.ok()) return ToolError(out.status().message());
  return ToolResult(*std::move(out));
}

}  // namespace topofit::mcp
