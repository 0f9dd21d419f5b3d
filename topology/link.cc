#include "topology/link.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "topology/quoted.h"

namespace topofit::topology {
namespace {

constexpr std::array<absl::string_view, 7> kNames = {"X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};

}  // namespace

absl::string_view LinkClassName(LinkClass link_class) {
  // A rank read back from elsewhere (a decision record in a database handed over) may be any number.
  const auto rank = static_cast<size_t>(link_class);
  return rank < kNames.size() ? kNames[rank] : absl::string_view("unknown");
}

absl::StatusOr<LinkClass> ParseLinkClass(absl::string_view text) {
  const std::string upper = absl::AsciiStrToUpper(text);
  if (upper == "NV") return LinkClass::kNvLink;
  absl::StatusOr<Link> link = ParseLinkToken(text);
  if (!link.ok()) return link.status();
  return link->link_class;
}

absl::StatusOr<Link> ParseLinkToken(absl::string_view token) {
  const std::string upper = absl::AsciiStrToUpper(token);
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (upper == kNames[i] && upper != "NV") return Link{static_cast<LinkClass>(i), 0, false};
  }
  int links = 0;
  if (absl::StartsWith(upper, "NV") && absl::SimpleAtoi(absl::string_view(upper).substr(2), &links) &&
      links > 0 && links <= 64) {
    return Link{LinkClass::kNvLink, links, false};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown link ", Quoted(token), "; expected X, NV#, PIX, PXB, PHB, NODE or SYS"));
}

std::string LinkToken(const Link& link) {
  if (link.link_class == LinkClass::kNvLink) return absl::StrCat("NV", link.nvlinks);
  return std::string(LinkClassName(link.link_class));
}

}  // namespace topofit::topology
