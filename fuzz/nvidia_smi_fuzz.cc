// `nvidia-smi topo -m` text (topology/nvidia_smi.h), from a node annotation or the agent's nvidia-smi,
// with a known product (the model is built in full) and without.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "topology/nvidia_smi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)topofit::topology::ParseNvidiaSmiTopo(text);
  (void)topofit::topology::ParseNvidiaSmiTopo(text, topofit::topology::NvidiaSmiHints{"NVIDIA-H100-80GB-HBM3"});
  return 0;
}
