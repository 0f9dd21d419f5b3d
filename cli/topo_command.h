#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace topofit::cli {

// The options of `topofit topo`, as parsed from the command line.
struct TopoOptions {
  std::string file;                 // nvidia-smi text or JSON descriptor; "-" for stdin
  std::string shape;                // catalog shape or instance type
  std::vector<std::string> labels;  // key=value node labels
  // Node label keys naming an NVLink domain, most tightly connected first (empty: the default list).
  std::vector<std::string> domain_labels;
  int allocatable = 0;              // allocatable GPUs, with labels
  std::string product;              // product hint for nvidia-smi text
  int gpus = 0;                     // choose a set of this many GPUs (0: summary only)
  std::string free;                 // free GPU ids (empty: all)
  std::string min_link = "SYS";
  std::string min_bandwidth;
  bool json = false;
  bool list_shapes = false;
};

// Runs `topofit topo` with its streams injected; returns the exit code.
int RunTopo(const TopoOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

// `topofit topo`: read a topology (a file, stdin, a catalog shape, or node labels), print a summary of
// its graph (with node labels, the NVLink domain they name) and, for `--gpus K`, the set the allocator chooses, its bandwidth and weakest link, and why.
// Exit codes: 0 ok, 1 bad input, 2 the request does not fit.
void AddTopoCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
