// `topofit headroom` end to end: the command as deployed, against the fake API server — its pod watch, its
// discovery of the CapacityBuffer API, and the objects it writes as bursts come.

#include <signal.h>
#include <unistd.h>

#include <future>

#include <catch2/catch.hpp>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/headroom_command.h"
#include "server/shutdown.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"

namespace topofit {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::Resource;
using nlohmann::json;

constexpr char kName[] = "topofit-headroom-2gpu-nv-preferred";

json Replica(const std::string& name) {
  json pod = kubeclient::testing::PodJson("serving", name, "", "topofit");
  pod["metadata"]["uid"] = absl::StrCat("uid-", name);
  pod["metadata"]["annotations"] = {{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "preferred"}};
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "2"}}}, {"requests", {{"nvidia.com/gpu", "2"}}}};
  return pod;
}

struct HeadroomCluster {
  HeadroomCluster()
      : blocked(server::BlockShutdownSignals().ok()),
        certs(testing::TestCerts::Create().value()),
        api(*certs),
        scratch("topofit-headroom-e2e") {
    REQUIRE(blocked);
    scratch.Write("kubeconfig", cli::testing::ScratchDir::Kubeconfig(absl::StrCat(
                                    "server: \"", api.url(), "\", certificate-authority: \"", certs->ca_cert_file(), "\"")));
    options.kubeconfig = scratch.path("kubeconfig");
    options.ops_port = 0;
    options.interval_seconds = 0.05;
    options.log_level = "warn";
  }
  void ServeBuffers() {
    api.ServeDiscovery("/apis/autoscaling.x-k8s.io/v1beta1",
                       {{"kind", "APIResourceList"},
                        {"groupVersion", "autoscaling.x-k8s.io/v1beta1"},
                        {"resources", json::array({{{"name", "capacitybuffers"}, {"namespaced", true}}})}});
  }
  // Starts the command; returns its ops port.
  int Start() {
    std::promise<int> port;
    exit_code = std::async(std::launch::async, [&] { return cli::RunHeadroom(options, [&](int ops) { port.set_value(ops); }); });
    return port.get_future().get();
  }
  // Waits until the command has written (or found nothing to write) after the pods now in the store.
  bool PassedAfterNow() {
    const size_t seen = api.requests().size();
    return Eventually([&] {
      const auto requests = api.requests();
      for (size_t i = seen; i < requests.size(); ++i) {
        // Each pass with a plan that changed, or the first, reads or writes the buffer collection.
        if (requests[i].target.find("/capacitybuffers") != std::string::npos ||
            requests[i].target.find("/deployments") != std::string::npos) {
          return true;
        }
      }
      return false;
    });
  }
  int Stop() {
    REQUIRE(::kill(::getpid(), SIGTERM) == 0);
    return exit_code.get();
  }

  // SIGTERM is blocked before any thread exists (the fake API server's included): the command's
  // WaitForShutdownSignal takes it, and no other thread dies of it.
  bool blocked;
  std::unique_ptr<testing::TestCerts> certs;
  kubeclient::testing::FakeApiServer api;
  cli::testing::ScratchDir scratch;
  cli::HeadroomCommandOptions options;
  std::future<int> exit_code;
};

TEST_CASE("topofit headroom: a burst of 2-GPU replicas becomes a CapacityBuffer of their shape", "[e2e][headroom]") {
  HeadroomCluster cluster;
  cluster.ServeBuffers();
  cluster.api.Upsert(Resource::kPods, Replica("r0"));
  const int ops_port = cluster.Start();
  httplib::Client ops("127.0.0.1", ops_port);
  REQUIRE(Eventually([&] {
    auto ready = ops.Get("/readyz");
    return ready && ready->status == 200;
  }));
  REQUIRE(cluster.PassedAfterNow());  // adopted: nothing of topofit's there

  for (int i = 1; i <= 3; ++i) cluster.api.Upsert(Resource::kPods, Replica(absl::StrCat("r", i)));
  const std::string path = absl::StrCat("/apis/autoscaling.x-k8s.io/v1beta1/namespaces/topofit-system/capacitybuffers/", kName);
  REQUIRE(Eventually([&] { return cluster.api.StoredObject(path).is_object(); }));
  // The rise of 3, at fill rate 0.8: a buffer of 3 (min(3, 3) >= 2.4).
  REQUIRE(Eventually([&] { return cluster.api.StoredObject(path)["spec"]["replicas"] == 3; }));
  const json pod_template =
      cluster.api.StoredObject(absl::StrCat("/api/v1/namespaces/topofit-system/podtemplates/", kName));
  CHECK(pod_template["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2");
  auto metrics = ops.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Catch::Contains(absl::StrCat("topofit_headroom_replicas{shape=\"", kName, "\"} 3")));
  CHECK_THAT(metrics->body, Catch::Contains("topofit_headroom_gpus 6"));
  CHECK_THAT(metrics->body, Catch::Contains("topofit_headroom_api_info{kind=\"capacity-buffers\"} 1"));
  CHECK(cluster.Stop() == 0);
}

