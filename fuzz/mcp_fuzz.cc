// One MCP message (JSON-RPC 2.0: initialize, tools/list, tools/call with any tool's arguments, resources,
// prompts; revision 2025-11-25's, or 2026-07-28's with its _meta envelope and server/discover) as a client
// sends it over stdio or POST /mcp, through McpServer::Handle, the entry both transports call: once as /mcp
// of an extender has it (a decision history and the live GPU state and ledger) and once as `topofit mcp
// --db` has it (the history alone). The history is the one the MCP SDK tests read
// (tests/mcp/seed_records.h) and the live state the one they feed their extender, so the seeds, recorded
// from the SDK's clients of both revisions (tests/data/fuzz/mcp), ask about what is there. Beyond not
// crashing: a request is answered with its own id and exactly one of result and error, and a notification
// or a response is not answered.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "history/store.h"
#include "ledger/ledger.h"
#include "mcp/json_rpc.h"
#include "mcp/server.h"
#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"
#include "tests/mcp/seed_records.h"
#include "tests/server/fake_clock.h"

namespace {

using nlohmann::json;
using topofit::kube::testing::MakeNode;

constexpr char kGroupLabel[] = "eks.amazonaws.com/nodegroup";

// What tests/mcp/sdk.test.mjs feeds its live extender: ml/trainer (4 NVLink GPUs) refused by g5-1 and
// waiting as a preference, ml/infer fitting p4d-1; and an intent holding a p4d-a node for ml/big.
struct Servers {
  Servers()
      : store(topofit::history::DecisionStore::Open("").value()),
        gpus(topofit::scheduler::NewInMemoryGpuState()),
        ledger(topofit::ledger::NewInMemoryLedger(clock)),
        live([this](const topofit::history::DecisionQuery& q) { return store->Query(q); }, "fuzz", "",
             topofit::mcp::LiveState{gpus.get(), ledger.get()}),
        history_only([this](const topofit::history::DecisionQuery& q) { return store->Query(q); }, "fuzz") {
    if (!store->Append(topofit::history::SeedRecords()).ok()) std::abort();  // the harness's own data
    for (const auto& [name, type, group] : {std::tuple{"p4d-1", "p4d.24xlarge", "p4d-a"},
                                            std::tuple{"g5-1", "g5.48xlarge", "g5-group"}}) {
      const topofit::kube::Node node =
          MakeNode().name(name).label("node.kubernetes.io/instance-type", type).label(kGroupLabel, group).gpus(8);
      if (!gpus->UpsertNode(node).ok()) std::abort();
    }
    topofit::decision::Preference trainer;
    trainer.pod_uid = "uid-trainer";
    trainer.pod_key = "ml/trainer";
    trainer.gpus = 4;
    trainer.min_link = topofit::topology::LinkClass::kNvLink;
    trainer.refused_nodes = {"g5-1: best reachable link is SYS"};
    ledger->RecordPreference(trainer);
    ledger->RecordIntent(topofit::history::OneNodeIntent("p4d-a", kGroupLabel, "uid-big", 8));
  }

  topofit::server::FakeClock clock;
  std::unique_ptr<topofit::history::DecisionStore> store;
  std::unique_ptr<topofit::scheduler::GpuState> gpus;
  std::unique_ptr<topofit::ledger::Ledger> ledger;
  topofit::mcp::McpServer live;
  topofit::mcp::McpServer history_only;
};

// The reply's invariants, against the message as ParseMessage classified it; then the reply written as
// both transports write it.
void Check(const topofit::mcp::Message& message, const std::optional<json>& reply) {
  using Type = topofit::mcp::Message::Type;
  if (message.type == Type::kNotification || message.type == Type::kResponse) {
    if (reply) std::abort();  // nothing answers a notification
    return;
  }
  if (!reply || !reply->is_object() || reply->value("jsonrpc", "") != "2.0") std::abort();
  if (reply->contains("result") == reply->contains("error")) std::abort();
  if (message.type == Type::kRequest && (*reply)["id"] != message.id) std::abort();
  (void)reply->dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Servers* const servers = new Servers();  // never destroyed: the store is read on every input
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const topofit::mcp::Message message = topofit::mcp::ParseMessage(text);
  Check(message, servers->live.Handle(text));
  Check(message, servers->history_only.Handle(text));
  return 0;
}
