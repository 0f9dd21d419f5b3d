#pragma once

#include "server/metrics.h"

namespace topofit::cli {

// The release, from the CMake project version: what `topofit --version` prints and the image is tagged.
extern const char kVersion[];

// topofit_build_info{version} 1, as Kubernetes components export their build: dashboards and alerts join
// on it to tell which release a process runs.
void RegisterBuildInfo(server::MetricsRegistry& registry);

}  // namespace topofit::cli
