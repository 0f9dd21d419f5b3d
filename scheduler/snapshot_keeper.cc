#include "scheduler/snapshot_keeper.h"

#include <utility>

namespace topofit::scheduler {

SnapshotKeeper::SnapshotKeeper() : current_(std::make_shared<Generation>()) {}

SnapshotKeeper::Generation::~Generation() {
  std::shared_ptr<Generation> link = std::move(next);
  // Destroying the sole owner of the next generation here, not through its destructor, keeps the stack
  // flat. A generation someone else also holds is left to them.
  while (link != nullptr && link.use_count() == 1) link = std::move(link->next);
}

std::shared_ptr<const void> SnapshotKeeper::Pin() const {
  return std::make_shared<std::shared_ptr<Generation>>(current_);
}

void SnapshotKeeper::Retire(std::shared_ptr<const decision::NodeGpuSnapshot> snapshot) {
  if (snapshot == nullptr) return;
  // Besides this keeper, only pins and an older generation's link hold the current generation, and an older
  // generation lives only through a pin. So a count of one means no reader can see any snapshot retired so
  // far: they all go now. (A pin released meanwhile only makes the count stale on the safe side.)
  if (current_.use_count() == 1) {
    current_->retired.clear();
    return;  // `snapshot` goes with this frame
  }
  current_->retired.push_back(std::move(snapshot));
  current_->next = std::make_shared<Generation>();
  current_ = current_->next;
}

}  // namespace topofit::scheduler
