#pragma once

// cluster-autoscaler's gRPC expander (/grpcplugin.Expander/BestOptions): a thin adapter that decodes the
// request (every wire generation, codec/kube_proto.h), calls RankOptions (decision/group_rank.h) and answers
// with the chosen node groups. No ranking arithmetic here.
//
// Status codes, chosen for how CA reacts (docs/expander.md, "Failure semantics"): CA fails open on ANY error
// status (it keeps all options and moves on down its --expander chain), while an OK reply with no options
// vetoes the scale-up (CA >= 1.32). So the empty OK reply is sent only as RankOptions' deliberate veto, and
// everything else that goes wrong is an error:
//   INVALID_ARGUMENT    a request that is not a BestOptionsRequest message, a pod or node that does not
//                       decode (the decoder's message, naming where it was),
//                       or a nodeCount outside 0..kMaxNodeCount
//   RESOURCE_EXHAUSTED  more than `max_options` options (and, from gRPC itself, a message over the
//                       server's receive limit)
//   DEADLINE_EXCEEDED   the call was cancelled or its deadline passed before we could answer (the ranking
//                       stops between options when it does)
//   INTERNAL            anything unexpected, including a ranking that chose nothing without vetoing

#include <cstddef>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "codec/best_options_wire.h"
#include "codec/node_topology.h"
#include "codec/decoded_bytes_cache.h"
#include "decision/group_rank.h"
#include "expander/node_group_recording.h"
#include "history/recorder.h"
#include "ledger/ledger.h"
#include "proto/expander.grpc.pb.h"
#include "server/clock.h"
#include "server/metrics.h"
#include "spdlog/logger.h"

namespace topofit::expander {

// The expander's metrics, declared once.
struct ExpanderMetrics {
  static ExpanderMetrics Create(server::MetricsRegistry& registry);

  // topofit_expander_calls_total{result}: ok, veto, invalid_argument, resource_exhausted,
  // deadline_exceeded, internal.
  server::Counter& calls;
  server::Histogram& latency;          // topofit_expander_call_duration_seconds
  server::Counter& options_stranding;  // topofit_expander_options_stranding_total: dropped, would strand
  server::Counter& decisions;          // topofit_expander_decisions_total{node_group}: best-ranked group
};

// Options judged per call. CA sends one option per node group it could grow, so real requests hold at most
// a few hundred; 10,000 is answered within CA's 5 s deadline (tests/expander), and a request with more is
// refused with RESOURCE_EXHAUSTED before decoding, which makes CA fall back to the rest of its chain
// rather than wait for an answer that would come too late.
inline constexpr size_t kDefaultMaxOptions = 10'000;

// The most nodes one option may ask for. The ranking places an option's pods on that many template nodes,
// so the count is checked before anything is sized from it (10,000,000 took 2.3 GB and 11 s). No cluster
// comes near it: upstream Kubernetes is tested to 5,000 nodes and GKE's default limit is 15,000, so a
// larger scale-up is not CA's and is refused with INVALID_ARGUMENT (CA then fails open).
inline constexpr int kMaxNodeCount = 15'000;

struct ExpanderServiceOptions {
  decision::RankPolicy policy;
  std::map<std::string, double> price_per_node_hour;  // node group id -> price; see cli --prices-file
  size_t max_options = kDefaultMaxOptions;
  // Whether the templates callers send are recorded trusted (ledger::NodeGroupTemplate): true when gRPC
  // admits only peers with a verified client certificate (--tls-client-ca) or the operator vouches for
  // every peer that can reach the port (--trust-expander-templates). CA's gRPC client sends no client
  // certificate, so by default what it teaches the ledger is untrusted: shown, never a reason for the
  // extender to refuse a real node.
  bool trust_templates = false;
};

// When the call must be answered by, and whether the caller has gone: what the handler reads from the
// grpc::ServerContext, apart from it so that Answer() can be tested without a server.
struct CallDeadline {
  absl::Time deadline = absl::InfiniteFuture();
  std::function<bool()> cancelled;  // may be empty
};

// The method is registered raw (bytes in, bytes out) so that the service itself parses the request: with
// the generated handler, gRPC answers a message that does not parse with INTERNAL and no message before
// any of our code runs, uncounted.
class ExpanderService final
    : public ::grpcplugin::Expander::WithRawCallbackMethod_BestOptions<::grpcplugin::Expander::Service> {
 public:
  // Every reference must outlive the service. The ledger is read for preferences and written with intents.
  ExpanderService(ExpanderServiceOptions options, ledger::Ledger& ledger, const server::Clock& clock,
                  ExpanderMetrics& metrics, spdlog::logger& log);

  ::grpc::ServerUnaryReactor* BestOptions(::grpc::CallbackServerContext* context, const ::grpc::ByteBuffer* request,
                                          ::grpc::ByteBuffer* response) override;

  // Where rankings of GPU options and the intents they imply are recorded (null: not recorded). Set before
  // serving; the recorder must outlive the service and never block.
  void RecordDecisionsTo(history::DecisionRecorder* recorder) { recorder_ = recorder; }
  // Pods whose GPUs come from ResourceClaims are ranked by what their claims ask (docs/dra.md); null: by
  // their nvidia.com/gpu alone. `claims` must outlive the service.
  void ReadClaimsFrom(const decision::ClaimSource* claims) { claims_ = claims; }
  // A ComputeDomain's pods are ranked as one gang in one NVLink domain, a node each (docs/gangs.md,
  // "ComputeDomains"); null: none are read. `domains` must outlive the service.
  void ReadComputeDomainsFrom(const decision::ComputeDomainSource* domains) { compute_domains_ = domains; }

  // The whole decision with the status codes above, without gRPC types in the way.
  absl::StatusOr<::grpcplugin::BestOptionsResponse> Answer(const codec::BestOptionsWire& request,
                                                           const CallDeadline& deadline);

 private:
  absl::StatusOr<::grpcplugin::BestOptionsResponse> Decide(const codec::BestOptionsWire& request,
                                                           const CallDeadline& deadline);
  void Log(const decision::Ranking& ranking, const decision::RankInput& input, const std::string& intent_group) const;
  // Counts and logs a finished call.
  void Record(absl::Time start, const absl::Status& status, const std::string& result, int options);

  const ExpanderServiceOptions options_;
  ledger::Ledger& ledger_;
  const server::Clock& clock_;
  ExpanderMetrics& metrics_;
  spdlog::logger& log_;
  // Templates' topologies, cached across calls: a cluster's groups have few shapes.
  codec::TopologyResolver topologies_;
  // CA's pending pods and node-group templates, decoded once for the loops that send them again.
  codec::PodBytesCache decoded_pods_;
  codec::NodeBytesCache decoded_templates_;
  NodeGroupRecording node_group_recording_;
  history::DecisionRecorder* recorder_ = nullptr;
  const decision::ClaimSource* claims_ = nullptr;
  const decision::ComputeDomainSource* compute_domains_ = nullptr;
};

}  // namespace topofit::expander
