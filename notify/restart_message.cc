#include "notify/restart_message.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "history/pod_events.h"
#include "history/record_json.h"

namespace topofit::notify {
namespace {

constexpr size_t kMaxSlackLineBytes = 300;   // a termination message or an event, in the text
constexpr size_t kMaxSlackWarnings = 5;
constexpr size_t kMaxSlackLogBytes = 1500;

// Slack's mrkdwn reserves &, < and > (links and mentions); everything else is text.
std::string SlackEscaped(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}});
}

// The last `max_bytes` of `text`, starting at a line (or, failing that, at a UTF-8 character): a log's end
// says why it stopped.
std::string Tail(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t start = text.size() - max_bytes;
  if (const size_t line = text.find('\n', start); line != std::string::npos && line + 1 < text.size()) {
    start = line + 1;
  }
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

std::string PodKey(const history::Record& record) {
  return record.pods.empty() ? std::string("(unknown pod)") : record.pods.front().key;
}

}  // namespace

std::string RestartSummary(const history::Record& record) {
  const history::RestartDetail empty;
  const history::RestartDetail& restart = record.restart ? *record.restart : empty;
  return absl::StrCat(PodKey(record), " container ", restart.container, " restarted (", restart.restart_count,
                      "): ", history::ReasonName(record.reason), ": ", restart.diagnosis);
}

nlohmann::json SlackBody(const RestartNotice& notice, const std::string& cluster) {
  const history::Record& record = notice.record;
  const history::RestartDetail empty;
  const history::RestartDetail& restart = record.restart ? *record.restart : empty;
  std::string text = absl::StrCat("*Pod restarted* `", SlackEscaped(PodKey(record)), "` container `",
                                  SlackEscaped(restart.container), "`, restart ", restart.restart_count);
  if (!record.node.empty()) absl::StrAppend(&text, ", node `", SlackEscaped(record.node), "`");
  if (!cluster.empty()) absl::StrAppend(&text, ", cluster `", SlackEscaped(cluster), "`");
  absl::StrAppend(&text, "\n*Cause:* ", history::ReasonName(record.reason), ": ",
                  SlackEscaped(history::TruncateUtf8(restart.diagnosis, kMaxSlackLineBytes)));
  if (!restart.termination_reason.empty() || restart.exit_code != 0 || restart.signal != 0) {
    absl::StrAppend(&text, "\n*Last termination:* ", SlackEscaped(restart.termination_reason), " exit code ",
                    restart.exit_code, ", signal ", restart.signal);
    if (!restart.termination_message.empty()) {
      absl::StrAppend(&text, ": ", SlackEscaped(history::TruncateUtf8(restart.termination_message, kMaxSlackLineBytes)));
    }
  }
  if (!restart.waiting_reason.empty()) absl::StrAppend(&text, "\n*Waiting:* ", SlackEscaped(restart.waiting_reason));
  if (!restart.gpu_ids.empty() || record.gpus > 0) {
    absl::StrAppend(&text, "\n*GPUs:* ", record.gpus, " asked");
    if (!restart.gpu_ids.empty()) absl::StrAppend(&text, ", ids ", SlackEscaped(restart.gpu_ids));
    if (!restart.unhealthy_gpus.empty()) absl::StrAppend(&text, ", unhealthy ", absl::StrJoin(restart.unhealthy_gpus, ","));
    if (!restart.xids.empty()) absl::StrAppend(&text, ", Xid ", absl::StrJoin(restart.xids, ","));
  }
  if (!restart.node_conditions.empty() || !restart.node_warnings.empty()) {
    absl::StrAppend(&text, "\n*Node:* ", SlackEscaped(history::TruncateUtf8(restart.node_conditions, kMaxSlackLineBytes)));
    if (!restart.node_warnings.empty()) {
      absl::StrAppend(&text, "; ", restart.node_warnings.size(), " Warning event(s), the first: ",
                      SlackEscaped(history::TruncateUtf8(restart.node_warnings.front(), kMaxSlackLineBytes)));
    }
  }
  if (!restart.warnings.empty()) {
    absl::StrAppend(&text, "\n*Warning events:*");
    const size_t shown = std::min(restart.warnings.size(), kMaxSlackWarnings);
    for (size_t i = 0; i < shown; ++i) {
      absl::StrAppend(&text, "\n- ", SlackEscaped(history::TruncateUtf8(restart.warnings[i], kMaxSlackLineBytes)));
    }
    if (restart.warnings.size() > shown) absl::StrAppend(&text, "\n- and ", restart.warnings.size() - shown, " more");
  }
  text = history::TruncateUtf8(std::move(text), kMaxSlackTextBytes);
  if (!restart.log_tail.empty()) {
    // What room is left goes to the end of the log, in a code block.
    constexpr absl::string_view kOpen = "\n*Log tail:*\n```\n";
    constexpr absl::string_view kClose = "\n```";
    const size_t used = text.size() + kOpen.size() + kClose.size();
    if (used < kMaxSlackTextBytes) {
      const std::string tail = Tail(SlackEscaped(restart.log_tail), std::min(kMaxSlackLogBytes, kMaxSlackTextBytes - used));
      if (!tail.empty()) absl::StrAppend(&text, kOpen, tail, kClose);
    }
  }
  nlohmann::json body = {{"text", text}};
  if (!notice.channel.empty()) body["channel"] = notice.channel;
  return body;
}

nlohmann::json JsonBody(const RestartNotice& notice, const std::string& cluster) {
  nlohmann::json body = {{"kind", "restart"},
                         {"summary", RestartSummary(notice.record)},
                         {"record", history::RecordToJson(notice.record)}};
  if (!cluster.empty()) body["cluster"] = cluster;
  if (!notice.channel.empty()) body["channel"] = notice.channel;
  return body;
}

}  // namespace topofit::notify
