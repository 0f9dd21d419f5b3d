#include "kubeclient/provisioner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "history/from_decisions.h"
#include "kube/topofit_annotations.h"
#include "kubeclient/provisioning.h"
#include "server/logging.h"

namespace topofit::kubeclient {

Provisioner::Provisioner(KubeApi& api, spdlog::logger& log, const server::Clock& clock)
    : api_(api), log_(log), clock_(clock), worker_([this] { Run(); }) {}

Provisioner::~Provisioner() { Stop(); }

void Provisioner::RequestFor(const scheduler::PodRef& pod, const scheduler::CapacityPlacement& where) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  const absl::Time now = clock_.Now();
  auto [seen, first] = requested_.try_emplace(pod.uid, StatusSeen{now, history::Reason::kFits});
  if (first) {
    tasks_.push_back(Task{.action = Action::kCreate, .pod = pod, .where = where, .gang = {}});
    return;
  }
  // Asked again while its request stands: the capacity has not come. What does cluster-autoscaler say?
  if (recorder_ == nullptr || now - seen->second.checked < kStatusCheckInterval) return;
  seen->second.checked = now;
  tasks_.push_back(Task{.action = Action::kCheck, .pod = pod, .where = {}, .gang = {}});
}

void Provisioner::Withdraw(const scheduler::PodRef& pod) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  requested_.erase(pod.uid);
  tasks_.push_back(Task{.action = Action::kWithdraw, .pod = pod, .where = {}, .gang = {}});
}

void Provisioner::RequestForGang(const scheduler::GangCapacity& capacity) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  const absl::Time now = clock_.Now();
  const GangAsked fresh{.asked = now,
                        .members = {},
                        .status = {now, history::Reason::kFits},
                        .claim_members = capacity.claim_members};
  auto [gang, first] = gangs_.try_emplace(capacity.gang.id, fresh);
  const bool stale = !first && now - gang->second.asked >= kGangRequestLifetime;
  if (stale) gang->second = fresh;
  if (!gang->second.members.insert(capacity.member.uid).second) {
    // A member asked again while it consumes the gang's request: what does cluster-autoscaler say of it?
    if (recorder_ == nullptr || now - gang->second.status.checked < kStatusCheckInterval) return;
    gang->second.status.checked = now;
    tasks_.push_back(Task{.action = Action::kCheckGang, .pod = capacity.member, .where = {}, .gang = capacity});
    return;
  }
  tasks_.push_back(Task{.action = first ? Action::kCreateForGang : stale ? Action::kReplaceGang : Action::kConsumeGang,
                        .pod = capacity.member,
                        .where = {},
                        .gang = capacity});
}

void Provisioner::WithdrawGang(const scheduler::GangRef& gang) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  Task task{.action = Action::kWithdrawGang, .pod = {}, .where = {}, .gang = {}};
  task.gang.gang = gang;
  if (auto asked = gangs_.find(gang.id); asked != gangs_.end()) task.gang.claim_members = asked->second.claim_members;
  gangs_.erase(gang.id);
  tasks_.push_back(std::move(task));
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
    switch (task.action) {
      case Action::kCreate: Create(task); break;
      case Action::kWithdraw: Remove(task); break;
      case Action::kCreateForGang: CreateForGang(task); break;
      case Action::kConsumeGang: JoinGang(task); break;
      case Action::kWithdrawGang: RemoveGang(task); break;
      case Action::kReplaceGang: RemoveGang(task); CreateForGang(task); break;
      case Action::kCheck: Check(task); break;
      case Action::kCheckGang: CheckGang(task); break;
    }
  }
}

