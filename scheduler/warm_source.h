#pragma once

// Where the extender reads the buffered sets its prioritize keeps whole (decision/warm_capacity.h): the
// cluster's CapacityBuffers and their pod templates. kubeclient::BufferedShapes is the one in a cluster;
// tests may hand it a fake. Thread-safe.

#include <memory>

#include "decision/warm_capacity.h"

namespace topofit::scheduler {

class WarmSource {
 public:
  virtual ~WarmSource() = default;
  // The buffers as last seen; never null (empty: none).
  virtual std::shared_ptr<const decision::WarmCapacity> Warm() const = 0;
};

}  // namespace topofit::scheduler
