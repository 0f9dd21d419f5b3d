// Kubernetes objects in JSON (codec/kube_json.h, dra_json.h, compute_domain_json.h) as the API server's
// watches and lists deliver them: a Pod, a Node, a ResourceSlice, a ResourceClaim and a ComputeDomain from
// the same bytes, parsed as the kubeclient does (nlohmann, no exceptions).
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "codec/compute_domain_json.h"
#include "codec/dra_json.h"
#include "codec/kube_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  (void)topofit::codec::PodFromJson(json);
  (void)topofit::codec::NodeFromJson(json);
  (void)topofit::codec::ResourceSliceFromJson(json);
  (void)topofit::codec::ResourceClaimFromJson(json);
  (void)topofit::codec::ComputeDomainFromJson(json);
  return 0;
}
