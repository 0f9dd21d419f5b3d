#pragma once

// The restart collector's notifications (notify/): the --restart-notify-* flags of `topofit extender`, and
// the notifier they build.

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/logger.h>

#include "absl/status/statusor.h"
#include "notify/restart_notifier.h"
#include "server/clock.h"
#include "server/metrics.h"

namespace topofit::cli {

struct RestartNotifyFlags {
  // Files holding the webhook URLs (a mounted Secret: the URL is the credential, so never a flag's value).
  std::string slack_webhook_file;
  std::string json_webhook_file;
  std::string ca_file;  // PEM roots for the receivers; empty: the system's
  std::string cluster;  // named in each message
  std::string mute = "10m";
  int max_restarts = 30;
  bool ignore_exit_zero = false;
  std::vector<std::string> namespaces;
  std::vector<std::string> ignored_namespaces;
  std::vector<std::string> ignored_prefixes;
  std::string channel_key = "alert-slack-channel";

  bool any() const { return !slack_webhook_file.empty() || !json_webhook_file.empty(); }
};

void AddRestartNotifyFlags(CLI::App& cmd, RestartNotifyFlags& flags);

// The notifier the flags ask for; null when they name no webhook. Errors name the flag, never a URL.
absl::StatusOr<std::unique_ptr<notify::RestartNotifier>> BuildRestartNotifier(const RestartNotifyFlags& flags,
                                                                              const server::Clock& clock,
                                                                              spdlog::logger& log,
                                                                              server::MetricsRegistry& registry);

}  // namespace topofit::cli
