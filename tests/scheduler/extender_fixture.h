#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ledger/ledger.h"
#include "scheduler/extender.h"
#include "tests/scheduler/fake_kube_client.h"
#include "tests/server/fake_clock.h"

namespace topofit::scheduler::testing {

// Capacity requests as the extender makes them, in order: "request ns/name refused=a,b[ shapes=...]",
// "withdraw ns/name", "gang <id> member=ns/name count=N domain=v1/v2..." and "withdraw gang <id>".
class RecordingCapacityRequests final : public CapacityRequests {
 public:
  void RequestFor(const PodRef& pod, const CapacityPlacement& where) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string call = absl::StrCat("request ", pod.key(), " refused=", absl::StrJoin(where.refused_nodes, ","));
    // Each shape as its label values joined by "/", e.g. "shapes=p4d.24xlarge|p5.48xlarge".
    std::vector<std::string> shapes;
    for (const kube::NodeSelectorTerm& term : where.shapes) {
      std::vector<std::string> values;
      for (const kube::NodeSelectorRequirement& r : term.match_expressions) values.push_back(absl::StrJoin(r.values, ","));
      shapes.push_back(absl::StrJoin(values, "/"));
    }
    if (!shapes.empty()) absl::StrAppend(&call, " shapes=", absl::StrJoin(shapes, "|"));
    calls_.push_back(std::move(call));
  }
  void Withdraw(const PodRef& pod) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(absl::StrCat("withdraw ", pod.key()));
  }
  void RequestForGang(const GangCapacity& capacity) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> values;
    for (const kube::NodeSelectorRequirement& r : capacity.domain.match_expressions) {
      values.push_back(absl::StrJoin(r.values, ","));
    }
    std::string call = absl::StrCat("gang ", capacity.gang.id, " member=", capacity.member.key(),
                                    " count=", capacity.count, " domain=", absl::StrJoin(values, "/"));
    if (!capacity.claim_members.empty()) {
      absl::StrAppend(&call, " claim_members=",
                      absl::StrJoin(capacity.claim_members, ",",
                                    [](std::string* out, const PodRef& pod) { out->append(pod.key()); }));
    }
    calls_.push_back(std::move(call));
  }
  void WithdrawGang(const GangRef& gang) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(absl::StrCat("withdraw gang ", gang.id));
  }
  std::vector<std::string> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

// An Extender with in-memory state and ledger on a fake clock, a fake Kubernetes client, recorded capacity
// requests (or `capacity_requests`, e.g. a real Provisioner), a drain guard (refreshed only when a test calls
// it) and silent logs.
struct ExtenderFixture {
  explicit ExtenderFixture(CapacityRequests* capacity_requests = nullptr)
      : extender{*state, *ledger, kube, metrics, log, clock, capacity_requests != nullptr ? capacity_requests : &capacity} {
    extender.GuardFromDrains(&drain_guard);
  }
  // The filter of `pod` (known to the API server from now on) over the nodes named `nodes`; must succeed.
  codec::ExtenderFilterResult FilterOn(const kube::Pod& pod, const std::vector<std::string>& nodes) {
    kube.PutPod(pod);
    absl::StatusOr<codec::ExtenderFilterResult> result = extender.Filter({pod, std::nullopt, nodes});
    REQUIRE(result.ok());
    return *std::move(result);
  }
  // The bind of `pod` to `node`: "" when bound, else the error.
  std::string BindTo(const kube::Pod& pod, const std::string& node) {
    return *extender.Bind({pod.metadata.name, pod.metadata.namespace_name, pod.metadata.uid, node});
  }
  server::FakeClock clock;
  server::MetricsRegistry registry;
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  std::unique_ptr<ledger::Ledger> ledger = ledger::NewInMemoryLedger(clock);
  FakeKubeClient kube;
  ExtenderMetrics metrics = ExtenderMetrics::Create(registry);
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  RecordingCapacityRequests capacity;
  DrainGuard drain_guard{*state, kube, log, registry};
  Extender extender;
};

}  // namespace topofit::scheduler::testing
