#pragma once

// A small decision history, one GPU pod's whole chain, told by every MCP tool:
//   ml/train-7 (uid-train-7, 8 GPUs, NVLink required) refused by h100-3 (its free GPUs split: weakest link
//   SYS) and g5-1 (4 GPUs free), its capacity asked, the expander grows p5-a (g5 would strand it), the intent;
//   ml/infer-1 bound to g5-1, then its container restarted (Xid 79: a GPU fault); idle GPUs on h100-3
//   (fragmented) and g5-2 (awaiting scale-down).
// The MCP clients' tests read it from a file (seed_decisions.cc), the MCP fuzz harness from memory
// (fuzz/mcp_fuzz.cc), so the requests recorded from the clients ask about what is there.

#include <string>
#include <vector>

#include "decision/intent.h"
#include "history/record.h"

namespace topofit::history {

std::vector<Record> SeedRecords();

// The ledger's intent for one node of `group` (its nodes labelled `group_label`=`group`), held for the
// pod `pod_uid`'s `gpus` GPUs: what the expander records when it grows a group for a pending pod.
decision::Intent OneNodeIntent(const std::string& group, const std::string& group_label, const std::string& pod_uid,
                               int gpus);

}  // namespace topofit::history
