#pragma once

#include <memory>
#include <sstream>
#include <vector>

#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "server/logging.h"
#include "spdlog/sinks/ostream_sink.h"

namespace topofit::server {

// A JSON logger at info whose lines a test reads back, one JSON object each.
struct CapturedLog {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> logger =
      MakeLogger("test", LoggingOptions{LogFormat::kJson, spdlog::level::info},
                 std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  std::vector<nlohmann::json> Lines() const {
    std::vector<nlohmann::json> lines;
    for (absl::string_view line : absl::StrSplit(out.str(), '\n', absl::SkipEmpty())) {
      lines.push_back(nlohmann::json::parse(line));
    }
    return lines;
  }
};

}  // namespace topofit::server
