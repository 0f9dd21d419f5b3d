#include "mcp/protocol_version.h"

#include <algorithm>
#include <iterator>

namespace topofit::mcp {
namespace {

template <size_t N>
bool OneOf(const char* const (&versions)[N], absl::string_view version) {
  return std::any_of(std::begin(versions), std::end(versions), [&](const char* v) { return version == v; });
}

}  // namespace

bool IsLegacyProtocolVersion(absl::string_view version) { return OneOf(kLegacyProtocolVersions, version); }

bool IsModernProtocolVersion(absl::string_view version) { return OneOf(kModernProtocolVersions, version); }

bool NamesModernEra(absl::string_view version) { return version >= absl::string_view("2026-07-28"); }

}  // namespace topofit::mcp
