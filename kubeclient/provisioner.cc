#include "kubeclient/provisioner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "kube/topofit_annotations.h"
#include "server/logging.h"

namespace topofit::kubeclient {

Provisioner::Provisioner(KubeApi& api, spdlog::logger& log) : api_(api), log_(log), worker_([this] { Run(); }) {}

Provisioner::~Provisioner() { Stop(); }

void Provisioner::RequestFor(const scheduler::PodRef& pod, const scheduler::CapacityPlacement& where) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || !requested_.insert(pod.uid).second) return;
  tasks_.push_back(Task{true, pod, where});
}

void Provisioner::Withdraw(const scheduler::PodRef& pod) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  requested_.erase(pod.uid);
  tasks_.push_back(Task{false, pod, {}});
}

void Provisioner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    tasks_.clear();
  }
  if (worker_.joinable()) worker_.join();
}

ProvisionerStats Provisioner::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Provisioner::Run() {
  for (;;) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Provisioner* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->tasks_.empty();
          },
          this));
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    if (task.create) Create(task); else Remove(task);
  }
}

void Provisioner::Create(const Task& task) {
  const std::string name = ProvisioningObjectName(task.pod.name);
  const auto fail = [&](absl::string_view step, const absl::Status& status) {
    server::LogEvent(log_, "provisioning_request",
                     {{"pod", task.pod.key()}, {"result", "failed"}, {"step", std::string(step)},
                      {"reason", std::string(status.message())}},
                     spdlog::level::warn);
    absl::MutexLock lock(&mu_);
    ++stats_.failed;
    requested_.erase(task.pod.uid);  // the pod's next refusal asks again
  };
  absl::StatusOr<nlohmann::json> pod = api_.GetPodObject(task.pod.namespace_name, task.pod.name);
  std::string skip;
  if (!pod.ok() && pod.status().code() == absl::StatusCode::kNotFound) {
    skip = "the pod is gone";
  } else if (!pod.ok()) {
    return fail("get pod", pod.status());
  } else if ((*pod)["metadata"].value("uid", "") != task.pod.uid) {
    skip = "the pod was replaced";
  } else if (!(*pod)["spec"].value("nodeName", "").empty()) {
    skip = "the pod is bound";
  }
  if (!skip.empty()) {
    server::LogEvent(log_, "provisioning_request", {{"pod", task.pod.key()}, {"result", "skipped"}, {"reason", skip}});
    absl::MutexLock lock(&mu_);
    ++stats_.skipped;
    requested_.erase(task.pod.uid);
    return;
  }
  absl::StatusOr<nlohmann::json> pod_template = PodTemplateForPod(*pod, task.where.refused_nodes, task.where.shapes);
  if (!pod_template.ok()) return fail("build", pod_template.status());
  absl::StatusOr<nlohmann::json> request = ProvisioningRequestForPod(*pod);
  if (!request.ok()) return fail("build", request.status());
  // The template first: the request refers to it, and CA reads it as soon as the request exists.
  if (absl::Status created = api_.CreatePodTemplate(*pod_template); !created.ok()) {
    return fail("create podtemplate", created);
  }
  if (absl::Status created = api_.CreateProvisioningRequest(*request); !created.ok()) {
    return fail("create provisioningrequest", created);
  }
  if (absl::Status annotated = api_.AnnotatePod(task.pod.namespace_name, task.pod.name,
                                                std::string(kube::kConsumeProvisioningRequestAnnotation), name);
      !annotated.ok()) {
    return fail("annotate pod", annotated);
  }
  server::LogEvent(log_, "provisioning_request",
                   {{"pod", task.pod.key()}, {"result", "created"}, {"name", name},
                    {"refused_nodes", task.where.refused_nodes.size()}, {"shapes", task.where.shapes.size()}});
  absl::MutexLock lock(&mu_);
  ++stats_.requested;
}

void Provisioner::Remove(const Task& task) {
  const std::string name = ProvisioningObjectName(task.pod.name);
  absl::Status removed = api_.DeleteProvisioningRequest(task.pod.namespace_name, name);
  if (removed.ok()) removed = api_.DeletePodTemplate(task.pod.namespace_name, name);
  if (!removed.ok()) {
    // Both are owned by the pod: the garbage collector removes them when it goes.
    server::LogEvent(log_, "provisioning_request",
                     {{"pod", task.pod.key()}, {"result", "withdraw failed"}, {"reason", std::string(removed.message())}},
                     spdlog::level::warn);
    absl::MutexLock lock(&mu_);
    ++stats_.failed;
    return;
  }
  absl::MutexLock lock(&mu_);
  ++stats_.withdrawn;
}

}  // namespace topofit::kubeclient
