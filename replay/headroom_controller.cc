#include "replay/headroom_controller.h"

#include <map>
#include <vector>

namespace topofit::sim {

void HeadroomController::NodeBooted(SimTime boot) { planner_.ObserveBoot(absl::Milliseconds(boot)); }

bool HeadroomController::Reconcile(World& world) {
  std::vector<int> live(world.buffers().size(), 0);
  auto count = [&](int pod) {
    if (const int buffer = world.BufferOf(world.pods()[pod].klass); buffer >= 0) ++live[buffer];
  };
  for (int pod : world.pending()) count(pod);
  for (int id : world.ready_nodes()) {
    for (int pod : world.nodes()[id].pods) count(pod);
  }
  std::map<decision::HeadroomShape, int> observed;
  for (size_t b = 0; b < live.size(); ++b) observed[world.buffers()[b].shape] = live[b];
  planner_.ObserveLive(world.time(), observed);
  const std::map<decision::HeadroomShape, int> plan = planner_.Plan(world.time());
  bool changed = false;
  for (size_t b = 0; b < world.buffers().size(); ++b) {
    const auto it = plan.find(world.buffers()[b].shape);
    changed |= world.SetBufferReplicas(static_cast<int>(b), it == plan.end() ? 0 : it->second);
  }
  return changed;
}

}  // namespace topofit::sim
