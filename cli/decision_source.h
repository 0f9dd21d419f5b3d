#pragma once

// Where `topofit explain` and `topofit mcp` read the decision history: a running extender's ops port
// (GET /decisions with the admin token) or a decision database file.

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "history/explain_query.h"
#include "history/store.h"

namespace topofit::cli {

struct DecisionSource {
  history::PageSource pages;
  std::unique_ptr<history::DecisionStore> store;  // the database read, when from --db
};

// --server, --token-file and --db on `cmd`.
void AddDecisionSourceFlags(CLI::App& cmd, std::string& server, std::string& token_file, std::string& db);

// Exactly one of `server` (http://HOST:PORT, with the admin token read from `token_file`) and `db`.
absl::StatusOr<DecisionSource> OpenDecisionSource(const std::string& server, const std::string& token_file,
                                                  const std::string& db);

}  // namespace topofit::cli
