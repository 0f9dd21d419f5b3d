#include "decision/capacity_buffer.h"

namespace topofit::decision {

bool IsCapacityBufferFakePod(const kube::Pod& pod) {
  const auto it = pod.metadata.annotations.find(kCaPodTypeAnnotation);
  return it != pod.metadata.annotations.end() && it->second == kCapacityBufferFakePod;
}

}  // namespace topofit::decision
