#pragma once

// What an end-to-end test's cluster is made of, whatever it tests: the fake API server with its
// certificates, a scratch directory for the kubeconfig, a silent log, the process state, and the extender
// `topofit extender --live-state` builds on loopback against that server. Each test's own cluster derives
// from it and adds what it puts in the API server and how it drives kube-scheduler's part.

#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>

#include "absl/status/statusor.h"
#include "cli/extender_command.h"
#include "tests/cli/scratch_dir.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"

namespace topofit::testing {

struct E2eCluster {
  // `scratch_name` names the scratch directory (one per test binary's cluster kind).
  explicit E2eCluster(const std::string& scratch_name)
      : certs(TestCerts::Create().value()), api(*certs), scratch(scratch_name) {}
  ~E2eCluster() {
    if (extender.api != nullptr) extender.api->Stop();
  }
  E2eCluster(const E2eCluster&) = delete;
  E2eCluster& operator=(const E2eCluster&) = delete;

  // The extender's options for this cluster's API server (LoopbackExtenderOptions).
  cli::ExtenderOptions ExtenderOptions() { return LoopbackExtenderOptions(scratch, api.url(), certs->ca_cert_file()); }

  // Builds the extender of `options`, starts it, and waits until every watch it runs has listed.
  void StartExtender(const cli::ExtenderOptions& options) {
    absl::StatusOr<cli::ExtenderServers> built = cli::BuildExtender(options, process, log, {});
    REQUIRE(built.ok());
    extender = *std::move(built);
    port = extender.api->Start().value();
    for (const kubeclient::ListWatcher* watch :
         {extender.node_watch.get(), extender.pod_watch.get(), extender.slice_watch.get(), extender.claim_watch.get(),
          extender.compute_domain_watch.get(), extender.buffer_watch.get(), extender.template_watch.get()}) {
      if (watch != nullptr) REQUIRE(watch->WaitForSync(kubeclient::testing::kPatience));
    }
  }

  // The extender's answer to a POST of `args` to `path` ("/filter", "/bind").
  nlohmann::json Post(const std::string& path, const nlohmann::json& args) { return PostToExtender(port, path, args); }

  std::unique_ptr<TestCerts> certs;
  kubeclient::testing::FakeApiServer api;
  cli::testing::ScratchDir scratch;
  spdlog::logger log{"e2e", std::make_shared<spdlog::sinks::null_sink_mt>()};
  cli::ProcessState process;
  cli::ExtenderServers extender;
  int port = 0;
};

}  // namespace topofit::testing
