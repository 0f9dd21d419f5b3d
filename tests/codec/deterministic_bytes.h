#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

#include <string>

namespace topofit::testing {

// A message's bytes with map entries in key order, as Kubernetes' Go marshalling writes them (C++ writes
// maps in hash order otherwise, and template keys compare bytes). Empty if it does not serialize.
inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string out;
  bool ok = false;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    ok = message.SerializeToCodedStream(&coded);
  }
  return ok ? out : std::string();
}

}  // namespace topofit::testing
