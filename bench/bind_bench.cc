// 100 concurrent binds, as kube-scheduler sends them when many pods are placed at once (issue 38): the
// extender built as `topofit extender --live-state` builds it (cli::BuildExtender, default flags: the
// client's --kube-api-qps 50 and --kube-api-burst 100, the bind pool), against the tests' fake API server
// answering every call `--api-delay-ms` (5) after it arrives. The pods exist there, pending, scheduled by
// topofit and asking for one GPU each, as bind authorisation requires; each bind is one keep-alive client
// thread POSTing kube-scheduler's ExtenderBindingArgs, all released at once. Not Google Benchmark: the
// unit is a burst of concurrent exchanges, and the output is their latency distribution.
//
// Prints p50/p99/max latency, how many binds finished (bound, no error) within 1 s, how replies were
// spread (bound, error, 503), and the API calls the burst made per bind, by method.
//
//   bind_bench [--binds=100] [--api-delay-ms=5] [--kube-api-qps=50] [--kube-api-burst=100]

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/flag_value.h"
#include "bench/http_client.h"
#include "cli/extender_command.h"
#include "cli/process_state.h"
#include "tests/cli/scratch_dir.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"

namespace topofit::bench {
namespace {

using kubeclient::testing::FakeApiServer;
using kubeclient::testing::Resource;

struct Flags {
  int binds = 100;
  int api_delay_ms = 5;
  double kube_api_qps = cli::ExtenderOptions{}.kube_api_qps;
  int kube_api_burst = cli::ExtenderOptions{}.kube_api_burst;
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const auto value = [arg = absl::string_view(argv[i])](absl::string_view name) { return FlagValue(arg, name); };
    bool ok = false;
    if (absl::string_view v = value("--binds="); !v.empty()) ok = absl::SimpleAtoi(v, &flags.binds) && flags.binds > 0;
    if (absl::string_view v = value("--api-delay-ms="); !v.empty()) ok = absl::SimpleAtoi(v, &flags.api_delay_ms) && flags.api_delay_ms >= 0;
    if (absl::string_view v = value("--kube-api-qps="); !v.empty()) ok = absl::SimpleAtod(v, &flags.kube_api_qps);
    if (absl::string_view v = value("--kube-api-burst="); !v.empty()) ok = absl::SimpleAtoi(v, &flags.kube_api_burst);
    if (!ok) {
      std::fprintf(stderr, "bind_bench: bad flag %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

double Percentile(std::vector<double> sorted_ms, double p) {
  if (sorted_ms.empty()) return 0;
  const size_t at = std::min(sorted_ms.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted_ms.size())));
  return sorted_ms[at];
}

int Run(const Flags& flags) {
  std::unique_ptr<testing::TestCerts> certs = testing::TestCerts::Create().value();
  FakeApiServer api(*certs);
  const int nodes = (flags.binds + 7) / 8;
  for (int n = 0; n < nodes; ++n) api.Upsert(Resource::kNodes, testing::P4dNode(absl::StrCat("gpu-", n)));
  for (int p = 0; p < flags.binds; ++p) api.Upsert(Resource::kPods, testing::PendingGpuPod(absl::StrCat("pod-", p), 1));

  cli::testing::ScratchDir scratch("topofit-bind-bench");
  cli::ExtenderOptions options = testing::LoopbackExtenderOptions(scratch, api.url(), certs->ca_cert_file());
  options.kube_api_qps = flags.kube_api_qps;
  options.kube_api_burst = flags.kube_api_burst;
  spdlog::logger log("bind-bench", std::make_shared<spdlog::sinks::null_sink_mt>());
  cli::ProcessState process;
  absl::StatusOr<cli::ExtenderServers> extender = cli::BuildExtender(options, process, log, {});
  if (!extender.ok()) {
    std::fprintf(stderr, "bind_bench: %s\n", std::string(extender.status().message()).c_str());
    return 1;
  }
  const int port = extender->api->Start().value();
  if (!extender->node_watch->WaitForSync(absl::Seconds(30)) || !extender->pod_watch->WaitForSync(absl::Seconds(30)) ||
      !extender->pending_pod_watch->WaitForSync(absl::Seconds(30))) {
    std::fprintf(stderr, "bind_bench: the watches did not sync\n");
    return 1;
  }
  api.DelayReplies(absl::Milliseconds(flags.api_delay_ms));

  // Each client connects before the burst, so the latency is the bind's, not the TCP handshake's.
  std::vector<std::unique_ptr<KeepAliveClient>> clients;
  for (int i = 0; i < flags.binds; ++i) {
    clients.push_back(std::make_unique<KeepAliveClient>(port));
    clients.back()->Send("GET", "/healthz", "");
  }
  const size_t calls_before = api.requests().size();
  std::vector<double> latency_ms(flags.binds);
  std::vector<int> status(flags.binds);
  std::vector<std::string> error(flags.binds);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < flags.binds; ++i) {
    threads.emplace_back([&, i] {
      const std::string pod = absl::StrCat("pod-", i);
      const std::string body = nlohmann::json{{"PodName", pod},
                                              {"PodNamespace", "ml"},
                                              {"PodUID", absl::StrCat("uid-", pod)},
                                              {"Node", absl::StrCat("gpu-", i / 8)}}
                                   .dump();
      while (!go.load()) std::this_thread::yield();
      const absl::Time start = absl::Now();
      status[i] = clients[i]->Post("/bind", body);
      latency_ms[i] = absl::ToDoubleMilliseconds(absl::Now() - start);
      if (status[i] == 200) {
        const nlohmann::json reply = nlohmann::json::parse(clients[i]->reply(), nullptr, false);
        error[i] = reply.is_object() ? reply.value("Error", "") : "unreadable reply";
      }
    });
  }
  go = true;
  for (std::thread& t : threads) t.join();
  const std::vector<kubeclient::testing::RecordedRequest> requests = api.requests();
  extender->api->Stop();

