#include "expander/expander_service.h"

#include <algorithm>
#include <exception>
#include <utility>
#include <vector>

#include <grpcpp/support/proto_buffer_writer.h>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codec/kube_proto.h"
#include "decision/capacity_ask.h"
#include "decision/scale_up_choice.h"
#include "history/from_decisions.h"
#include "server/logging.h"

namespace topofit::expander {
namespace {

// Per-option verdict records per call: enough to explain any realistic decision (CA sends one option per
// node group), without a 10,000-line burst when a request is that large. The summary counts the rest.
constexpr size_t kMaxLoggedVerdicts = 100;

bool Expired(const CallDeadline& deadline, absl::Time now) {
  return now >= deadline.deadline || (deadline.cancelled && deadline.cancelled());
}

std::string ResultLabel(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return "ok";
    case absl::StatusCode::kInvalidArgument: return "invalid_argument";
    case absl::StatusCode::kResourceExhausted: return "resource_exhausted";
    case absl::StatusCode::kDeadlineExceeded: return "deadline_exceeded";
    default: return "internal";
  }
}

constexpr size_t kKeptJoinBytes = size_t{16} << 20;

// The request's bytes: its one slice as it is (gRPC mostly hands one), else its slices joined into
// `joined`. Views into `slices` or `joined`.
absl::string_view ContiguousBytes(const ::grpc::ByteBuffer& buffer, std::vector<::grpc::Slice>& slices, std::string& joined) {
  if (buffer.Dump(&slices).ok() && slices.size() == 1) {
    return absl::string_view(reinterpret_cast<const char*>(slices[0].begin()), slices[0].size());
  }
  joined.clear();
  joined.reserve(buffer.Length());
  for (const ::grpc::Slice& slice : slices) joined.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  return joined;
}

// CA reads only nodeGroupId; the pods are left out so the reply does not echo up to 128 MiB of pods back.
::grpcplugin::Option ReplyOption(const codec::OptionWire& option) {
  ::grpcplugin::Option out;
  out.set_nodegroupid(std::string(option.node_group_id));
  out.set_nodecount(option.node_count);
  out.set_debug(std::string(option.debug));
  return out;
}

}  // namespace

ExpanderMetrics ExpanderMetrics::Create(server::MetricsRegistry& registry) {
  return ExpanderMetrics{
      .calls = registry.AddCounter("topofit_expander_calls_total",
                                   "BestOptions calls by result (ok, veto, or the error status sent)", {"result"}),
      .latency = registry.AddHistogram("topofit_expander_call_duration_seconds",
                                       "BestOptions handling time; CA's deadline is 5 s",
                                       {0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}),
      .options_stranding = registry.AddCounter(
          "topofit_expander_options_stranding_total",
          "Options dropped because a GPU pod of theirs would not be placed on the new nodes"),
      .decisions = registry.AddCounter("topofit_expander_decisions_total",
                                       "Replies by their best-ranked node group", {"node_group"}),
  };
}

ExpanderService::ExpanderService(ExpanderServiceOptions options, ledger::Ledger& ledger,
                                 const server::Clock& clock, ExpanderMetrics& metrics, spdlog::logger& log)
    : options_(std::move(options)), ledger_(ledger), clock_(clock), metrics_(metrics), log_(log) {}

