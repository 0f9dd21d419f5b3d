#pragma once

// What the end-to-end tests build alike: pending GPU pods and 8-GPU nodes as the API server holds them, and
// the extender's options for a process on loopback against the fake API server.

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cli/extender_command.h"

namespace topofit::testing {

// A pending pod of namespace ml, uid "uid-<name>", scheduled by the "topofit" profile, asking for `gpus`.
inline nlohmann::json PendingGpuPod(const std::string& name, int gpus,
                                    const std::map<std::string, std::string>& annotations = {},
                                    const std::string& created = "2026-12-01T09:00:00Z") {
  return {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", absl::StrCat("uid-", name)},
                        {"creationTimestamp", created}, {"annotations", annotations}}},
          {"spec",
           {{"schedulerName", "topofit"},
            {"containers",
             {{{"name", "main"},
               {"image", "worker:1"},
               {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

// An 8-GPU node as the API server lists it; the catalog gives it a p4d's topology.
inline nlohmann::json P4dNode(const std::string& name) {
  return {{"metadata",
           {{"name", name},
            {"creationTimestamp", "2026-11-01T00:00:00Z"},
            {"labels", {{"kubernetes.io/hostname", name}, {"node.kubernetes.io/instance-type", "p4d.24xlarge"}}}}},
          {"status", {{"capacity", {{"nvidia.com/gpu", "8"}}}, {"allocatable", {{"nvidia.com/gpu", "8"}}}}}};
}

// The extender on loopback (ephemeral ports), fed by watches of the API server `kubeconfig` names.
inline cli::ExtenderOptions LoopbackExtenderOptions(const std::string& kubeconfig) {
  cli::ExtenderOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.ops_port = 0;
  options.kubeconfig = kubeconfig;
  options.live_state = true;
  return options;
}

}  // namespace topofit::testing
