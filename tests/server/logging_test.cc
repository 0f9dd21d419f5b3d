#include "server/logging.h"

#include <catch2/catch.hpp>

#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/ostream_sink.h"

namespace topofit::server {
namespace {

struct Captured {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> logger;

  explicit Captured(LogFormat format, spdlog::level::level_enum level = spdlog::level::info) {
    logger = MakeLogger("test", LoggingOptions{format, level}, std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  }
  std::vector<std::string> Lines() const {
    return absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  }
};

TEST_CASE("JSON format: one object per line with ts, level, msg and the fields in order", "[logging]") {
  Captured c(LogFormat::kJson);
  LogEvent(*c.logger, "filter",
           {{"pod", "ns/name"}, {"node", "n1"}, {"verdict", "fail"}, {"reason", "needs 4 NVLink GPUs, 2 free"}});
  const auto lines = c.Lines();
  REQUIRE(lines.size() == 1);
  const auto j = nlohmann::json::parse(lines[0]);
  CHECK(j["level"] == "info");
  CHECK(j["msg"] == "filter");
  CHECK(j["pod"] == "ns/name");
  CHECK(j["node"] == "n1");
  CHECK(j["verdict"] == "fail");
  CHECK(j["reason"] == "needs 4 NVLink GPUs, 2 free");
  // RFC 3339 UTC with milliseconds, e.g. 2024-05-01T12:00:00.123Z.
  const std::string ts = j["ts"];
  CHECK(ts.size() == 24);
  CHECK(ts[10] == 'T');
  CHECK(ts.back() == 'Z');
  // Key order is the order given: a reader sees ts, level, msg first.
  CHECK(lines[0].rfind("{\"ts\":", 0) == 0);
  CHECK(lines[0].find("\"pod\"") < lines[0].find("\"node\""));
}

TEST_CASE("JSON format escapes quotes, backslashes, newlines and control characters", "[logging]") {
  Captured c(LogFormat::kJson);
  const std::string nasty = "say \"hi\"\\ \n\tnext\x01 line";
  LogEvent(*c.logger, "event \"quoted\"", {{"value", nasty}, {"key \"q\"", "v"}});
  c.logger->warn("plain {} message", "\"spdlog\"");
  const auto lines = c.Lines();
  REQUIRE(lines.size() == 2);  // the newline in the value did not split the record
  const auto j = nlohmann::json::parse(lines[0]);
  CHECK(j["msg"] == "event \"quoted\"");
  CHECK(j["value"] == nasty);
  CHECK(j["key \"q\""] == "v");
  const auto plain = nlohmann::json::parse(lines[1]);
  CHECK(plain["level"] == "warning");
  CHECK(plain["msg"] == "plain \"spdlog\" message");
}

TEST_CASE("JSON format survives invalid UTF-8", "[logging]") {
  Captured c(LogFormat::kJson);
  LogEvent(*c.logger, "e", {{"bytes", std::string("ok\xff\xfe")}});
  const auto lines = c.Lines();
  REQUIRE(lines.size() == 1);
  CHECK(nlohmann::json::parse(lines[0])["bytes"] == "ok\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
}

TEST_CASE("Text format: logfmt fields, quoted only when needed", "[logging]") {
  Captured c(LogFormat::kText);
  LogEvent(*c.logger, "filter", {{"pod", "ns/name"}, {"reason", "no \"NV\" set"}, {"empty", ""}});
  const auto lines = c.Lines();
  REQUIRE(lines.size() == 1);
  // After the 24-character timestamp and a space.
  CHECK(lines[0].substr(25) == "info filter pod=ns/name reason=\"no \\\"NV\\\" set\" empty=\"\"");
}

TEST_CASE("Records below the level are dropped", "[logging]") {
  Captured c(LogFormat::kJson, spdlog::level::warn);
  LogEvent(*c.logger, "filter", {{"pod", "a"}});
  LogEvent(*c.logger, "bind", {{"pod", "b"}}, spdlog::level::err);
  const auto lines = c.Lines();
  REQUIRE(lines.size() == 1);
  CHECK(nlohmann::json::parse(lines[0])["level"] == "error");
}

TEST_CASE("Log format and level flags parse, and bad values are errors", "[logging]") {
  CHECK(*ParseLogFormat("json") == LogFormat::kJson);
  CHECK(*ParseLogFormat("TEXT") == LogFormat::kText);
  CHECK(!ParseLogFormat("yaml").ok());
  CHECK(*ParseLogLevel("debug") == spdlog::level::debug);
  CHECK(*ParseLogLevel("warn") == spdlog::level::warn);
  CHECK(*ParseLogLevel("warning") == spdlog::level::warn);
  CHECK(*ParseLogLevel("error") == spdlog::level::err);
  const auto bad = ParseLogLevel("loud");
  REQUIRE(!bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace topofit::server

namespace topofit::server {
namespace {

TEST_CASE("Values keep their type: numbers are JSON numbers, booleans JSON booleans", "[logging]") {
  std::ostringstream out;
  auto logger = MakeLogger("test", LoggingOptions{LogFormat::kJson, spdlog::level::info},
                           std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  const size_t nodes = 5000;
  LogEvent(*logger, "filter",
           {{"pod", "ns/p"}, {"gpus", 4}, {"passed", nodes}, {"fits", false}, {"veto", true}, {"price", 32.77},
            {"ratio", std::numeric_limits<double>::quiet_NaN()}, {"count_text", "8"}, {"negative", int64_t{-3}}});
  const nlohmann::json j = nlohmann::json::parse(out.str());
  CHECK(j["gpus"].is_number_integer());
  CHECK(j["gpus"] == 4);
  CHECK(j["passed"] == 5000);
  CHECK(j["fits"].is_boolean());
  CHECK(j["fits"] == false);
  CHECK(j["veto"] == true);
  CHECK(j["price"].is_number_float());
  CHECK(j["price"] == 32.77);
  CHECK(j["ratio"].is_null());  // JSON has no NaN
  CHECK(j["count_text"] == "8");  // a string stays a string
  CHECK(j["negative"] == -3);
}

TEST_CASE("Text format prints numbers and booleans bare", "[logging]") {
  std::ostringstream out;
  auto logger = MakeLogger("test", LoggingOptions{LogFormat::kText, spdlog::level::info},
                           std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  LogEvent(*logger, "bind", {{"gpus", 8}, {"fits", true}, {"reason", "no NV"}});
  CHECK(out.str().substr(25) == "info bind gpus=8 fits=true reason=\"no NV\"\n");
}

}  // namespace
}  // namespace topofit::server
