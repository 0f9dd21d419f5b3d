// The topology descriptor (codec/topology_json.h) from a node's topofit.io/gpu-topology annotation; what
// parses must survive TopologyToJson and parse again (the agent publishes it so).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "codec/topology_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)topofit::codec::ParseTopologyAnnotation(text, {});
  absl::StatusOr<topofit::topology::Topology> topology = topofit::codec::ParseTopologyDescriptor(text);
  if (!topology.ok()) return 0;
  const std::string again = topofit::codec::TopologyToJson(*topology).dump();
  if (!topofit::codec::ParseTopologyDescriptor(again).ok()) std::abort();  // a descriptor that does not round-trip
  return 0;
}
