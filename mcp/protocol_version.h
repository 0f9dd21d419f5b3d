#pragma once

// The revisions of the Model Context Protocol this server speaks, in the two eras the 2026-07-28 revision
// names (basic/versioning): legacy revisions open with an `initialize` handshake; modern ones carry the
// revision in every request's `_meta` and have no handshake. topofit is "dual-era": it serves both, each
// request by its own era (mcp/server.h).

#include "absl/strings/string_view.h"

namespace topofit::mcp {

// Legacy: what `initialize` negotiates, newest first; one asking for another gets the newest.
inline constexpr const char* kLegacyProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
// Modern: what server/discover lists and a request's `_meta` may name; newest first.
inline constexpr const char* kModernProtocolVersions[] = {"2026-07-28"};

bool IsLegacyProtocolVersion(absl::string_view version);
bool IsModernProtocolVersion(absl::string_view version);

// Whether `version` belongs to the modern era, spoken here or not: revisions are dates, so string order is
// time order, and anything from 2026-07-28 on is modern (the official SDK's rule; "2027-01-01" or "v9" too).
bool NamesModernEra(absl::string_view version);

}  // namespace topofit::mcp