// Two replicas of the controller would write two plans: with --leader-elect only the Lease's holder writes;
// the others remember demand, write nothing and report not ready.
TEST_CASE("topofit headroom --leader-elect: a replica that does not hold the Lease writes nothing until it does",
          "[e2e][headroom]") {
  HeadroomCluster cluster;
  cluster.ServeBuffers();
  const std::string lease = "/apis/coordination.k8s.io/v1/namespaces/topofit-system/leases/topofit-headroom";
  cluster.api.PutStoredObject(
      lease, {{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"metadata", {{"name", "topofit-headroom"}, {"namespace", "topofit-system"}}},
              {"spec",
               {{"holderIdentity", "other-replica"},
                {"leaseDurationSeconds", 15},
                {"acquireTime", absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone())},
                {"renewTime", absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone())}}}});
  cluster.options.leader_election.enabled = true;
  cluster.options.leader_election.namespace_name = "topofit-system";
  cluster.options.leader_election.identity = "this-replica";
  cluster.api.Upsert(Resource::kPods, Replica("r0"));
  const int ops_port = cluster.Start();
  httplib::Client ops("127.0.0.1", ops_port);
  REQUIRE(Eventually([&] {
    auto ready = ops.Get("/readyz?verbose");
    return ready && ready->status == 503 && ready->body.find("[+]pods-sync ok") != std::string::npos &&
           ready->body.find("the Lease is held by other-replica") != std::string::npos;
  }));
  absl::SleepFor(absl::Milliseconds(200));  // passes that observe r0 alone
  // A burst the replica sees while it does not lead.
  for (int i = 1; i <= 3; ++i) cluster.api.Upsert(Resource::kPods, Replica(absl::StrCat("r", i)));
  const std::string buffers = "/apis/autoscaling.x-k8s.io/v1beta1/namespaces/topofit-system/capacitybuffers";
  absl::SleepFor(absl::Seconds(1));  // twenty passes' time
  CHECK(cluster.api.StoredObjects(buffers).empty());
  for (const auto& request : cluster.api.requests()) CHECK(request.target.find("/capacitybuffers") == std::string::npos);

  // The other replica is gone and its Lease with it: this one takes the Lease and writes the buffer the burst
  // it remembered asks for (a rise of 3 at fill rate 0.8).
  cluster.api.PutStoredObject(lease, nullptr);
  REQUIRE(Eventually([&] { return !cluster.api.StoredObjects(buffers).empty(); }));
  CHECK(cluster.api.StoredObjects(buffers).front()["spec"]["replicas"] == 3);
  CHECK(cluster.api.StoredObject(lease)["spec"]["holderIdentity"] == "this-replica");
  CHECK(cluster.Stop() == 0);
}

TEST_CASE("topofit headroom: without the CapacityBuffer API it keeps placeholders, or refuses when told to use buffers",
          "[e2e][headroom]") {
  SECTION("auto: placeholder Deployments") {
    HeadroomCluster cluster;
    cluster.api.Upsert(Resource::kPods, Replica("r0"));
    cluster.Start();
    REQUIRE(cluster.PassedAfterNow());
    for (int i = 1; i <= 2; ++i) cluster.api.Upsert(Resource::kPods, Replica(absl::StrCat("r", i)));
    const std::string path = absl::StrCat("/apis/apps/v1/namespaces/topofit-system/deployments/", kName);
    REQUIRE(Eventually([&] { return cluster.api.StoredObject(path).is_object(); }));
    CHECK(cluster.api.StoredObject(path)["spec"]["template"]["spec"]["priorityClassName"] == "topofit-headroom");
    CHECK(cluster.api.StoredObject("/apis/scheduling.k8s.io/v1/priorityclasses/topofit-headroom")["value"] == -1);
    CHECK(cluster.Stop() == 0);
  }
  SECTION("--api capacity-buffers: exit 1") {
    HeadroomCluster cluster;
    cluster.options.api = "capacity-buffers";
    CHECK(cli::RunHeadroom(cluster.options) == 1);
    CHECK(cluster.api.StoredObjects("/apis/apps/v1/namespaces/topofit-system/deployments").empty());
  }
  SECTION("bad options: exit 1, nothing sent") {
    HeadroomCluster cluster;
    cluster.options.fill_rate = 1.5;
    CHECK(cli::RunHeadroom(cluster.options) == 1);
    CHECK(cluster.api.requests().empty());
  }
}

}  // namespace
}  // namespace topofit