::grpc::ServerUnaryReactor* ExpanderService::BestOptions(::grpc::CallbackServerContext* context,
                                                         const ::grpc::ByteBuffer* request_bytes,
                                                         ::grpc::ByteBuffer* response_bytes) {
  ::grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const auto finish = [reactor](const absl::Status& status) {
    // absl and gRPC share the canonical status codes, number for number.
    reactor->Finish(::grpc::Status(static_cast<::grpc::StatusCode>(status.code()), std::string(status.message())));
    return reactor;
  };
  // Read in place (codec/best_options_wire.h), from this thread's buffer when gRPC hands several slices.
  thread_local std::string joined;
  std::vector<::grpc::Slice> slices;
  const absl::string_view bytes = ContiguousBytes(*request_bytes, slices, joined);
  // Kept for the next call (a fresh 3 MB buffer per call was mostly page faults), unless a rare large
  // request grew it: then given back once this call is done with it.
  absl::Cleanup trim = [] {
    if (joined.capacity() > kKeptJoinBytes) std::string().swap(joined);
  };
  const absl::StatusOr<codec::BestOptionsWire> request = codec::ReadBestOptions(bytes);
  if (!request.ok()) {
    const absl::Status status = absl::InvalidArgumentError(absl::StrCat("the request (", request_bytes->Length(),
                                                                        " bytes) is not a grpcplugin.BestOptionsRequest message: ",
                                                                        request.status().message()));
    Record(clock_.Now(), status, ResultLabel(status.code()), 0);
    return finish(status);
  }
  const CallDeadline deadline{absl::FromChrono(context->deadline()), [context] { return context->IsCancelled(); }};
  absl::StatusOr<::grpcplugin::BestOptionsResponse> reply = Answer(*request, deadline);
  if (!reply.ok()) return finish(reply.status());
  bool own_buffer = false;
  const ::grpc::Status serialized =
      ::grpc::SerializationTraits<::grpcplugin::BestOptionsResponse>::Serialize(*reply, response_bytes, &own_buffer);
  reactor->Finish(serialized);
  return reactor;
}

absl::StatusOr<::grpcplugin::BestOptionsResponse> ExpanderService::Answer(
    const codec::BestOptionsWire& request, const CallDeadline& deadline) {
  const absl::Time start = clock_.Now();
  absl::StatusOr<::grpcplugin::BestOptionsResponse> reply;
  try {
    reply = Decide(request, deadline);
  } catch (const std::exception& e) {
    reply = absl::InternalError(absl::StrCat("expander: ", e.what()));
  }
  std::string result = ResultLabel(reply.status().code());
  if (reply.ok() && reply->options().empty() && !request.options.empty()) result = "veto";
  Record(start, reply.status(), result, static_cast<int>(request.options.size()));
  return reply;
}

void ExpanderService::Record(absl::Time start, const absl::Status& status, const std::string& result, int options) {
  if (!status.ok()) {
    server::LogEvent(log_, "best_options_error",
                     {{"options", options}, {"result", result}, {"error", std::string(status.message())}},
                     spdlog::level::warn);
  }
  metrics_.calls.Inc({result});
  metrics_.latency.Observe(absl::ToDoubleSeconds(clock_.Now() - start));
}

