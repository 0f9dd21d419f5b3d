#pragma once

#include <optional>

#include "expander/rank.h"
#include "ledger/ledger.h"

namespace topofit::expander {

// The intent a ranking implies: when exactly one GPU group is chosen, that is the scale-up CA will make
// (the chain's later expanders only choose among the options without GPU pods passed through with it), so
// the extender should hold the group's new GPUs for the option's pods — by the uid the ledger knows them by
// (ledger::LedgerPodUid), with the GPUs of those that require a topology (the pods the node is held for),
// and with the labels the group's nodes will carry (ledger::NodeGroupLabels of its
// template). With several GPU groups left the choice is CA's, and guessing would hold capacity for the
// wrong one: none. The time is the ledger's to set. One function for the gRPC service and the bench.
std::optional<ledger::Intent> IntentFor(const RankInput& input, const Ranking& ranking);

}  // namespace topofit::expander
