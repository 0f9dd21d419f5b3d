#include "cli/restart_notify_flags.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "notify/webhook_url.h"

namespace topofit::cli {

void AddRestartNotifyFlags(CLI::App& cmd, RestartNotifyFlags& flags) {
  cmd.add_option("--restart-slack-webhook-file", flags.slack_webhook_file,
                 "with --collect-restarts: post each restart to the Slack incoming webhook whose URL this file holds "
                 "(mount it from a Secret; re-read when it changes)");
  cmd.add_option("--restart-webhook-file", flags.json_webhook_file,
                 "with --collect-restarts: post each restart as JSON (the decision record and a summary) to the URL "
                 "this file holds (re-read when it changes)");
  cmd.add_option("--restart-webhook-ca-file", flags.ca_file,
                 "PEM certificate authorities for https webhooks (default: the system's)");
  cmd.add_option("--restart-notify-cluster", flags.cluster, "the cluster's name, shown in each message");
  cmd.add_option("--restart-notify-mute", flags.mute,
                 "after a message about a pod, its further restarts are recorded but not sent for this long")
      ->capture_default_str();
  cmd.add_option("--restart-notify-max-restarts", flags.max_restarts,
                 "do not send restarts of a container that restarted more often than this")
      ->capture_default_str();
  cmd.add_flag("--restart-notify-ignore-exit-zero", flags.ignore_exit_zero,
               "do not send restarts of containers that ended with exit code 0");
  cmd.add_option("--restart-notify-namespaces", flags.namespaces, "send only these namespaces' restarts (default: all)")
      ->delimiter(',');
  cmd.add_option("--restart-notify-ignore-namespaces", flags.ignored_namespaces,
                 "do not send these namespaces' restarts")
      ->delimiter(',');
  cmd.add_option("--restart-notify-ignore-prefixes", flags.ignored_prefixes,
                 "do not send restarts of pods whose names start with one of these")
      ->delimiter(',');
  cmd.add_option("--restart-notify-channel-key", flags.channel_key,
                 "a pod's label, else annotation, of this name sets the Slack channel of its messages")
      ->capture_default_str();
}

absl::StatusOr<std::unique_ptr<notify::RestartNotifier>> BuildRestartNotifier(const RestartNotifyFlags& flags,
                                                                              const server::Clock& clock,
                                                                              spdlog::logger& log,
                                                                              server::MetricsRegistry& registry) {
  if (!flags.any()) return nullptr;
  notify::RestartNoticeOptions options;
  if (!absl::ParseDuration(flags.mute, &options.mute) || options.mute < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("--restart-notify-mute ", flags.mute, ": not a duration (10m)"));
  }
  if (flags.max_restarts < 1) return absl::InvalidArgumentError("--restart-notify-max-restarts: must be at least 1");
  options.max_restarts = flags.max_restarts;
  options.ignore_exit_zero = flags.ignore_exit_zero;
  options.scope = {flags.namespaces, flags.ignored_namespaces, flags.ignored_prefixes};
  options.channel_key = flags.channel_key;

  std::vector<std::unique_ptr<notify::WebhookSink>> sinks;
  const auto add = [&](const std::string& flag, const std::string& path, const std::string& name,
                       notify::WebhookFormat format) -> absl::Status {
    if (path.empty()) return absl::OkStatus();
    absl::StatusOr<codec::HttpUrl> url = notify::ReadWebhookUrl(path);
    if (!url.ok()) return absl::InvalidArgumentError(absl::StrCat(flag, ": ", url.status().message()));
    notify::WebhookSinkOptions sink;
    sink.name = name;
    sink.format = format;
    sink.cluster = flags.cluster;
    sink.ca_file = flags.ca_file;
    sink.url_file = path;
    sinks.push_back(std::make_unique<notify::WebhookSink>(*std::move(url), std::move(sink), log, registry));
    return absl::OkStatus();
  };
  if (absl::Status slack = add("--restart-slack-webhook-file", flags.slack_webhook_file, "slack",
                               notify::WebhookFormat::kSlack);
      !slack.ok()) {
    return slack;
  }
  if (absl::Status json = add("--restart-webhook-file", flags.json_webhook_file, "webhook", notify::WebhookFormat::kJson);
      !json.ok()) {
    return json;
  }
  return std::make_unique<notify::RestartNotifier>(std::move(options), std::move(sinks), clock, registry);
}

}  // namespace topofit::cli
