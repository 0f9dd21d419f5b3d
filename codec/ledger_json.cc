#include "codec/ledger_json.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "decision/node_topology.h"

namespace topofit::codec {
namespace {

using Json = nlohmann::json;

const char* OperatorName(kube::NodeSelectorOperator op) {
  switch (op) {
    case kube::NodeSelectorOperator::kIn: return "In";
    case kube::NodeSelectorOperator::kNotIn: return "NotIn";
    case kube::NodeSelectorOperator::kExists: return "Exists";
    case kube::NodeSelectorOperator::kDoesNotExist: return "DoesNotExist";
    case kube::NodeSelectorOperator::kGt: return "Gt";
    case kube::NodeSelectorOperator::kLt: return "Lt";
    case kube::NodeSelectorOperator::kUnknown: break;
  }
  return "Unknown";
}

Json RequirementsToJson(const std::vector<kube::NodeSelectorRequirement>& requirements) {
  Json out = Json::array();
  for (const kube::NodeSelectorRequirement& r : requirements) {
    out.push_back({{"key", r.key}, {"operator", OperatorName(r.op)}, {"values", r.values}});
  }
  return out;
}

std::string Rfc3339(absl::Time t) { return absl::FormatTime(absl::RFC3339_sec, t, absl::UTCTimeZone()); }

}  // namespace

Json PreferencesToJson(const std::vector<decision::Preference>& preferences) {
  Json out = Json::array();
  for (const decision::Preference& p : preferences) {
    Json entry = {{"pod", p.pod_key},
                  {"uid", p.pod_uid},
                  {"gpus", p.gpus},
                  {"minLink", std::string(topology::LinkClassName(p.min_link))},
                  {"minBandwidthGBps", static_cast<double>(p.min_bandwidth_mbps) / 1000.0},
                  {"nodeSelector", p.node_selector},
                  {"refusedNodes", p.refused_nodes},
                  {"firstSeen", Rfc3339(p.first_seen)},
                  {"lastSeen", Rfc3339(p.last_seen)}};
    if (p.required_node_affinity) {
      Json terms = Json::array();
      for (const kube::NodeSelectorTerm& term : p.required_node_affinity->terms) {
        terms.push_back({{"matchExpressions", RequirementsToJson(term.match_expressions)},
                         {"matchFields", RequirementsToJson(term.match_fields)}});
      }
      entry["requiredNodeAffinity"] = std::move(terms);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

Json IntentsToJson(const std::vector<decision::Intent>& intents) {
  Json out = Json::array();
  for (const decision::Intent& i : intents) {
    out.push_back({{"nodeGroup", i.node_group}, {"podUids", i.pod_uids}, {"podGpus", i.pod_gpus}, {"nodeCount", i.node_count},
                   {"nodeLabels", i.node_labels}, {"recorded", Rfc3339(i.recorded)}});
  }
  return out;
}

Json HoldsToJson(const decision::CapacityHolds& holds) {
  Json out = Json::array();
  for (const decision::CapacityHolds::Pool& pool : holds.pools()) {
    Json held = Json::object();
    for (size_t i = 0; i < pool.nodes.size(); ++i) {
      if (pool.held[i] > 0) held[pool.nodes[i]] = pool.held[i];
    }
    Json scaled_up = Json::object();
    for (const auto& [uid, pod] : pool.pending) scaled_up[uid] = Rfc3339(pod.scaled_up);
    out.push_back({{"nodeGroup", pool.node_group}, {"pods", pool.pods}, {"nodes", pool.nodes}, {"gpusHeld", held},
                   {"scaledUp", scaled_up}});
  }
  return out;
}

Json NodeGroupsToJson(const std::map<std::string, ledger::NodeGroupTemplate>& groups) {
  Json out = Json::array();
  for (const auto& [group, entry] : groups) {
    const kube::Node& template_node = entry.template_node;
    Json taints = Json::array();
    for (const kube::Taint& taint : template_node.spec.taints) {
      taints.push_back(absl::StrCat(taint.key, taint.value.empty() ? "" : "=", taint.value, ":",
                                    kube::TaintEffectName(taint.effect)));
    }
    out.push_back({{"nodeGroup", group}, {"gpus", decision::AllocatableGpus(template_node)},
                   {"labels", template_node.metadata.labels}, {"taints", std::move(taints)},
                   {"trusted", entry.trusted}});
  }
  return out;
}

}  // namespace topofit::codec
