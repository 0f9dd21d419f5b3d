#pragma once

#include <map>
#include <string>

#include "absl/time/time.h"
#include "decision/intent.h"
#include "kube/objects.h"
#include "tests/kube/builders.h"

namespace topofit::decision::testing {

// A scale-up of the p4d group, for the tests of holds on new capacity.
inline constexpr int64_t kIntentSeconds = 1'800'000'000;  // when the expander chose the scale-up

// A p4d node created at `created` (Unix seconds): the scale-up's when created after kIntentSeconds.
inline kube::Node P4d(const std::string& name, int64_t created) {
  return kube::testing::MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)
      .created(created);
}

// An intent holding the new p4d capacity for these pods (uid -> GPUs).
inline Intent P4dIntentFor(std::map<std::string, int> held) {
  Intent intent;
  intent.node_group = "p4d-group";
  for (const auto& [uid, gpus] : held) intent.pod_uids.push_back(uid);
  intent.pod_gpus = std::move(held);
  intent.node_count = 1;
  intent.node_labels = {{"node.kubernetes.io/instance-type", "p4d.24xlarge"}};
  intent.recorded = absl::FromUnixSeconds(kIntentSeconds);
  return intent;
}

}  // namespace topofit::decision::testing
