// Writes the MCP clients' decision history (seed_records.h) for their tests (tests/mcp/*.mjs) to the
// database named on the command line, replacing nothing (give a new path). Written through the real store,
// so the tests read what a server would have written.

#include <iostream>

#include "history/store.h"
#include "tests/mcp/seed_records.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: seed_decisions DB\n";
    return 1;
  }
  auto store = topofit::history::DecisionStore::Open(argv[1]);
  if (!store.ok()) {
    std::cerr << store.status().message() << "\n";
    return 1;
  }
  if (absl::Status written = (*store)->Append(topofit::history::SeedRecords()); !written.ok()) {
    std::cerr << written.message() << "\n";
    return 1;
  }
  return 0;
}
