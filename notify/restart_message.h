#pragma once

// The bodies the webhook sinks post for a restart (notify/webhook_sink.h). Pure.

#include <string>

#include <nlohmann/json.hpp>

#include "notify/restart_notice.h"

namespace topofit::notify {

// A Slack incoming webhook's body: {"text": ..., "channel": ...} (channel only when the pod names one).
// The text leads with the pod, the cause and why, then the termination, the GPUs and Xids, the Warning
// events and the end of the log, in Slack's mrkdwn with its three special characters escaped; at most
// kMaxSlackTextBytes (the log tail is what gives way).
inline constexpr size_t kMaxSlackTextBytes = 3000;
nlohmann::json SlackBody(const RestartNotice& notice, const std::string& cluster);

// A generic JSON webhook's body: the restart record as GET /decisions gives it, with the cluster, the
// channel and a one-line summary beside it, for receivers that route or store it themselves.
nlohmann::json JsonBody(const RestartNotice& notice, const std::string& cluster);

// One line: "ml/trainer container train restarted (3): gpu-fault: GPU 2 reported Xid 79".
std::string RestartSummary(const history::Record& record);

}  // namespace topofit::notify
