// The extender's request bodies (codec/extender_json.h): ExtenderArgs (filter, prioritize) with and without
// nodes the caller already holds, ExtenderBindingArgs and ExtenderPreemptionArgs, as kube-scheduler or an
// attacker sends them. Any outcome is fine but a crash, a sanitizer report or a hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "codec/extender_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<topofit::codec::ExtenderArgs> args = topofit::codec::ParseExtenderArgs(body);
  if (args.ok() && args->nodes) {
    for (size_t i = 0; i < args->nodes->size(); ++i) (void)topofit::codec::DecodeNodeArg((*args->nodes)[i], i);
  }
  // Every node counts as current: only located, never decoded.
  (void)topofit::codec::ParseExtenderArgs(body, [](absl::string_view, absl::string_view) { return true; });
  (void)topofit::codec::ParseBindingArgs(body);
  (void)topofit::codec::ParsePreemptionArgs(body);
  return 0;
}
