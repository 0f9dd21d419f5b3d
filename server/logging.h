#pragma once

// Logging for the servers: spdlog with one of two line formats, chosen by --log-format.
//
//   text: 2024-05-01T12:00:00.123Z info filter pod=ns/name node=n1 gpus=4 fits=false reason="no NVLink set"
//   json: {"ts":"2024-05-01T12:00:00.123Z","level":"info","msg":"filter","pod":"ns/name","gpus":4,"fits":false,...}
//
// A decision is logged as one record whose fields stay separate (LogEvent), so a log pipeline can index
// `pod` or `verdict` without parsing prose. Values keep their type: numbers are JSON numbers and booleans
// JSON booleans, so a pipeline can compare and sum them. One convention for names: event names and field
// keys are snake_case (`leader_elected`, `retry_in_seconds`). Plain spdlog calls
// (`logger.info("listening on {}", port)`) work too and become records with only `msg`.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "spdlog/logger.h"
#include "spdlog/sinks/sink.h"

namespace topofit::server {

enum class LogFormat { kText, kJson };

// "text" or "json".
absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text);
// "trace", "debug", "info", "warn" (or "warning"), "error", "critical", "off".
absl::StatusOr<spdlog::level::level_enum> ParseLogLevel(absl::string_view text);

struct LoggingOptions {
  LogFormat format = LogFormat::kText;
  spdlog::level::level_enum level = spdlog::level::info;
};

// A synchronous logger writing `options.format` lines to `sink` (stderr when null). Tests pass an
// ostream sink to read what was logged.
std::shared_ptr<spdlog::logger> MakeLogger(const std::string& name, const LoggingOptions& options,
                                           spdlog::sink_ptr sink = nullptr);

// Makes MakeLogger("topofit", options) the spdlog default logger. Called once, by main.
void SetUpLogging(const LoggingOptions& options);

// One field's value: a string, an integer, a floating-point number or a boolean, printed as its type (in
// JSON a number stays a number; a non-finite double becomes null).
class LogValue {
 public:
  enum class Kind : char { kString = 's', kNumber = 'n', kBool = 'b' };

  LogValue(std::string text) : kind_(Kind::kString), text_(std::move(text)) {}  // NOLINT: implicit by design
  LogValue(absl::string_view text) : kind_(Kind::kString), text_(text) {}       // NOLINT
  LogValue(const char* text) : kind_(Kind::kString), text_(text) {}             // NOLINT
  LogValue(bool value) : kind_(Kind::kBool), text_(value ? "true" : "false") {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  LogValue(T value) : kind_(Kind::kNumber), text_(std::to_string(value)) {}  // NOLINT
  LogValue(double value);                                                     // NOLINT

  Kind kind() const { return kind_; }
  // The value as printed: the string itself, the number in decimal, "true"/"false", or "null".
  const std::string& text() const { return text_; }

 private:
  Kind kind_;
  std::string text_;
};

// Key/value fields of one record, in the order they are printed.
using LogFields = std::vector<std::pair<std::string, LogValue>>;

// Logs `event` with `fields` as one record, e.g.
//   LogEvent(logger, "filter", {{"pod", "ns/name"}, {"node", "n1"}, {"verdict", "fail"}});
// Values are escaped for the format (JSON strings, or logfmt quoting in text). Fields named like the
// record's own keys (ts, level, msg) are printed anyway; avoid them.
void LogEvent(spdlog::logger& logger, absl::string_view event, const LogFields& fields,
              spdlog::level::level_enum level = spdlog::level::info);

}  // namespace topofit::server
