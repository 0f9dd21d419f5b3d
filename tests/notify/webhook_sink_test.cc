#include "notify/webhook_sink.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "tests/kubeclient/eventually.h"
#include "tests/notify/webhook_receiver.h"
#include "tests/server/rendered_metric.h"

namespace topofit::notify {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::kPatience;
using testing::WebhookReceiver;

RestartNotice Notice(const std::string& pod) {
  RestartNotice notice;
  notice.record.kind = history::Kind::kRestart;
  notice.record.component = history::Component::kRestarts;
  notice.record.reason = history::Reason::kRestartOutOfMemory;
  notice.record.pods = {{"uid-" + pod, "ml/" + pod}};
  history::RestartDetail restart;
  restart.container = "train";
  restart.restart_count = 1;
  restart.exit_code = 137;
  restart.termination_reason = "OOMKilled";
  restart.diagnosis = "the container reached its memory limit";
  notice.record.restart = restart;
  return notice;
}

// Backoff short enough for a test; the policy (doubling, capped, Retry-After) is the production one.
WebhookSinkOptions Fast(WebhookFormat format = WebhookFormat::kJson) {
  WebhookSinkOptions options;
  options.format = format;
  options.first_backoff = absl::Milliseconds(5);
  options.max_backoff = absl::Milliseconds(40);
  options.timeout = absl::Seconds(5);
  return options;
}

struct Sink {
  Sink(const std::string& url, WebhookSinkOptions options)
      : sink(codec::ParseHttpUrl(url).value(), std::move(options), log, registry) {}
  double Count(const std::string& result) const {
    return server::testing::RenderedValue(
        registry, absl::StrCat("topofit_restart_notifications_total{sink=\"webhook\",result=\"", result, "\"}"));
  }
  server::MetricsRegistry registry;
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  WebhookSink sink;
};

TEST_CASE("WebhookSink: posts the JSON body to the URL's path", "[notify]") {
  WebhookReceiver receiver;
  Sink s(receiver.url(), Fast());
  REQUIRE(s.sink.Offer(Notice("trainer")));
  REQUIRE(s.sink.WaitIdle(kPatience));
  REQUIRE(receiver.accepted().size() == 1);
  CHECK(receiver.accepted()[0]["summary"] == "ml/trainer container train restarted (1): oom: the container reached its memory limit");
  CHECK(receiver.accepted()[0]["record"]["kind"] == "restart");
  CHECK(receiver.paths() == std::vector<std::string>{"/services/T000/B000/secret"});
  CHECK(s.Count("sent") == 1);
}

TEST_CASE("WebhookSink: a failing receiver is retried with backoff until it recovers, once delivered", "[notify]") {
  WebhookReceiver receiver;
  receiver.Script({{503}, {500}, {429, "0"}});
  Sink s(receiver.url(), Fast());
  REQUIRE(s.sink.Offer(Notice("trainer")));
  REQUIRE(s.sink.WaitIdle(kPatience));
  CHECK(receiver.posts() == 4);
  CHECK(receiver.accepted().size() == 1);
  CHECK(s.Count("sent") == 1);
  CHECK(s.registry.Render().find("topofit_restart_notification_retries_total{sink=\"webhook\"} 3") != std::string::npos);
}

TEST_CASE("WebhookSink: a receiver that refuses the message (4xx) is not retried, one that never recovers is given up",
          "[notify]") {
  WebhookReceiver receiver;
  SECTION("404: the webhook is gone") {
    receiver.Script({{404}});
    Sink s(receiver.url(), Fast());
    REQUIRE(s.sink.Offer(Notice("trainer")));
    REQUIRE(s.sink.WaitIdle(kPatience));
    CHECK(receiver.posts() == 1);
    CHECK(s.Count("rejected") == 1);
  }
  SECTION("503 five times: every attempt spent") {
    receiver.Script({{503}, {503}, {503}, {503}, {503}, {503}});
    Sink s(receiver.url(), Fast());
    REQUIRE(s.sink.Offer(Notice("trainer")));
    REQUIRE(s.sink.WaitIdle(kPatience));
    CHECK(receiver.posts() == 5);
    CHECK(s.Count("failed") == 1);
    // The next message finds the receiver recovered.
    REQUIRE(s.sink.Offer(Notice("next")));
    REQUIRE(s.sink.WaitIdle(kPatience));
    CHECK(s.Count("sent") == 1);
  }
  SECTION("nobody listens") {
    WebhookSinkOptions options = Fast();
    options.max_attempts = 2;
    Sink s("http://127.0.0.1:1/hook", options);
    REQUIRE(s.sink.Offer(Notice("trainer")));
    REQUIRE(s.sink.WaitIdle(kPatience));
    CHECK(s.Count("failed") == 1);
  }
}

TEST_CASE("WebhookSink: a slow receiver never blocks Offer, past the queue messages are dropped and counted",
          "[notify]") {
  WebhookReceiver receiver;
  receiver.Hold();
  WebhookSinkOptions options = Fast();
  options.queue_capacity = 3;
  Sink s(receiver.url(), options);
  REQUIRE(s.sink.Offer(Notice("p0")));
  // The posting thread holds p0 at the receiver; three more fill the queue, the rest are dropped at once.
  REQUIRE(Eventually([&] { return receiver.posts() == 1; }));
  int queued = 0;
  for (int i = 1; i <= 10; ++i) queued += s.sink.Offer(Notice(absl::StrCat("p", i))) ? 1 : 0;
  CHECK(queued == 3);
  CHECK(s.Count("dropped") == 7);
  receiver.Release();
  REQUIRE(s.sink.WaitIdle(kPatience));
  CHECK(receiver.accepted().size() == 4);
  CHECK(s.Count("sent") == 4);
}

TEST_CASE("WebhookSink: Stop gives up a retry waiting for its backoff and drops what is queued", "[notify]") {
  WebhookReceiver receiver;
  receiver.Script({{503}});
  WebhookSinkOptions options = Fast();
  options.first_backoff = absl::Hours(1);
  options.max_backoff = absl::Hours(1);
  Sink s(receiver.url(), options);
  REQUIRE(s.sink.Offer(Notice("p0")));
  REQUIRE(Eventually([&] { return receiver.posts() == 1; }));
  REQUIRE(s.sink.Offer(Notice("p1")));
  s.sink.Stop();  // returns at once, not after the hour
  CHECK(s.Count("dropped") == 2);
  CHECK_FALSE(s.sink.Offer(Notice("p2")));
}

TEST_CASE("WebhookSink: a rotated URL file is read again before the next post, a broken one keeps the last URL",
          "[notify]") {
  WebhookReceiver before;
  WebhookReceiver after;
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / absl::StrCat("topofit-webhook-url-", ::getpid());
  const auto write = [&file](const std::string& text, int seconds) {
    std::ofstream(file) << text;
    // A distinct modification time, as the kubelet's swap of a Secret volume gives.
    std::filesystem::last_write_time(file, std::filesystem::file_time_type::clock::now() + std::chrono::seconds(seconds));
  };
  write(before.url() + "\n", 0);
  WebhookSinkOptions options = Fast();
  options.url_file = file.string();
  Sink s(before.url(), options);
  REQUIRE(s.sink.Offer(Notice("one")));
  REQUIRE(s.sink.WaitIdle(kPatience));
  write(after.url("/rotated"), 1);
  REQUIRE(s.sink.Offer(Notice("two")));
  REQUIRE(s.sink.WaitIdle(kPatience));
  write("not a url", 2);
  REQUIRE(s.sink.Offer(Notice("three")));
  REQUIRE(s.sink.WaitIdle(kPatience));
  CHECK(before.accepted().size() == 1);
  CHECK(after.paths() == std::vector<std::string>{"/rotated", "/rotated"});
  std::filesystem::remove(file);
}

TEST_CASE("WebhookSink: https, verified against the CA it is given", "[notify]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  WebhookReceiver receiver(certs.get());
  SECTION("the receiver's CA: sent") {
    WebhookSinkOptions options = Fast(WebhookFormat::kSlack);
    options.ca_file = certs->ca_cert_file();
    Sink s(receiver.url(), options);
    REQUIRE(s.sink.Offer(Notice("trainer")));
    REQUIRE(s.sink.WaitIdle(kPatience));
    REQUIRE(receiver.accepted().size() == 1);
    CHECK(receiver.accepted()[0]["text"].get<std::string>().find("`ml/trainer`") != std::string::npos);
  }
  SECTION("the system's roots do not know the test CA: never sent") {
    WebhookSinkOptions options = Fast();
    options.max_attempts = 1;
    Sink s(receiver.url(), options);
    REQUIRE(s.sink.Offer(Notice("trainer")));
    REQUIRE(s.sink.WaitIdle(kPatience));
    CHECK(receiver.accepted().empty());
    CHECK(s.Count("failed") == 1);
  }
}

}  // namespace
}  // namespace topofit::notify