absl::StatusOr<::grpcplugin::BestOptionsResponse> ExpanderService::Decide(
    const codec::BestOptionsWire& request, const CallDeadline& deadline) {
  if (Expired(deadline, clock_.Now())) {
    return absl::DeadlineExceededError("the call was cancelled or past its deadline on arrival");
  }
  if (request.options.size() > options_.max_options) {
    return absl::ResourceExhaustedError(absl::StrCat(request.options.size(), " options, more than the ",
                                                     options_.max_options, " this expander judges per call"));
  }
  for (size_t i = 0; i < request.options.size(); ++i) {
    const int64_t count = request.options[i].node_count;
    if (count < 0 || count > kMaxNodeCount) {
      return absl::InvalidArgumentError(absl::StrCat("options[", i, "].nodeCount ", count, " is outside 0..",
                                                     kMaxNodeCount, " (no cluster is that large)"));
    }
  }
  absl::StatusOr<codec::DecodedRequest> decoded = codec::DecodeBestOptions(request, {.pods = &decoded_pods_, .templates = &decoded_templates_});
  if (!decoded.ok()) return decoded.status();

  decision::RankInput input;
  input.options.reserve(decoded->options.size());
  for (codec::ExpanderOption& option : decoded->options) {
    input.options.push_back({std::move(option.node_group_id), option.node_count, std::move(option.pods)});
  }
  input.templates = std::move(decoded->templates);
  // What CA can grow, groups at size zero included, for the extender's asking rule (capacity_ask.h).
  if (std::map<std::string, kube::Node> due = node_group_recording_.Due(input.templates, clock_.Now()); !due.empty()) {
    ledger_.RecordNodeGroups(std::move(due), options_.trust_templates);
  }
  input.preferences = ledger_.Preferences();
  input.price_per_node_hour = options_.price_per_node_hour;
  input.now = clock_.Now();
  input.claims = claims_;
  input.compute_domains = compute_domains_;
  decision::ScaleUpChoice choice = decision::ChooseScaleUp(input, topologies_, options_.policy,
                                                           [&] { return Expired(deadline, clock_.Now()); });
  const decision::Ranking& ranking = choice.ranking;
  // Past the deadline CA has already given up on this call (and failed open): an answer now would be
  // thrown away, and an intent recorded for it would hold capacity for a scale-up that is not ours.
  if (Expired(deadline, clock_.Now())) {
    return absl::DeadlineExceededError("ranking finished past the call's deadline");
  }
  if (ranking.chosen.empty() && !ranking.veto && !request.options.empty()) {
    return absl::InternalError("the ranking chose no option without vetoing");
  }

  absl::flat_hash_map<absl::string_view, size_t> request_index;  // node group id -> its (first) option
  for (size_t i = 0; i < request.options.size(); ++i) request_index.emplace(request.options[i].node_group_id, i);
  int stranding = 0;
  for (const decision::OptionVerdict& verdict : ranking.verdicts) stranding += verdict.strands ? 1 : 0;
  metrics_.options_stranding.Inc({}, stranding);

  ::grpcplugin::BestOptionsResponse response;
  for (const std::string& id : ranking.chosen) {
    auto it = request_index.find(id);
    if (it == request_index.end()) continue;  // not CA's: it would drop the id anyway
    *response.add_options() = ReplyOption(request.options[it->second]);
  }

  if (recorder_ != nullptr) {
    for (history::Record& record : history::ScaleUpRecords(clock_.Now(), input, choice)) recorder_->Record(std::move(record));
  }
  // Recorded so that the extender holds the new GPUs for these pods (decision/intent.h).
  std::string intent_group;
  if (choice.intent) {
    intent_group = choice.intent->node_group;
    ledger_.RecordIntent(*std::move(choice.intent));
  }
  if (!ranking.chosen.empty()) metrics_.decisions.Inc({ranking.chosen.front()});
  Log(ranking, input, intent_group);
  return response;
}

void ExpanderService::Log(const decision::Ranking& ranking, const decision::RankInput& input, const std::string& intent_group) const {
  size_t gpu_options = 0, stranding = 0, logged = 0;
  for (const decision::OptionVerdict& verdict : ranking.verdicts) {
    gpu_options += verdict.needs_gpus ? 1 : 0;
    stranding += verdict.strands ? 1 : 0;
  }
  // Options without GPU pods are passed through unjudged: their verdicts say nothing worth a record.
  if (log_.should_log(spdlog::level::info)) {
    for (const decision::OptionVerdict& v : ranking.verdicts) {
      if (!v.needs_gpus) continue;
      if (logged++ == kMaxLoggedVerdicts) break;
      server::LogEvent(log_, "option_verdict",
                       {{"node_group", v.node_group_id},
                        {"strands", v.strands},
                        {"reason", v.reason},
                        {"preferences_satisfied", v.preferences_satisfied},
                        {"quality_per_mille", v.quality_per_mille},
                        {"idle_gpus", v.idle_gpus},
                        {"price", v.price}});
    }
  }
  server::LogEvent(log_, "best_options",
                   {{"options", input.options.size()},
                    {"gpu_options", gpu_options},
                    {"stranding", stranding},
                    {"preferences", input.preferences.size()},
                    {"chosen", absl::StrJoin(ranking.chosen, ",")},
                    {"veto", ranking.veto},
                    {"intent", intent_group},
                    {"verdicts_not_logged", gpu_options > kMaxLoggedVerdicts
                                                               ? gpu_options - kMaxLoggedVerdicts
                                                               : 0}});
}

}  // namespace topofit::expander
