#include "expander/node_group_recording.h"

#include <optional>
#include <utility>

#include "decision/capacity_ask.h"

namespace topofit::expander {

std::map<std::string, kube::Node> NodeGroupRecording::Due(const kube::NodeTemplates& templates, absl::Time now) {
  std::map<std::string, kube::Node> due;
  absl::MutexLock lock(&mu_);
  absl::erase_if(recorded_, [&](const auto& entry) { return !templates.contains(entry.first); });
  for (const auto& [group, offered] : templates) {
    Recorded& recorded = recorded_[group];
    if (recorded.offered == offered && now - recorded.at < refresh_) continue;
    recorded = {offered, now};
    if (std::optional<kube::Node> kept = decision::GpuGroupTemplate(*offered)) due.emplace(group, *std::move(kept));
  }
  return due;
}

}  // namespace topofit::expander