absl::StatusOr<std::optional<nlohmann::json>> Provisioner::AskablePod(const scheduler::PodRef& pod,
                                                                      absl::string_view what) {
  absl::StatusOr<nlohmann::json> got = api_.GetPodObject(pod.namespace_name, pod.name);
  std::string skip;
  if (!got.ok() && got.status().code() == absl::StatusCode::kNotFound) {
    skip = "the pod is gone";
  } else if (!got.ok()) {
    return got.status();
  } else if ((*got)["metadata"].value("uid", "") != pod.uid) {
    skip = "the pod was replaced";
  } else if (!(*got)["spec"].value("nodeName", "").empty()) {
    skip = "the pod is bound";
  }
  if (skip.empty()) return std::optional<nlohmann::json>(*std::move(got));
  server::LogEvent(log_, "provisioning_request",
                   {{"for", std::string(what)}, {"pod", pod.key()}, {"result", "skipped"}, {"reason", skip}});
  absl::MutexLock lock(&mu_);
  ++stats_.skipped;
  return std::nullopt;
}

absl::Status Provisioner::CreateObjects(const absl::StatusOr<nlohmann::json>& pod_template,
                                        const absl::StatusOr<nlohmann::json>& request) {
  if (!pod_template.ok()) return pod_template.status();
  if (!request.ok()) return request.status();
  // The template first: the request refers to it, and CA reads it as soon as the request exists.
  if (absl::Status created = CreateTemplate(*pod_template); !created.ok()) return created;
  return CreateRequest(request);
}

absl::Status Provisioner::CreateTemplate(const nlohmann::json& pod_template) {
  if (absl::Status created = api_.CreatePodTemplate(pod_template); !created.ok()) {
    return absl::Status(created.code(), absl::StrCat("creating the PodTemplate: ", created.message()));
  }
  return absl::OkStatus();
}

absl::Status Provisioner::CreateRequest(const absl::StatusOr<nlohmann::json>& request) {
  if (!request.ok()) return request.status();
  if (absl::Status created = api_.CreateProvisioningRequest(*request); !created.ok()) {
    return absl::Status(created.code(), absl::StrCat("creating the ProvisioningRequest: ", created.message()));
  }
  return absl::OkStatus();
}

absl::Status Provisioner::CreateMemberTemplates(const scheduler::GangCapacity& gang, const nlohmann::json& asking) {
  for (size_t i = 0; i < gang.claim_members.size(); ++i) {
    const scheduler::PodRef& named = gang.claim_members[i];
    const absl::StatusOr<std::optional<nlohmann::json>> member =
        named.uid == gang.member.uid ? std::optional<nlohmann::json>(asking) : AskablePod(named, gang.gang.id);
    if (!member.ok()) return member.status();
    if (!*member) return absl::FailedPreconditionError(absl::StrCat("member ", named.key(), " is gone or bound"));
    absl::StatusOr<nlohmann::json> pod_template =
        PodTemplateForGangMember(**member, gang.gang.id, static_cast<int>(i), gang.domain);
    if (!pod_template.ok()) return pod_template.status();
    if (absl::Status created = CreateTemplate(*pod_template); !created.ok()) return created;
  }
  return absl::OkStatus();
}

void Provisioner::CountFailed(absl::string_view what, absl::string_view step, const absl::Status& status) {
  server::LogEvent(log_, "provisioning_request",
                   {{"for", std::string(what)}, {"result", "failed"}, {"step", std::string(step)},
                    {"reason", std::string(status.message())}},
                   spdlog::level::warn);
  absl::MutexLock lock(&mu_);
  ++stats_.failed;
}

void Provisioner::Create(const Task& task) {
  const std::string name = ProvisioningObjectName(task.pod.name);
  // A failure is counted; either way the pod's next refusal asks again.
  const auto give_up = [&](absl::string_view step, const absl::Status& status) {
    if (!status.ok()) CountFailed(task.pod.key(), step, status);
    absl::MutexLock lock(&mu_);
    requested_.erase(task.pod.uid);
  };
  const absl::StatusOr<std::optional<nlohmann::json>> pod = AskablePod(task.pod, task.pod.key());
  if (!pod.ok() || !*pod) return give_up("get pod", pod.status());
  if (absl::Status created = CreateObjects(PodTemplateForPod(**pod, task.where.refused_nodes, task.where.shapes),
                                           ProvisioningRequestForPod(**pod));
      !created.ok()) {
    return give_up("create", created);
  }
  if (absl::Status annotated = api_.AnnotatePod(task.pod.namespace_name, task.pod.name,
                                                std::string(kube::kConsumeProvisioningRequestAnnotation), name);
      !annotated.ok()) {
    return give_up("annotate pod", annotated);
  }
  server::LogEvent(log_, "provisioning_request",
                   {{"pod", task.pod.key()}, {"result", "created"}, {"name", name},
                    {"refused_nodes", task.where.refused_nodes.size()}, {"shapes", task.where.shapes.size()}});
  absl::MutexLock lock(&mu_);
  ++stats_.requested;
}

