// topofit: one binary, one subcommand per front end (README.md, "Commands").

#include <CLI/CLI.hpp>
#include <openssl/crypto.h>

#include "cli/agent_command.h"
#include "cli/headroom_command.h"
#include "cli/bench_command.h"
#include "cli/build_info.h"
#include "cli/expander_command.h"
#include "cli/explain_command.h"
#include "cli/extender_command.h"
#include "cli/mcp_command.h"
#include "cli/topo_command.h"
#include "cli/webhook_command.h"

int main(int argc, char** argv) {
  // No OpenSSL cleanup at exit: it races the gRPC and HTTP worker threads still ending then (a thread
  // that ends after it leaks its error state; OpenSSL issue #6214). The kernel frees the rest.
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  CLI::App app{"topofit: GPU-topology-aware scheduling and autoscaling for Kubernetes"};
  app.set_version_flag("--version", std::string("topofit ") + topofit::cli::kVersion);
  app.require_subcommand(1);
  int exit_code = 0;
  topofit::cli::AddTopoCommand(app, exit_code);
  topofit::cli::AddExtenderCommand(app, exit_code);
  topofit::cli::AddExpanderCommand(app, exit_code);
  topofit::cli::AddServeCommand(app, exit_code);
  topofit::cli::AddBenchCommand(app, exit_code);
  topofit::cli::AddAgentCommand(app, exit_code);
  topofit::cli::AddHeadroomCommand(app, exit_code);
  topofit::cli::AddExplainCommand(app, exit_code);
  topofit::cli::AddMcpCommand(app, exit_code);
  topofit::cli::AddWebhookCommand(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
