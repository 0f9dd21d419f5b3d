#pragma once

#include <memory>
#include <vector>

#include "decision/node_snapshot.h"

namespace topofit::scheduler {

// Keeps node snapshots alive for readers that hold them by one pin instead of one reference count each.
//
// Why: a 5,000-node NodeNames request copied 5,000 shared_ptrs, and each copy is a locked increment on a
// control block that is not in cache; locked instructions do not overlap, so the misses were paid one
// after another (most of the time of looking the nodes up, measured with perf). A reader now takes one
// Pin() per request and gets aliasing pointers whose count is the pin's.
//
// How: snapshots replaced or dropped by a writer are retired into the current generation when a reader may
// still see them, and a new generation starts. A pin holds the generation that was current when it was
// taken, and each generation holds the next, so a pin keeps alive every snapshot retired after it was
// taken: all the snapshots it could have read. With no pin outstanding a retired snapshot goes at once.
//
// Not thread-safe by itself: Pin() under the owner's reader lock, Retire() under its writer lock (pins may
// be released from any thread at any time).
class SnapshotKeeper {
 public:
  SnapshotKeeper();

  // A reader's hold on every snapshot current now. Each call returns a count of its own, so that readers on
  // other threads copying pointers aliased to their pins do not contend for one cache line.
  std::shared_ptr<const void> Pin() const;

  // `snapshot` is no longer the node's: destroyed now, or once the pins that could have read it are gone.
  void Retire(std::shared_ptr<const decision::NodeGpuSnapshot> snapshot);

 private:
  struct Generation {
    std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> retired;
    std::shared_ptr<Generation> next;
    ~Generation();  // unlinks the chain iteratively: a long-held pin can precede many generations
  };
  std::shared_ptr<Generation> current_;
};

}  // namespace topofit::scheduler
