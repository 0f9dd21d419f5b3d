#include "cli/build_info.h"

namespace topofit::cli {

const char kVersion[] = TOPOFIT_VERSION;

void RegisterBuildInfo(server::MetricsRegistry& registry) {
  registry.AddGauge("topofit_build_info", "Always 1; the labels say which build this process runs.", {"version"})
      .Set(1, {kVersion});
}

}  // namespace topofit::cli
