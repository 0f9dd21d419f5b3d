// The expander's protobuf wire (codec/kube_proto.h): a BestOptionsRequest decoded as the service does,
// and the same bytes as the bare Pod and Node encodings CA puts into podBytes and nodeBytesMap.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "codec/kube_proto.h"
#include "proto/expander.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  ::grpcplugin::BestOptionsRequest request;
  if (request.ParseFromArray(data, static_cast<int>(size))) (void)topofit::codec::DecodeBestOptions(request);
  (void)topofit::codec::PodFromBytes(bytes);
  (void)topofit::codec::NodeFromBytes(bytes);
  return 0;
}
