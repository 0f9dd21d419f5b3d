#pragma once

#include <memory>

#include <spdlog/sinks/null_sink.h>

#include "ledger/ledger.h"
#include "scheduler/extender.h"
#include "tests/scheduler/fake_kube_client.h"
#include "tests/server/fake_clock.h"

namespace topofit::scheduler::testing {

// An Extender with in-memory state and ledger on a fake clock, a fake Kubernetes client and silent logs.
struct ExtenderFixture {
  server::FakeClock clock;
  server::MetricsRegistry registry;
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  std::unique_ptr<ledger::Ledger> ledger = ledger::NewInMemoryLedger(clock, absl::Minutes(10), absl::Minutes(15));
  FakeKubeClient kube;
  ExtenderMetrics metrics = ExtenderMetrics::Create(registry);
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  Extender extender{*state, *ledger, kube, metrics, log};
};

}  // namespace topofit::scheduler::testing
