#include "decision/restart_diagnosis.h"

#include <catch2/catch.hpp>

namespace topofit::decision {
namespace {

kube::ContainerStatus Ended(int exit_code, const std::string& reason, const std::string& message = "", int signal = 0) {
  kube::ContainerStatus container;
  container.name = "train";
  container.restart_count = 1;
  container.last_termination = kube::ContainerTermination{reason, exit_code, signal, message, 0};
  return container;
}

RestartEvidence Evidence(kube::ContainerStatus container) {
  RestartEvidence evidence;
  evidence.container = std::move(container);
  return evidence;
}

TEST_CASE("Restart diagnosis: each cause from the evidence that names it", "[restart]") {
  struct Row {
    const char* what;
    RestartEvidence evidence;
    RestartCause cause;
    const char* says;
  };
  RestartEvidence unhealthy = Evidence(Ended(1, "Error"));
  unhealthy.unhealthy_gpus = {3};
  RestartEvidence xid_event = Evidence(Ended(1, "Error"));
  xid_event.warnings = {"GpuXid: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."};
  RestartEvidence reported_xid = Evidence(Ended(1, "Error"));
  reported_xid.xids = {48};
  RestartEvidence app_xid = Evidence(Ended(1, "Error", "NVRM: Xid (PCI:0000:3b:00): 31, pid=99, Ch 00000010"));
  RestartEvidence gpu_oom = Evidence(Ended(1, "Error", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"));
  RestartEvidence evicted = Evidence(Ended(143, "Error", "", 15));
  evicted.disruption = "PreemptionByScheduler";
  kube::ContainerStatus pull = Ended(0, "");
  pull.last_termination.reset();
  pull.waiting_reason = "ImagePullBackOff";
  pull.waiting_message = "Back-off pulling image \"nvcr.io/nvidia/pytorch:99.99\"";
  RestartEvidence probe = Evidence(Ended(137, "Error", "", 9));
  probe.warnings = {"Unhealthy: Liveness probe failed: Get \"http://10.0.0.5:8080/healthz\": context deadline exceeded"};
  kube::ContainerStatus never_ended;
  never_ended.name = "train";
  const Row rows[] = {
      {"an unhealthy GPU of the pod", unhealthy, RestartCause::kGpuFault, "GPU 3 of the pod is unhealthy"},
      {"a hardware Xid in the pod's events", xid_event, RestartCause::kGpuFault, "Xid 79 (GPU has fallen off the bus)"},
      {"a hardware Xid the node reports", reported_xid, RestartCause::kGpuFault, "Xid 48 (double-bit ECC error)"},
      {"the memory limit", Evidence(Ended(137, "OOMKilled", "", 9)), RestartCause::kOutOfMemory,
       "exceeded its memory limit (exit code 137, signal 9 (OOMKilled))"},
      {"CUDA out of memory", gpu_oom, RestartCause::kGpuOutOfMemory, "ran out of GPU memory"},
      {"preempted", evicted, RestartCause::kEviction, "PreemptionByScheduler"},
      {"an image that cannot be pulled", Evidence(pull), RestartCause::kImageOrConfig, "ImagePullBackOff"},
      {"a container that cannot run", Evidence(Ended(128, "ContainerCannotRun", "exec: \"trian\": not found")),
       RestartCause::kImageOrConfig, "exec: \"trian\": not found"},
      {"failed liveness probes", probe, RestartCause::kLivenessProbe, "failed liveness probes"},
      {"an application Xid is the application's", app_xid, RestartCause::kApplicationError,
       "Xid 31 (GPU memory page fault), which the application causes"},
      {"a crash", Evidence(Ended(2, "Error")), RestartCause::kApplicationError, "ended with exit code 2 (Error)"},
      {"exit 0 under restartPolicy Always", Evidence(Ended(0, "Completed")), RestartCause::kCompleted, "exited 0"},
      {"no termination recorded", Evidence(never_ended), RestartCause::kUnknown, "nothing recorded"},
  };
  for (const Row& row : rows) {
    SECTION(row.what) {
      const RestartDiagnosis diagnosis = DiagnoseRestart(row.evidence);
      CHECK(RestartCauseName(diagnosis.cause) == RestartCauseName(row.cause));
      CHECK_THAT(diagnosis.reason, Catch::Contains(row.says));
    }
  }
}

TEST_CASE("Restart diagnosis: a GPU fault outranks the OOM kill it caused, OOM outranks a probe", "[restart]") {
  RestartEvidence both = Evidence(Ended(137, "OOMKilled", "NVRM: Xid (PCI:0000:3b:00): 95, pid=7", 9));
  CHECK(DiagnoseRestart(both).cause == RestartCause::kGpuFault);
  CHECK(DiagnoseRestart(both).xids == std::vector<int>{95});
  RestartEvidence oom_probe = Evidence(Ended(137, "OOMKilled", "", 9));
  oom_probe.warnings = {"Unhealthy: Liveness probe failed: timeout"};
  CHECK(DiagnoseRestart(oom_probe).cause == RestartCause::kOutOfMemory);
}

TEST_CASE("XidsIn: the driver's log line, short forms, each code once, no number no code", "[restart]") {
  CHECK(XidsIn("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python") == std::vector<int>{79});
  CHECK(XidsIn("Xid 48 then Xid: 63 then Xid 48 again") == std::vector<int>{48, 63});
  CHECK(XidsIn("Xid (PCI:0000:3b:00): 13, Xid (PCI:0000:3c:00): 119").size() == 2);
  CHECK(XidsIn("no xid here, Xid without number, Xid (unterminated").empty());
  CHECK(XidsIn("").empty());
}

TEST_CASE("PodGpusReportedUnhealthy: the pod's GPUs its node reports unhealthy, nothing from nothing", "[restart]") {
  CHECK(PodGpusReportedUnhealthy("0,1,2,3", "2,6") == std::vector<int>{2});
  CHECK(PodGpusReportedUnhealthy("4,5", "2,6").empty());
  CHECK(PodGpusReportedUnhealthy("3,1", "1,3") == std::vector<int>{1, 3});
  CHECK(PodGpusReportedUnhealthy("", "1").empty());   // the pod holds no GPU topofit knows of
  CHECK(PodGpusReportedUnhealthy("0,1", "").empty());  // every GPU of the node healthy
  CHECK(PodGpusReportedUnhealthy("0,1", "one").empty());
  CHECK(PodGpusReportedUnhealthy("0,0", "0").empty());
}

}  // namespace
}  // namespace topofit::decision
