#include "expander/node_group_recording.h"

#include <optional>
#include <utility>

#include "decision/capacity_ask.h"

namespace topofit::expander {

std::map<std::string, kube::Node> NodeGroupRecording::Due(const kube::NodeTemplates& templates, absl::Time now) {
  std::map<std::string, kube::Node> due;
  absl::MutexLock lock(&mu_);
  auto recorded = recorded_.begin();
  for (const auto& [group, offered] : templates) {
    while (recorded != recorded_.end() && recorded->first < group) recorded = recorded_.erase(recorded);
    if (recorded == recorded_.end() || recorded->first != group) {
      recorded = recorded_.emplace_hint(recorded, group, Recorded{});
    }
    Recorded& entry = (recorded++)->second;
    if (entry.offered == offered && now - entry.at < refresh_) continue;
    entry = {offered, now};
    if (std::optional<kube::Node> kept = decision::GpuGroupTemplate(*offered)) due.emplace(group, *std::move(kept));
  }
  recorded_.erase(recorded, recorded_.end());  // groups CA no longer sends
  return due;
}

}  // namespace topofit::expander
