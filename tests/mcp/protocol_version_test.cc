#include "mcp/protocol_version.h"

#include <catch2/catch.hpp>

namespace topofit::mcp {
namespace {

TEST_CASE("the two eras of protocol revisions", "[mcp]") {
  for (const char* legacy : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
    CAPTURE(legacy);
    CHECK(IsLegacyProtocolVersion(legacy));
    CHECK_FALSE(IsModernProtocolVersion(legacy));
    CHECK_FALSE(NamesModernEra(legacy));
  }
  CHECK(IsModernProtocolVersion("2026-07-28"));
  CHECK_FALSE(IsLegacyProtocolVersion("2026-07-28"));
  // Not spoken here, but of the modern era: a request naming them is answered by 2026-07-28's rules, which
  // say it is unsupported; older unknown revisions are 2025's to refuse.
  for (const char* later : {"2026-07-28", "2026-12-01", "2027-01-01", "v999.0.0"}) {
    CAPTURE(later);
    CHECK(NamesModernEra(later));
  }
  for (const char* earlier : {"2024-11-05", "1900-01-01", "2026-07-27", "", "2026"}) {
    CAPTURE(earlier);
    CHECK_FALSE(NamesModernEra(earlier));
    CHECK_FALSE(IsModernProtocolVersion(earlier));
  }
}

}  // namespace
}  // namespace topofit::mcp
