#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codec/best_options_wire.h"
#include "expander/expander_service.h"
#include "proto/expander.pb.h"

namespace topofit::testing {

// The service's whole decision on `request` without gRPC, its bytes read as the server reads them.
inline absl::StatusOr<::grpcplugin::BestOptionsResponse> AnswerMessage(expander::ExpanderService& service,
                                                                       const ::grpcplugin::BestOptionsRequest& request,
                                                                       const expander::CallDeadline& deadline) {
  const std::string bytes = request.SerializeAsString();
  absl::StatusOr<codec::BestOptionsWire> wire = codec::ReadBestOptions(bytes);
  if (!wire.ok()) return wire.status();
  return service.Answer(*wire, deadline);
}

}  // namespace topofit::testing
