#include "decision/restart_diagnosis.h"

#include <algorithm>
#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "topology/gpu_set.h"

namespace topofit::decision {
namespace {

// What the driver's Xid codes mean, for the ones a reader meets most (NVIDIA's Xid catalogue).
absl::string_view XidMeaning(int xid) {
  switch (xid) {
    case 13: return "graphics engine exception";
    case 31: return "GPU memory page fault";
    case 43: return "GPU stopped processing";
    case 45: return "preemptive cleanup";
    case 48: return "double-bit ECC error";
    case 63: case 64: return "ECC page retirement or row remapping";
    case 74: return "NVLink error";
    case 79: return "GPU has fallen off the bus";
    case 92: return "high single-bit ECC error rate";
    case 94: return "contained ECC error";
    case 95: return "uncontained ECC error";
    case 119: case 120: return "GSP error";
  }
  return "";
}

std::string XidText(int xid) {
  const absl::string_view meaning = XidMeaning(xid);
  return meaning.empty() ? absl::StrCat("Xid ", xid) : absl::StrCat("Xid ", xid, " (", meaning, ")");
}

bool ContainsAnyCase(absl::string_view text, absl::string_view needle) {
  return absl::StrContains(absl::AsciiStrToLower(text), absl::AsciiStrToLower(needle));
}

// CUDA's words for running out of device memory (PyTorch, the runtime API, the driver API).
bool SaysGpuOutOfMemory(absl::string_view text) {
  return ContainsAnyCase(text, "CUDA out of memory") || ContainsAnyCase(text, "CUDA_ERROR_OUT_OF_MEMORY") ||
         ContainsAnyCase(text, "cudaErrorMemoryAllocation");
}

// The waiting and termination reasons of a container that could not be created or started.
bool CouldNotStart(const kube::ContainerStatus& container) {
  static constexpr std::array<absl::string_view, 8> kWaiting = {
      "ImagePullBackOff",  "ErrImagePull",    "InvalidImageName", "ErrImageNeverPull",
      "CreateContainerConfigError", "CreateContainerError", "RunContainerError", "PreCreateHookError"};
  static constexpr std::array<absl::string_view, 3> kTerminated = {"ContainerCannotRun", "StartError",
                                                                   "CreateContainerError"};
  if (std::find(kWaiting.begin(), kWaiting.end(), container.waiting_reason) != kWaiting.end()) return true;
  return container.last_termination &&
         std::find(kTerminated.begin(), kTerminated.end(), container.last_termination->reason) != kTerminated.end();
}

std::string EndedText(const kube::ContainerTermination& ended) {
  std::string text = absl::StrCat("exit code ", ended.exit_code);
  if (ended.signal != 0) absl::StrAppend(&text, ", signal ", ended.signal);
  if (!ended.reason.empty()) absl::StrAppend(&text, " (", ended.reason, ")");
  return text;
}

}  // namespace

absl::string_view RestartCauseName(RestartCause cause) {
  switch (cause) {
    case RestartCause::kGpuFault: return "gpu-fault";
    case RestartCause::kOutOfMemory: return "oom";
    case RestartCause::kGpuOutOfMemory: return "gpu-oom";
    case RestartCause::kEviction: return "eviction";
    case RestartCause::kImageOrConfig: return "image-or-config";
    case RestartCause::kLivenessProbe: return "liveness-probe";
    case RestartCause::kApplicationError: return "application-error";
    case RestartCause::kCompleted: return "completed";
    case RestartCause::kUnknown: return "unknown";
  }
  return "unknown";
}

std::vector<int> XidsIn(absl::string_view text) {
  std::vector<int> out;
  size_t at = 0;
  while ((at = text.find("Xid", at)) != absl::string_view::npos) {
    at += 3;
    size_t i = at;
    // "Xid (PCI:0000:3b:00): 79" names the device first; "Xid 79" and "Xid: 79" do not.
    if (i < text.size() && (text[i] == ' ' || text[i] == ':')) ++i;
    if (i < text.size() && text[i] == '(') {
      const size_t close = text.find(')', i);
      if (close == absl::string_view::npos) break;
      i = close + 1;
      if (i < text.size() && text[i] == ':') ++i;
    }
    while (i < text.size() && text[i] == ' ') ++i;
    size_t end = i;
    while (end < text.size() && end - i < 4 && absl::ascii_isdigit(static_cast<unsigned char>(text[end]))) ++end;
    int xid = 0;
    if (end > i && absl::SimpleAtoi(text.substr(i, end - i), &xid) && std::find(out.begin(), out.end(), xid) == out.end()) {
      out.push_back(xid);
    }
  }
  return out;
}

bool IsApplicationXid(int xid) { return xid == 13 || xid == 31 || xid == 43 || xid == 45; }

RestartDiagnosis DiagnoseRestart(const RestartEvidence& evidence) {
  RestartDiagnosis out;
  const std::optional<kube::ContainerTermination>& ended = evidence.container.last_termination;
  const auto note_xids = [&out](const std::vector<int>& xids) {
    for (int xid : xids) {
      if (std::find(out.xids.begin(), out.xids.end(), xid) == out.xids.end()) out.xids.push_back(xid);
    }
  };
  note_xids(evidence.xids);
  if (ended) note_xids(XidsIn(ended->message));
  for (const std::string& warning : evidence.warnings) note_xids(XidsIn(warning));
  const auto said = [&](auto predicate) {
    if (ended && predicate(ended->message)) return true;
    return std::any_of(evidence.warnings.begin(), evidence.warnings.end(),
                       [&](const std::string& w) { return predicate(w); });
  };
  const std::string container = absl::StrCat("container ", evidence.container.name);

  if (!evidence.unhealthy_gpus.empty()) {
    out.cause = RestartCause::kGpuFault;
    out.reason = absl::StrCat("GPU fault: GPU ", absl::StrJoin(evidence.unhealthy_gpus, ","),
                              " of the pod is unhealthy on its node");
    if (!out.xids.empty()) absl::StrAppend(&out.reason, "; ", XidText(out.xids.front()));
    return out;
  }
  for (int xid : out.xids) {
    if (!IsApplicationXid(xid)) {
      out.cause = RestartCause::kGpuFault;
      out.reason = absl::StrCat("GPU fault: ", XidText(xid), " on a GPU of the pod");
      return out;
    }
  }
  if (ended && ended->reason == "OOMKilled") {
    out.cause = RestartCause::kOutOfMemory;
    out.reason = absl::StrCat("out of memory: ", container, " exceeded its memory limit (", EndedText(*ended), ")");
    return out;
  }
  if (said(SaysGpuOutOfMemory)) {
    out.cause = RestartCause::kGpuOutOfMemory;
    out.reason = absl::StrCat("GPU out of memory: ", container, " ran out of GPU memory (CUDA)");
    return out;
  }
  if (!evidence.disruption.empty()) {
    out.cause = RestartCause::kEviction;
    out.reason = absl::StrCat("eviction: the pod is being disrupted (", evidence.disruption, ")");
    return out;
  }
  if (CouldNotStart(evidence.container)) {
    out.cause = RestartCause::kImageOrConfig;
    const std::string why = !evidence.container.waiting_reason.empty() ? evidence.container.waiting_reason : ended->reason;
    const std::string& message = evidence.container.waiting_message.empty() && ended ? ended->message
                                                                                     : evidence.container.waiting_message;
    out.reason = absl::StrCat("image or configuration: ", container, " could not start (", why, ")",
                              message.empty() ? "" : ": ", message.substr(0, 200));
    return out;
  }
  if (ended && (ended->exit_code != 0 || ended->signal != 0) &&
      said([](absl::string_view text) { return ContainsAnyCase(text, "Liveness probe failed"); })) {
    out.cause = RestartCause::kLivenessProbe;
    out.reason = absl::StrCat("liveness probe: the kubelet killed ", container, " after failed liveness probes (",
                              EndedText(*ended), ")");
    return out;
  }
  if (ended && (ended->exit_code != 0 || ended->signal != 0)) {
    out.cause = RestartCause::kApplicationError;
    out.reason = absl::StrCat("application error: ", container, " ended with ", EndedText(*ended));
    if (!out.xids.empty()) absl::StrAppend(&out.reason, "; ", XidText(out.xids.front()), ", which the application causes");
    return out;
  }
  if (ended) {
    out.cause = RestartCause::kCompleted;
    out.reason = absl::StrCat("completed: ", container, " exited 0 and was started again");
    return out;
  }
  out.reason = absl::StrCat("unknown: nothing recorded says how ", container, " ended");
  return out;
}

std::vector<int> PodGpusReportedUnhealthy(absl::string_view pod_gpu_ids, absl::string_view node_unhealthy_gpus) {
  // A GpuSet holds up to 32 GPUs, more than any node has.
  constexpr int kMaxGpus = 32;
  const absl::StatusOr<topology::GpuSet> held = topology::GpuSet::Parse(pod_gpu_ids, kMaxGpus);
  const absl::StatusOr<topology::GpuSet> unhealthy = topology::GpuSet::Parse(node_unhealthy_gpus, kMaxGpus);
  std::vector<int> out;
  if (!held.ok() || !unhealthy.ok()) return out;
  for (const topology::GpuId id : (*held & *unhealthy).ids()) out.push_back(id.value);
  return out;
}

}  // namespace topofit::decision
