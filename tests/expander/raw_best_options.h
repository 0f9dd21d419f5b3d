#pragma once

#include <chrono>
#include <future>
#include <string>
#include <utility>

#include <grpcpp/generic/generic_stub.h>

namespace topofit::testing {

// /grpcplugin.Expander/BestOptions called with `request_bytes` as they are (garbage included, or a request
// serialized beforehand, as CA serializes before it calls), CA's 5 s deadline; the reply's bytes into
// `reply`.
inline ::grpc::Status RawBestOptions(::grpc::GenericStub& stub, const std::string& request_bytes,
                                     ::grpc::ByteBuffer* reply) {
  ::grpc::Slice slice(request_bytes);
  const ::grpc::ByteBuffer request(&slice, 1);
  ::grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  std::promise<::grpc::Status> done;
  stub.UnaryCall(&context, "/grpcplugin.Expander/BestOptions", ::grpc::StubOptions(), &request, reply,
                 [&done](::grpc::Status status) { done.set_value(std::move(status)); });
  return done.get_future().get();
}

}  // namespace topofit::testing
