#pragma once

#include <string>

#include "server/metrics.h"

namespace topofit::server::testing {

// The value of one series as /metrics renders it, e.g.
// `topofit_restarts_total{cause="oom"}`; 0 when the series is absent (never touched).
inline double RenderedValue(const MetricsRegistry& registry, const std::string& series) {
  const std::string text = registry.Render();
  const size_t at = text.find(series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 1));
}

}  // namespace topofit::server::testing
