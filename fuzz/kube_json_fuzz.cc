// Kubernetes objects in JSON (codec/kube_json.h) as the API server's watches and lists deliver them: a
// Pod and a Node from the same bytes, parsed as the kubeclient does (nlohmann, no exceptions).
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "codec/kube_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  (void)topofit::codec::PodFromJson(json);
  (void)topofit::codec::NodeFromJson(json);
  return 0;
}
