#include "server/logging.h"

#include <chrono>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "spdlog/formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace topofit::server {
namespace {

// LogEvent hands its fields to the formatter inside the spdlog payload, after the event name:
//   event \x1e key \x1f kind value \x1e key \x1f kind value ...
// where kind is one character, LogValue::Kind ('s' string, 'n' number, 'b' boolean).
// LogEvent replaces these ASCII record/unit separators in keys and values with spaces. A plain spdlog
// message containing \x1e would be split into fields; no text we log holds that control character.
// Carrying the fields in the payload keeps spdlog's plain API for ordinary messages and needs no state
// beside the message (so it also works if a logger later becomes asynchronous).
constexpr char kRecordSep = '\x1e';
constexpr char kUnitSep = '\x1f';

std::string Sanitize(absl::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == kRecordSep || c == kUnitSep) c = ' ';
  }
  return out;
}

struct Field {
  absl::string_view key;
  LogValue::Kind kind = LogValue::Kind::kString;
  absl::string_view value;
};

struct Record {
  absl::string_view msg;
  std::vector<Field> fields;
};

Record Decode(absl::string_view payload) {
  Record r;
  std::vector<absl::string_view> parts = absl::StrSplit(payload, kRecordSep);
  r.msg = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(parts[i], absl::MaxSplits(kUnitSep, 1));
    Field field{kv.first, LogValue::Kind::kString, kv.second};
    if (!kv.second.empty()) {
      field.kind = static_cast<LogValue::Kind>(kv.second.front());
      field.value = kv.second.substr(1);
    }
    r.fields.push_back(field);
  }
  return r;
}

// A JSON string literal. nlohmann's serializer escapes quotes, backslashes and control characters and,
// with `replace`, turns invalid UTF-8 into U+FFFD instead of throwing.
std::string JsonString(absl::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// logfmt: bare when the value is a simple token, otherwise a quoted, escaped string.
std::string LogfmtValue(absl::string_view s) {
  bool bare = !s.empty();
  for (unsigned char c : s) {
    if (c <= ' ' || c == '=' || c == '"' || c == '\\' || c == 0x7f) bare = false;
  }
  return bare ? std::string(s) : JsonString(s);
}

std::string Timestamp(const spdlog::details::log_msg& msg) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromChrono(msg.time), absl::UTCTimeZone());
}

absl::string_view LevelName(spdlog::level::level_enum level) {
  const auto name = spdlog::level::to_string_view(level);
  return absl::string_view(name.data(), name.size());
}

class LineFormatter final : public spdlog::formatter {
 public:
  explicit LineFormatter(LogFormat format) : format_(format) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const Record r = Decode(absl::string_view(msg.payload.data(), msg.payload.size()));
    std::string line;
    if (format_ == LogFormat::kJson) {
      absl::StrAppend(&line, "{\"ts\":\"", Timestamp(msg), "\",\"level\":\"", LevelName(msg.level),
                      "\",\"msg\":", JsonString(r.msg));
      for (const Field& f : r.fields) {
        absl::StrAppend(&line, ",", JsonString(f.key), ":",
                        f.kind == LogValue::Kind::kString ? JsonString(f.value) : std::string(f.value));
      }
      line += "}\n";
    } else {
      absl::StrAppend(&line, Timestamp(msg), " ", LevelName(msg.level), " ", r.msg);
      for (const Field& f : r.fields) {
        absl::StrAppend(&line, " ", f.key, "=", f.kind == LogValue::Kind::kString ? LogfmtValue(f.value) : std::string(f.value));
      }
      line += "\n";
    }
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<LineFormatter>(format_); }

 private:
  const LogFormat format_;
};

}  // namespace

LogValue::LogValue(double value) : kind_(Kind::kNumber) {
  // Shortest text that reads back as the same double; JSON has no NaN or infinity.
  text_ = std::isfinite(value) ? nlohmann::json(value).dump() : "null";
}

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "text") return LogFormat::kText;
  if (t == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(absl::StrCat("log format '", text, "': want text or json"));
}

absl::StatusOr<spdlog::level::level_enum> ParseLogLevel(absl::string_view text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "trace") return spdlog::level::trace;
  if (t == "debug") return spdlog::level::debug;
  if (t == "info") return spdlog::level::info;
  if (t == "warn" || t == "warning") return spdlog::level::warn;
  if (t == "error") return spdlog::level::err;
  if (t == "critical") return spdlog::level::critical;
  if (t == "off") return spdlog::level::off;
  return absl::InvalidArgumentError(
      absl::StrCat("log level '", text, "': want trace, debug, info, warn, error, critical or off"));
}

std::shared_ptr<spdlog::logger> MakeLogger(const std::string& name, const LoggingOptions& options,
                                           spdlog::sink_ptr sink) {
  if (sink == nullptr) sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  sink->set_formatter(std::make_unique<LineFormatter>(options.format));
  auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
  logger->set_level(options.level);
  // Warnings and worse reach the log even if the process dies right after.
  logger->flush_on(spdlog::level::warn);
  return logger;
}

void SetUpLogging(const LoggingOptions& options) { spdlog::set_default_logger(MakeLogger("topofit", options)); }

void LogEvent(spdlog::logger& logger, absl::string_view event, const LogFields& fields,
              spdlog::level::level_enum level) {
  if (!logger.should_log(level)) return;  // building the payload costs more than the check
  std::string payload = Sanitize(event);
  for (const auto& [key, value] : fields) {
    absl::StrAppend(&payload, std::string(1, kRecordSep), Sanitize(key), std::string(1, kUnitSep),
                    std::string(1, static_cast<char>(value.kind())), Sanitize(value.text()));
  }
  logger.log(level, spdlog::string_view_t(payload.data(), payload.size()));
}

}  // namespace topofit::server
