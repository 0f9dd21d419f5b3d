// The soak's traffic (scripts/soak.sh): a `topofit serve` on loopback driven for a fixed time by
// scheduling cycles as kube-scheduler makes them (/filter with 100 full Nodes, /prioritize on the nodes that
// passed; on the first thread also /bind to the best, the pod first created in the stand-in API server
// (--api-port) as bind authorises against the stored pod, then deleted through /admin/pods/<uid> and from
// the API server, as if it finished) from --threads keep-alive clients, and BestOptions calls as cluster-autoscaler makes them, every pod new.
// Paced (--cycles-per-second per thread) so a long soak does not starve the machine; bounded by
// --seconds. Prints per kind: requests, errors, p50/p99/max in ms; exits 1 on any error.
//
//   soak_driver --port=P --grpc-port=G --api-port=A --admin-token=T [--seconds=600] [--threads=4]
//               [--cycles-per-second=25] [--best-options-per-second=10]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/http_client.h"
#include "proto/expander.grpc.pb.h"
#include "proto/k8s_core_v1.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Options {
  int port = 0;
  int grpc_port = 0;
  int api_port = 0;  // the stand-in API server the extender binds through
  std::string admin_token;
  int seconds = 600;
  int threads = 4;
  double cycles_per_second = 25;
  double best_options_per_second = 10;
};

// Latencies and errors of one kind of request, shared by the threads.
class Tally {
 public:
  void Add(double ms, bool ok, const std::string& error) {
    std::lock_guard<std::mutex> lock(mu_);
    latencies_.push_back(ms);
    if (!ok) {
      ++errors_;
      if (first_error_.empty()) first_error_ = error.substr(0, 200);
    }
  }
  int64_t errors() const { return errors_; }
  void Print(const char* kind) {
    std::lock_guard<std::mutex> lock(mu_);
    std::sort(latencies_.begin(), latencies_.end());
    const auto at = [&](double q) {
      return latencies_.empty() ? 0.0 : latencies_[std::min(latencies_.size() - 1, static_cast<size_t>(q * latencies_.size()))];
    };
    std::printf("%-12s requests=%zu errors=%lld p50=%.2fms p99=%.2fms max=%.2fms%s%s\n", kind, latencies_.size(),
                static_cast<long long>(errors_), at(0.5), at(0.99), latencies_.empty() ? 0.0 : latencies_.back(),
                first_error_.empty() ? "" : " first error: ", first_error_.c_str());
  }

 private:
  std::mutex mu_;
  std::vector<double> latencies_;
  int64_t errors_ = 0;
  std::string first_error_;
};

json NodeJson(int i) {
  const bool p5 = i % 2 == 1;
  return {{"metadata",
           {{"name", absl::StrCat("soak-node-", i)},
            {"uid", absl::StrCat("node-uid-", i)},
            {"resourceVersion", "1"},
            {"creationTimestamp", "2026-01-01T00:00:00Z"},
            {"labels",
             {{"node.kubernetes.io/instance-type", p5 ? "p5.48xlarge" : "p4d.24xlarge"},
              {"nvidia.com/gpu.count", "8"}}}}},
          {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}, {"cpu", "96"}}}}}};
}