std::optional<Provisioner::CaSays> Provisioner::ReadStatus(const std::string& namespace_name, const std::string& name,
                                                           absl::string_view what) {
  const absl::StatusOr<ProvisioningState> state = api_.GetProvisioningState(namespace_name, name);
  if (!state.ok()) {
    // Gone (withdrawn meanwhile, or collected with its owner) is nothing to say; the next ask reads it again.
    if (!absl::IsNotFound(state.status())) CountFailed(what, "read status", state.status());
    return std::nullopt;
  }
  // The most final first: revoked and failed end the request, an expired booking ends one attempt.
  history::Reason said = history::Reason::kFits;
  if (state->capacity_revoked) said = history::Reason::kCapacityRevoked;
  else if (state->failed) said = history::Reason::kCapacityFailed;
  else if (state->booking_expired) said = history::Reason::kCapacityBookingExpired;
  else if (state->capacity_not_found && !state->provisioned) said = history::Reason::kCapacityNotFound;
  return CaSays{said, state->message};
}

void Provisioner::RecordStatus(const scheduler::PodRef& pod, absl::string_view gang, const std::string& request,
                               const CaSays& said) {
  server::LogEvent(log_, "provisioning_request",
                   {{gang.empty() ? "pod" : "gang", gang.empty() ? pod.key() : std::string(gang)},
                    {"name", request},
                    {"result", std::string(history::ReasonName(said.reason))},
                    {"message", said.message}});
  recorder_->Record(history::CapacityStatusRecord(clock_.Now(), {pod.uid, pod.key()},
                                                  absl::StrCat(pod.namespace_name, "/", request), said.reason));
}

void Provisioner::Check(const Task& task) {
  const std::string name = ProvisioningObjectName(task.pod.name);
  const auto status = ReadStatus(task.pod.namespace_name, name, task.pod.key());
  if (!status) return;
  {
    absl::MutexLock lock(&mu_);
    auto seen = requested_.find(task.pod.uid);
    if (seen == requested_.end() || seen->second.recorded == status->reason) return;  // withdrawn, or nothing new
    seen->second.recorded = status->reason;
  }
  if (status->reason != history::Reason::kFits) RecordStatus(task.pod, "", name, *status);
}

void Provisioner::CheckGang(const Task& task) {
  const std::string& gang = task.gang.gang.id;
  const std::string name = GangProvisioningObjectName(gang);
  const auto status = ReadStatus(task.gang.gang.namespace_name, name, gang);
  if (!status) return;
  {
    absl::MutexLock lock(&mu_);
    auto seen = gangs_.find(gang);
    if (seen == gangs_.end() || seen->second.status.recorded == status->reason) return;  // withdrawn, or nothing new
    seen->second.status.recorded = status->reason;
  }
  if (status->reason != history::Reason::kFits) RecordStatus(task.pod, gang, name, *status);
}

