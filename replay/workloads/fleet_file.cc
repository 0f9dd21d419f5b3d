#include "replay/workloads/fleet_file.h"

#include <set>
#include <string>
#include <tuple>

#include <yaml-cpp/yaml.h>

#include "absl/strings/str_cat.h"
#include "kube/quantity.h"

namespace topofit::sim {
namespace {

constexpr int64_t kMilliPerMebibyte = int64_t{1024} * 1024 * 1000;

const std::set<std::string>& KnownKeys() {
  static const std::set<std::string> keys = {
      "name",     "instance_type",  "gpu_product",  "gpus",         "cpu",          "memory",
      "price_per_hour", "min_size", "max_size",     "initial_size", "boot_seconds", "nodes_per_domain",
      "domain_label",   "taints",   "provision_failure_rate"};
  return keys;
}

// Reads one group; `where` names it in errors.
absl::StatusOr<NodeGroupSpec> GroupOf(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) return absl::InvalidArgumentError(absl::StrCat(where, ": not a map of keys"));
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (!KnownKeys().contains(key)) return absl::InvalidArgumentError(absl::StrCat(where, ": unknown key \"", key, "\""));
  }
  NodeGroupSpec group;
  if (!node["name"] || node["name"].as<std::string>().empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": no name"));
  group.name = node["name"].as<std::string>();
  const std::string named = absl::StrCat(where, " (", group.name, ")");
  if (!node["max_size"]) return absl::InvalidArgumentError(absl::StrCat(named, ": no max_size"));
  auto text = [&](const char* key, std::string& out) {
    if (node[key]) out = node[key].as<std::string>();
  };
  text("instance_type", group.shape);
  text("gpu_product", group.gpu_product);
  if (node["domain_label"]) text("domain_label", group.domain_label);
  group.gpus = node["gpus"] ? node["gpus"].as<int>() : 0;
  group.min_size = node["min_size"] ? node["min_size"].as<int>() : 0;
  group.max_size = node["max_size"].as<int>();
  group.initial_size = node["initial_size"] ? node["initial_size"].as<int>() : 0;
  group.nodes_per_domain = node["nodes_per_domain"] ? node["nodes_per_domain"].as<int>() : 0;
  group.price_per_hour = node["price_per_hour"] ? node["price_per_hour"].as<double>() : 0;
  group.provision_failure_rate = node["provision_failure_rate"] ? node["provision_failure_rate"].as<double>() : 0;
  if (group.gpus < 0 || group.nodes_per_domain < 0 || group.price_per_hour < 0) {
    return absl::InvalidArgumentError(absl::StrCat(named, ": gpus, nodes_per_domain and price_per_hour must not be negative"));
  }
  if (group.min_size < 0 || group.min_size > group.initial_size || group.initial_size > group.max_size) {
    return absl::InvalidArgumentError(absl::StrCat(named, ": sizes must satisfy 0 <= min_size <= initial_size <= max_size"));
  }
  if (group.provision_failure_rate < 0 || group.provision_failure_rate > 1) {
    return absl::InvalidArgumentError(absl::StrCat(named, ": provision_failure_rate must be in [0, 1]"));
  }
  for (const auto& [key, milli_per_unit, out] :
       {std::tuple{"cpu", int64_t{1}, &group.cpu_milli}, std::tuple{"memory", kMilliPerMebibyte, &group.memory_mib}}) {
    if (!node[key]) continue;
    absl::StatusOr<int64_t> milli = kube::ParseQuantityMilli(node[key].as<std::string>());
    if (!milli.ok() || *milli < 0) {
      return absl::InvalidArgumentError(absl::StrCat(named, ": ", key, " \"", node[key].as<std::string>(),
                                                     "\" is not a quantity (\"142\", \"880Gi\")"));
    }
    *out = *milli / milli_per_unit;
  }
  if (const YAML::Node boot = node["boot_seconds"]) {
    const double low = boot.IsSequence() ? boot[0].as<double>() : boot.as<double>();
    const double high = boot.IsSequence() ? boot[1].as<double>() : low;
    if ((boot.IsSequence() && boot.size() != 2) || low < 0 || high < low) {
      return absl::InvalidArgumentError(absl::StrCat(named, ": boot_seconds is a number or [min, max], 0 <= min <= max"));
    }
    group.provision_delay_min = static_cast<SimTime>(low * kSecond);
    group.provision_delay_max = static_cast<SimTime>(high * kSecond);
  }
  if (const YAML::Node taints = node["taints"]) {
    for (const YAML::Node& taint : taints) group.taints.push_back(taint.as<std::string>());
  }
  return group;
}

}  // namespace

absl::StatusOr<std::vector<NodeGroupSpec>> ParseFleetYaml(absl::string_view yaml) {
  std::vector<NodeGroupSpec> groups;
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    if (root.IsMap() && root["groups"]) root = root["groups"];
    if (!root.IsSequence() || root.size() == 0) {
      return absl::InvalidArgumentError("a fleet is a non-empty list of node groups (under `groups:`)");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < root.size(); ++i) {
      absl::StatusOr<NodeGroupSpec> group = GroupOf(root[i], absl::StrCat("group ", i + 1));
      if (!group.ok()) return group.status();
      if (!names.insert(group->name).second) {
        return absl::InvalidArgumentError(absl::StrCat("group ", i + 1, ": name \"", group->name, "\" given twice"));
      }
      groups.push_back(*std::move(group));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid fleet: ", e.what()));
  }
  return groups;
}

}  // namespace topofit::sim

namespace topofit::sim {

std::string FleetYaml(const std::vector<NodeGroupSpec>& groups) {
  YAML::Emitter out;
  out.SetDoublePrecision(10);
  out << YAML::BeginMap << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  for (const NodeGroupSpec& group : groups) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << group.name;
    if (!group.shape.empty()) out << YAML::Key << "instance_type" << YAML::Value << group.shape;
    if (!group.gpu_product.empty()) out << YAML::Key << "gpu_product" << YAML::Value << group.gpu_product;
    out << YAML::Key << "gpus" << YAML::Value << group.gpus;
    out << YAML::Key << "cpu" << YAML::Value << absl::StrCat(group.cpu_milli, "m");
    out << YAML::Key << "memory" << YAML::Value << absl::StrCat(group.memory_mib, "Mi");
    out << YAML::Key << "price_per_hour" << YAML::Value << group.price_per_hour;
    out << YAML::Key << "min_size" << YAML::Value << group.min_size;
    out << YAML::Key << "max_size" << YAML::Value << group.max_size;
    out << YAML::Key << "initial_size" << YAML::Value << group.initial_size;
    out << YAML::Key << "boot_seconds" << YAML::Value << YAML::Flow << YAML::BeginSeq
        << static_cast<double>(group.provision_delay_min) / kSecond
        << static_cast<double>(group.provision_delay_max) / kSecond << YAML::EndSeq;
    if (group.nodes_per_domain > 0) {
      out << YAML::Key << "nodes_per_domain" << YAML::Value << group.nodes_per_domain;
      out << YAML::Key << "domain_label" << YAML::Value << group.domain_label;
    }
    if (!group.taints.empty()) out << YAML::Key << "taints" << YAML::Value << YAML::Flow << group.taints;
    if (group.provision_failure_rate > 0) {
      out << YAML::Key << "provision_failure_rate" << YAML::Value << group.provision_failure_rate;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return absl::StrCat(out.c_str(), "\n");
}

}  // namespace topofit::sim