json PodJson(const std::string& uid, int gpus, bool nvlink) {
  json pod = {{"metadata", {{"name", uid}, {"namespace", "soak"}, {"uid", uid}}},
              {"spec", {{"schedulerName", "topofit"},
                        {"containers", {{{"name", "main"}, {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}}};
  if (nvlink) pod["metadata"]["annotations"] = {{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "required"}};
  return pod;
}

double Ms(Clock::time_point since) { return std::chrono::duration<double, std::milli>(Clock::now() - since).count(); }

struct Tallies {
  Tally filter, prioritize, bind, release, best_options;
};

void SchedulingCycles(const Options& options, int thread, const json& nodes, Clock::time_point end, Tallies& t) {
  topofit::bench::KeepAliveClient client(options.port);
  topofit::bench::KeepAliveClient api(options.api_port);
  const std::vector<std::pair<std::string, std::string>> admin = {{"Authorization", "Bearer " + options.admin_token}};
  const auto pause = std::chrono::duration<double>(1.0 / options.cycles_per_second);
  for (int n = 0; Clock::now() < end; ++n) {
    const auto started = Clock::now();
    const std::string uid = absl::StrCat("soak-", thread, "-", n);
    const int gpus = 1 << (n % 4);
    const json args = {{"Pod", PodJson(uid, gpus, n % 3 == 0)}, {"Nodes", nodes}};
    const std::string body = args.dump();

    auto call = [&](Tally& tally, const char* path, const std::string& request) {
      const auto sent = Clock::now();
      const int status = client.Post(path, request);
      const bool ok = status >= 200 && status < 300;
      tally.Add(Ms(sent), ok, ok ? "" : absl::StrCat(path, " ", status, " ", client.error(), client.reply()));
      return ok;
    };
    if (!call(t.filter, "/filter", body)) continue;
    const json filtered = json::parse(client.reply(), nullptr, false);
    std::vector<std::string> passed;
    if (filtered.is_object() && filtered.contains("Nodes") && filtered["Nodes"].is_object()) {
      for (const json& node : filtered["Nodes"]["items"]) passed.push_back(node["metadata"]["name"]);
    }
    // One thread binds (and releases) every pod it schedules; the others only filter and prioritize, as
    // kube-scheduler does for pods that wait: binds are paced by the extender's API client (its QPS).
    if (!passed.empty()) {
      json passed_nodes = {{"items", json::array()}};
      for (const json& node : nodes["items"]) {
        if (std::find(passed.begin(), passed.end(), node["metadata"]["name"]) != passed.end()) {
          passed_nodes["items"].push_back(node);
        }
      }
      if (!call(t.prioritize, "/prioritize", json{{"Pod", args["Pod"]}, {"Nodes", passed_nodes}}.dump())) continue;
      const json scores = json::parse(client.reply(), nullptr, false);
      std::string best = passed.front();
      int best_score = -1;
      if (scores.is_array()) {
        for (const json& score : scores) {
          if (score["Score"].get<int>() > best_score) best_score = score["Score"], best = score["Host"];
        }
      }
      if (thread == 0) {
        const std::string pod_path = absl::StrCat("/api/v1/namespaces/soak/pods/", uid);
        const int created = api.Post("/api/v1/namespaces/soak/pods", args["Pod"].dump());
        if (created != 201) {
          t.bind.Add(0, false, absl::StrCat("creating the pod in the API server: ", created, " ", api.error()));
          continue;
        }
        const json bind = {{"PodName", uid}, {"PodNamespace", "soak"}, {"PodUID", uid}, {"Node", best}};
        const auto sent = Clock::now();
        const int status = client.Post("/bind", bind.dump());
        const json reply = json::parse(client.reply(), nullptr, false);
        const bool ok = status == 200 && reply.is_object() && reply.value("Error", "").empty();
        t.bind.Add(Ms(sent), ok, absl::StrCat("/bind ", status, " ", client.error(), client.reply()));
        if (ok) {  // the pod finished: its GPUs are free again
          const auto released = Clock::now();
          const int deleted = client.Send("DELETE", absl::StrCat("/admin/pods/", uid), "", admin);
          const bool freed = deleted == 200 && absl::StrContains(client.reply(), "\"released\":true");
          t.release.Add(Ms(released), freed, absl::StrCat("DELETE ", deleted, " ", client.reply()));
        }
        api.Send("DELETE", pod_path, "");  // the stand-in keeps only pods not yet finished
      }
    }
    std::this_thread::sleep_until(started + std::chrono::duration_cast<Clock::duration>(pause));
  }
}

void BestOptionsCalls(const Options& options, Clock::time_point end, Tally& tally) {
  auto stub = ::grpcplugin::Expander::NewStub(
      ::grpc::CreateChannel(absl::StrCat("127.0.0.1:", options.grpc_port), ::grpc::InsecureChannelCredentials()));
  ::grpcplugin::BestOptionsRequest request;
  for (const char* group : {"p4d", "p5"}) {
    ::k8s::io::api::core::v1::Node node;
    node.mutable_metadata()->set_name(absl::StrCat("template-node-for-", group));
    (*node.mutable_metadata()->mutable_labels())["node.kubernetes.io/instance-type"] =
        absl::StrCat(group, group == std::string("p5") ? ".48xlarge" : ".24xlarge");
    (*node.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string("8");
    (*request.mutable_nodebytesmap())[group] = node.SerializeAsString();
  }
  const auto pause = std::chrono::duration<double>(1.0 / options.best_options_per_second);
  for (int n = 0; Clock::now() < end; ++n) {
    const auto started = Clock::now();
    ::grpcplugin::BestOptionsRequest call = request;
    for (const char* group : {"p4d", "p5"}) {
      ::grpcplugin::Option* option = call.add_options();
      option->set_nodegroupid(group);
      option->set_nodecount(1);
      for (int p = 0; p < 4; ++p) {
        ::k8s::io::api::core::v1::Pod pod;
        const std::string uid = absl::StrCat("ca-pod-", n, "-", p);
        pod.mutable_metadata()->set_name(uid);
        pod.mutable_metadata()->set_namespace_("soak");
        pod.mutable_metadata()->set_uid(uid);
        (*pod.mutable_metadata()->mutable_annotations())["topofit.io/min-link"] = "NV";
        (*pod.mutable_spec()->add_containers()->mutable_resources()->mutable_requests())["nvidia.com/gpu"].set_string("2");
        option->add_podbytes(pod.SerializeAsString());
      }
    }
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = stub->BestOptions(&context, call, &response);
    tally.Add(Ms(started), status.ok(), status.error_message());
    std::this_thread::sleep_until(started + std::chrono::duration_cast<Clock::duration>(pause));
  }
}

bool Flag(const std::string& arg, const char* name, std::string& value) {
  const std::string prefix = absl::StrCat("--", name, "=");
  if (!absl::StartsWith(arg, prefix)) return false;
  value = arg.substr(prefix.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value;
    bool ok = true;
    if (Flag(arg, "port", value)) ok = absl::SimpleAtoi(value, &options.port);
    else if (Flag(arg, "grpc-port", value)) ok = absl::SimpleAtoi(value, &options.grpc_port);
    else if (Flag(arg, "api-port", value)) ok = absl::SimpleAtoi(value, &options.api_port);
    else if (Flag(arg, "admin-token", value)) options.admin_token = value;
    else if (Flag(arg, "seconds", value)) ok = absl::SimpleAtoi(value, &options.seconds);
    else if (Flag(arg, "threads", value)) ok = absl::SimpleAtoi(value, &options.threads);
    else if (Flag(arg, "cycles-per-second", value)) ok = absl::SimpleAtod(value, &options.cycles_per_second);
    else if (Flag(arg, "best-options-per-second", value)) ok = absl::SimpleAtod(value, &options.best_options_per_second);
    else ok = false;
    if (!ok) {
      std::fprintf(stderr, "soak_driver: bad argument %s (see the file's header)\n", arg.c_str());
      return 2;
    }
  }
  if (options.port <= 0 || options.grpc_port <= 0 || options.api_port <= 0 || options.admin_token.empty() ||
      options.seconds <= 0 ||
      options.threads <= 0 || options.cycles_per_second <= 0 || options.best_options_per_second <= 0) {
    std::fprintf(stderr, "soak_driver: --port, --grpc-port, --api-port and --admin-token are required; rates positive\n");
    return 2;
  }
  json nodes = {{"items", json::array()}};
  for (int i = 0; i < 100; ++i) nodes["items"].push_back(NodeJson(i));

  Tallies tallies;
  const Clock::time_point end = Clock::now() + std::chrono::seconds(options.seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < options.threads; ++t) {
    threads.emplace_back([&, t] { SchedulingCycles(options, t, nodes, end, tallies); });
  }
  threads.emplace_back([&] { BestOptionsCalls(options, end, tallies.best_options); });
  for (std::thread& thread : threads) thread.join();

  tallies.filter.Print("filter");
  tallies.prioritize.Print("prioritize");
  tallies.bind.Print("bind");
  tallies.release.Print("release");
  tallies.best_options.Print("BestOptions");
  const int64_t errors = tallies.filter.errors() + tallies.prioritize.errors() + tallies.bind.errors() +
                         tallies.release.errors() + tallies.best_options.errors();
  return errors == 0 ? 0 : 1;
}
