#pragma once

#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

namespace topofit::cli {

// `topofit mcp (--db PATH | --server URL --token-file F)`: the read-only MCP server (mcp/server.h) over
// stdio, for an MCP client that starts it (Claude Desktop, an IDE): one JSON-RPC message per line in, one
// reply per line out, logs on stderr. Ends at the end of input.
struct McpOptions {
  std::string server;
  std::string token_file;
  std::string db;
};

// Exit codes: 0 input ended, 1 no source.
int RunMcp(const McpOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

void AddMcpCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