  int bound = 0, failed = 0, unavailable = 0, bound_within_1s = 0;
  for (int i = 0; i < flags.binds; ++i) {
    if (status[i] == 200 && error[i].empty()) {
      ++bound;
      if (latency_ms[i] <= 1000) ++bound_within_1s;
    } else if (status[i] == 503) {
      ++unavailable;
    } else {
      ++failed;
    }
  }
  std::map<std::string, int> calls_by_method;
  for (size_t r = calls_before; r < requests.size(); ++r) {
    if (requests[r].IsWatch()) continue;
    // The method and what was called: a POST names its collection or subresource last ("events",
    // "binding"), a GET or PATCH of one object names its collection before the object's name ("pods").
    const std::string path = requests[r].target.substr(0, requests[r].target.find('?'));
    const std::vector<absl::string_view> segments = absl::StrSplit(path, '/', absl::SkipEmpty());
    const bool names_collection_last = requests[r].method == "POST";
    const absl::string_view what = segments.size() < 2 ? absl::string_view(path)
                                   : names_collection_last ? segments.back() : segments[segments.size() - 2];
    ++calls_by_method[absl::StrCat(requests[r].method, " ", what)];
  }
  std::vector<double> sorted = latency_ms;
  std::sort(sorted.begin(), sorted.end());
  std::printf("%d concurrent binds, API server answering in %d ms, --kube-api-qps %g --kube-api-burst %d\n", flags.binds,
              flags.api_delay_ms, flags.kube_api_qps, flags.kube_api_burst);
  std::printf("latency ms: p50 %.1f  p99 %.1f  max %.1f\n", Percentile(sorted, 0.50), Percentile(sorted, 0.99), sorted.back());
  std::printf("bound %d (within 1 s: %d), bind errors %d, 503 %d\n", bound, bound_within_1s, failed, unavailable);
  std::string per_bind;
  for (const auto& [method, count] : calls_by_method) {
    absl::StrAppend(&per_bind, " ", method, " ", count, " (", absl::SixDigits(static_cast<double>(count) / std::max(bound, 1)), "/bind)");
  }
  std::printf("API calls during the burst:%s\n", per_bind.c_str());
  for (int i = 0; i < flags.binds; ++i) {
    if (status[i] != 200 || !error[i].empty()) {
      std::printf("first failure: status %d %s\n", status[i], error[i].c_str());
      break;
    }
  }
  return 0;
}

}  // namespace
}  // namespace topofit::bench

int main(int argc, char** argv) {
  topofit::bench::Flags flags;
  if (!topofit::bench::ParseFlags(argc, argv, flags)) return 2;
  return topofit::bench::Run(flags);
}