void Provisioner::CreateForGang(const Task& task) {
  const scheduler::GangCapacity& gang = task.gang;
  const auto give_up = [&](absl::string_view step, const absl::Status& status) {
    if (!status.ok()) CountFailed(gang.gang.id, step, status);
    absl::MutexLock lock(&mu_);
    gangs_.erase(gang.gang.id);  // the gang's next refusal asks again
  };
  const absl::StatusOr<std::optional<nlohmann::json>> member = AskablePod(gang.member, gang.gang.id);
  if (!member.ok() || !*member) return give_up("get pod", member.status());
  if (!gang.claim_members.empty()) {
    if (absl::Status created = CreateMemberTemplates(gang, **member); !created.ok()) return give_up("create", created);
  }
  if (absl::Status created =
          gang.claim_members.empty()
              ? CreateObjects(PodTemplateForGang(**member, gang.gang.id, gang.domain),
                              ProvisioningRequestForGang(**member, gang.gang.id, gang.count))
              : CreateRequest(ProvisioningRequestForGangMembers(**member, gang.gang.id,
                                                                static_cast<int>(gang.claim_members.size())));
      !created.ok()) {
    return give_up("create", created);
  }
  server::LogEvent(log_, "provisioning_request",
                   {{"gang", gang.gang.id}, {"result", "created"}, {"name", GangProvisioningObjectName(gang.gang.id)},
                    {"count", gang.count}});
  {
    absl::MutexLock lock(&mu_);
    ++stats_.gang_requested;
  }
  ConsumeGang(task);
}

void Provisioner::JoinGang(const Task& task) {
  const std::string name = GangProvisioningObjectName(task.gang.gang.id);
  const absl::StatusOr<ProvisioningState> state = api_.GetProvisioningState(task.gang.gang.namespace_name, name);
  if (state.ok() || !absl::IsNotFound(state.status())) return ConsumeGang(task);
  // The garbage collector took it with the member that owned it (replaced, say, by its Job): this member
  // asks anew and owns the new one.
  server::LogEvent(log_, "provisioning_request",
                   {{"gang", task.gang.gang.id}, {"pod", task.pod.key()}, {"result", "gone, asking again"}});
  {
    absl::MutexLock lock(&mu_);
    if (auto gang = gangs_.find(task.gang.gang.id); gang != gangs_.end()) gang->second.asked = clock_.Now();
  }
  CreateForGang(task);
}

void Provisioner::ConsumeGang(const Task& task) {
  const std::string name = GangProvisioningObjectName(task.gang.gang.id);
  if (absl::Status annotated = api_.AnnotatePod(task.pod.namespace_name, task.pod.name,
                                                std::string(kube::kConsumeProvisioningRequestAnnotation), name);
      !annotated.ok()) {
    CountFailed(task.pod.key(), "annotate pod", annotated);
    absl::MutexLock lock(&mu_);
    // The member's next refusal annotates it again, if the gang's request still stands.
    if (auto gang = gangs_.find(task.gang.gang.id); gang != gangs_.end()) gang->second.members.erase(task.pod.uid);
    return;
  }
  absl::MutexLock lock(&mu_);
  ++stats_.gang_consumers;
}

void Provisioner::RemoveGang(const Task& task) {
  const std::string name = GangProvisioningObjectName(task.gang.gang.id);
  absl::Status removed = api_.DeleteProvisioningRequest(task.gang.gang.namespace_name, name);
  if (removed.ok()) removed = api_.DeletePodTemplate(task.gang.gang.namespace_name, name);
  for (size_t i = 0; removed.ok() && i < task.gang.claim_members.size(); ++i) {
    removed = api_.DeletePodTemplate(task.gang.gang.namespace_name,
                                     GangMemberTemplateName(task.gang.gang.id, static_cast<int>(i)));
  }
  // Each is owned by a member (the request and its template by the one that asked): the garbage collector
  // removes them when their owners go.
  if (!removed.ok()) return CountFailed(task.gang.gang.id, "withdraw", removed);
  server::LogEvent(log_, "provisioning_request", {{"gang", task.gang.gang.id}, {"result", "withdrawn"}, {"name", name}});
  absl::MutexLock lock(&mu_);
  ++stats_.withdrawn;
}

void Provisioner::Remove(const Task& task) {
  const std::string name = ProvisioningObjectName(task.pod.name);
  absl::Status removed = api_.DeleteProvisioningRequest(task.pod.namespace_name, name);
  if (removed.ok()) removed = api_.DeletePodTemplate(task.pod.namespace_name, name);
  // Both are owned by the pod: the garbage collector removes them when it goes.
  if (!removed.ok()) return CountFailed(task.pod.key(), "withdraw", removed);
  absl::MutexLock lock(&mu_);
  ++stats_.withdrawn;
}

}  // namespace topofit::kubeclient
