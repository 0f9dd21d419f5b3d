// topofit-bench: `topofit bench` alone. The replay needs none of the servers' gRPC, HTTP, TLS or Kubernetes
// client code, so this binary builds from a fraction of the sources: what the main job's first run on a
// fresh machine builds (scripts/main.sh). Same options, same output as `topofit bench`.

#include <string>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"

int main(int argc, char** argv) {
  CLI::App app{std::string(topofit::cli::kBenchDescription), "topofit-bench"};
  app.set_version_flag("--version", std::string("topofit-bench ") + TOPOFIT_VERSION);
  int exit_code = 0;
  topofit::cli::DefineBench(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
