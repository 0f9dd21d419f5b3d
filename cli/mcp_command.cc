#include "cli/mcp_command.h"

#include <iostream>
#include <memory>
#include <optional>

#include "cli/build_info.h"
#include "cli/decision_source.h"
#include "mcp/json_rpc.h"
#include "mcp/server.h"

namespace topofit::cli {
namespace {

// A line longer than this is refused unparsed (a parse error), so a runaway client costs bounded memory.
constexpr size_t kMaxLineBytes = 8 << 20;

// Reads one line of at most kMaxLineBytes into `line`; false at the end of input. `too_long` when the line
// was longer (the rest of it is skipped).
bool ReadLine(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* buf = in.rdbuf();
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) return !line.empty() || too_long;
    if (c == '\n') return true;
    if (line.size() < kMaxLineBytes) {
      line.push_back(static_cast<char>(c));
    } else {
      too_long = true;
    }
  }
}

}  // namespace

int RunMcp(const McpOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  absl::StatusOr<DecisionSource> source = OpenDecisionSource(options.server, options.token_file, options.db);
  if (!source.ok()) {
    err << "topofit mcp: " << source.status().message() << "\n";
    return 1;
  }
  const mcp::McpServer server(source->pages, kVersion);
  std::string line;
  bool too_long = false;
  while (ReadLine(in, line, too_long)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos && !too_long) continue;
    std::optional<nlohmann::json> reply =
        too_long ? std::optional<nlohmann::json>(mcp::Error(nullptr, mcp::kParseError, "Parse error: message too long"))
                 : server.Handle(line);
    if (reply) out << reply->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  }
  return 0;
}

void AddMcpCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<McpOptions>();
  CLI::App* cmd = app.add_subcommand(
      "mcp", "Read-only MCP server over stdio (for Claude Desktop or another MCP client): why pods wait, why groups "
             "grew, why GPUs idle, from the decision history (docs/mcp.md)");
  AddDecisionSourceFlags(*cmd, options->server, options->token_file, options->db);
  cmd->callback([options, &exit_code] { exit_code = RunMcp(*options, std::cin, std::cout, std::cerr); });
}

}  // namespace topofit::cli
