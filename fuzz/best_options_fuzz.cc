// The expander's protobuf wire (codec/best_options_wire.h, codec/kube_proto.h): a BestOptionsRequest read
// in place and decoded as the service does, with caches as it keeps them; the same bytes as the bare Pod and
// Node encodings CA puts into podBytes and nodeBytesMap, and as a template's two keys (codec/template_key.h).
// Whatever the generated parser reads, the in-place reader must read too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "codec/best_options_wire.h"
#include "codec/kube_proto.h"
#include "codec/template_key.h"
#include "proto/expander.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static topofit::codec::PodBytesCache pods(1 << 20);
  static topofit::codec::NodeBytesCache templates(1 << 20);
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<topofit::codec::BestOptionsWire> wire = topofit::codec::ReadBestOptions(bytes);
  if (wire.ok()) (void)topofit::codec::DecodeBestOptions(*wire, {.pods = &pods, .templates = &templates});
  ::grpcplugin::BestOptionsRequest request;
  if (request.ParseFromArray(data, static_cast<int>(size)) && !wire.ok()) std::abort();
  (void)topofit::codec::PodFromBytes(bytes);
  (void)topofit::codec::NodeFromBytes(bytes);
  (void)topofit::codec::TemplateKeyOf(bytes);
  (void)topofit::codec::SentKeyOf(bytes);
  return 0;
}
