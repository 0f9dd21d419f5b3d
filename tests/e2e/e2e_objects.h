#pragma once

// What the end-to-end tests build alike: pending GPU pods and 8-GPU nodes as the API server holds them, the
// extender's options for a process on loopback against the fake API server, and its verbs called over HTTP.

#include <map>
#include <string>

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cli/extender_command.h"
#include "proto/k8s_core_v1.pb.h"
#include "tests/cli/scratch_dir.h"

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

// The extender on loopback (ephemeral ports), fed by watches of the API server at `api_url` (trusting the CA
// in `ca_file`), through a kubeconfig written in `scratch`.
inline cli::ExtenderOptions LoopbackExtenderOptions(cli::testing::ScratchDir& scratch, const std::string& api_url,
                                                    const std::string& ca_file) {
  scratch.Write("kubeconfig", cli::testing::ScratchDir::Kubeconfig(
                                  absl::StrCat("server: \"", api_url, "\", certificate-authority: \"", ca_file, "\"")));
  cli::ExtenderOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.ops_port = 0;
  options.kubeconfig = scratch.path("kubeconfig");
  options.live_state = true;
  return options;
}

// The extender's answer to a POST of `args` to `path` ("/filter", "/bind") on loopback `port`: a 200's body.
inline nlohmann::json PostToExtender(int port, const std::string& path, const nlohmann::json& args) {
  httplib::Client client("127.0.0.1", port);
  httplib::Result result = client.Post(path, args.dump(), "application/json");
  REQUIRE(result);
  REQUIRE(result->status == 200);
  return nlohmann::json::parse(result->body);
}

// A node group's template node, as CA builds it from the group (no real hostname, the group's labels);
// `gpus` 0: no nvidia.com/gpu at all, as where only a DRA driver hands out GPUs.
inline ::k8s::io::api::core::v1::Node TemplateNode(const std::string& group, const std::string& instance_type,
                                                  int gpus) {
  ::k8s::io::api::core::v1::Node node;
  const std::string name = absl::StrCat("template-node-for-", group, "-1234");
  node.mutable_metadata()->set_name(name);
  auto& labels = *node.mutable_metadata()->mutable_labels();
  labels["kubernetes.io/hostname"] = name;
  labels["node.kubernetes.io/instance-type"] = instance_type;
  labels["eks.amazonaws.com/nodegroup"] = group;
  if (gpus > 0) {
    (*node.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string(std::to_string(gpus));
    (*node.mutable_status()->mutable_capacity())["nvidia.com/gpu"].set_string(std::to_string(gpus));
  }
  return node;
}

// The stand-in for cluster-autoscaler's side of a ProvisioningRequest: the pod it makes from the request's
// PodTemplate as PodsForProvisioningRequest does (name <request>-0-0, uid "<namespace>/<name>", the
// template's metadata plus the consume annotation), with the fields the expander reads: the containers'
// limits and the ResourceClaims the template names.
inline ::k8s::io::api::core::v1::Pod PodFromTemplate(const nlohmann::json& request, const nlohmann::json& pod_template) {
  ::k8s::io::api::core::v1::Pod pod;
  const std::string name = absl::StrCat(request["metadata"]["name"].get<std::string>(), "-0-0");
  pod.mutable_metadata()->set_name(name);
  pod.mutable_metadata()->set_namespace_("ml");
  pod.mutable_metadata()->set_uid(absl::StrCat("ml/", name));
  const nlohmann::json annotations = pod_template["template"]["metadata"].value("annotations", nlohmann::json::object());
  for (const auto& [key, value] : annotations.items()) {
    (*pod.mutable_metadata()->mutable_annotations())[key] = value.get<std::string>();
  }
  (*pod.mutable_metadata()->mutable_annotations())["autoscaling.x-k8s.io/consume-provisioning-request"] =
      request["metadata"]["name"].get<std::string>();
  const nlohmann::json& spec = pod_template["template"]["spec"];
  pod.mutable_spec()->set_schedulername(spec["schedulerName"].get<std::string>());
  for (const nlohmann::json& from : spec["containers"]) {
    ::k8s::io::api::core::v1::Container* container = pod.mutable_spec()->add_containers();
    container->set_name(from["name"].get<std::string>());
    const nlohmann::json limits = from["resources"].value("limits", nlohmann::json::object());
    for (const auto& [resource, quantity] : limits.items()) {
      (*container->mutable_resources()->mutable_limits())[resource].set_string(quantity.get<std::string>());
    }
  }
  for (const nlohmann::json& from : spec.value("resourceClaims", nlohmann::json::array())) {
    ::k8s::io::api::core::v1::PodResourceClaim* claim = pod.mutable_spec()->add_resourceclaims();
    claim->set_name(from["name"].get<std::string>());
    claim->set_resourceclaimname(from["resourceClaimName"].get<std::string>());
  }
  return pod;
}

}  // namespace topofit::testing
