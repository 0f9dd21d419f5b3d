#pragma once

// cluster-autoscaler's CapacityBuffers (autoscaling.x-k8s.io, CA 1.34+): for each active buffer CA injects
// copies of the buffer's pod template into the pending pods it scales up for, named
// capacity-buffer-<buffer>-<i> and annotated podType: capacityBufferFakePod. They reach the expander inside
// options, shaping the scale-up as real pods would (a template carrying topofit's topology annotations
// asks for the NVLink sets it names), but no such pod ever exists in the API: the capacity they keep warm is
// for whichever real pod comes first.

#include "kube/objects.h"

namespace topofit::decision {

inline constexpr char kCaPodTypeAnnotation[] = "podType";
inline constexpr char kCapacityBufferFakePod[] = "capacityBufferFakePod";

bool IsCapacityBufferFakePod(const kube::Pod& pod);

}  // namespace topofit::decision
