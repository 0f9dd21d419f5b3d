#pragma once

// Which restarts are worth a message (issue 35): the restart collector records every restart, but an
// on-call channel wants one message per crash-looping pod, not one per restart. The options and their
// defaults are those of k8s-pod-restart-info-collector, the tool on-call engineers already run: a pod is
// muted for 10 minutes after a message, a container past 30 restarts is no longer news, exits with code 0
// can be left out, the pods are scoped by namespace and name prefix, and a pod picks its own channel with a
// label or annotation. Pure: time comes in as an argument.

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "absl/time/time.h"
#include "decision/pod_scope.h"
#include "history/record.h"
#include "kube/objects.h"

namespace topofit::notify {

struct RestartNoticeOptions {
  decision::PodScope scope;
  absl::Duration mute = absl::Minutes(10);  // after a message, the pod's next restarts are muted this long
  int max_restarts = 30;                    // a container restarted more often than this is not reported
  bool ignore_exit_zero = false;            // leave out containers that ended with exit code 0
  std::string channel_key = "alert-slack-channel";  // the pod's label, else annotation, naming its channel
  // Pods remembered for the mute window; past this the longest-muted are forgotten first (a restart storm
  // across many pods cannot grow the table without bound).
  size_t max_muted_pods = 100000;
};

enum class NoticeVerdict {
  kSend,
  kOutOfScope,        // the namespace or name is left out
  kMuted,             // the pod had a message less than `mute` ago
  kPastMaxRestarts,   // restartCount > max_restarts
  kExitedZero,        // ignore_exit_zero, and the container ended with code 0
  kNotARestart,       // the record carries no restart
};
std::string_view NoticeVerdictName(NoticeVerdict verdict);

// A restart to post, and where.
struct RestartNotice {
  history::Record record;  // a restart record (Kind::kRestart, `restart` set)
  std::string channel;     // the pod's own channel; empty: the webhook's default
};

class RestartNoticeGate {
 public:
  explicit RestartNoticeGate(RestartNoticeOptions options);

  // Whether the restart `record` of `pod` gets a message at `now`. A kSend starts the pod's mute window;
  // nothing else changes the gate.
  NoticeVerdict Admit(const kube::ObjectMeta& pod, const history::Record& record, absl::Time now);
  // The pod's channel: its label `channel_key`, else its annotation; empty when neither is set.
  std::string ChannelOf(const kube::ObjectMeta& pod) const;

  size_t muted_pods() const { return muted_until_.size(); }

 private:
  void Forget(absl::Time now);

  const RestartNoticeOptions options_;
  std::unordered_map<std::string, absl::Time> muted_until_;  // by namespace/name
};

}  // namespace topofit::notify
