#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

namespace topofit::cli {

// `topofit explain pod NS/NAME | group NAME | idle [NODE]`: the decision history told in plain language, newest first,
// from a running extender's ops port (GET /decisions with the admin token) or a decision database (a
// server's --decision-db, or a bench run's).
struct ExplainOptions {
  std::string subject;     // pod, group or idle
  std::string name;        // NS/NAME, the node group, or the node (empty: every node's idle GPUs)
  std::string server;      // http://HOST:PORT of the ops port
  std::string token_file;  // the admin token
  std::string db;          // or a decision database file
  bool json = false;
  int64_t limit = 500;     // newest records read at most
};

// Exit codes: 0 told, 1 bad input or an unreachable source, 2 nothing recorded about the subject.
int RunExplain(const ExplainOptions& options, std::ostream& out, std::ostream& err);

void AddExplainCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
