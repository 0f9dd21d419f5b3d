#include "notify/webhook_url.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kubeclient/config.h"

namespace topofit::notify {
namespace {

constexpr size_t kMaxWebhookUrlBytes = 2048;

}  // namespace

absl::StatusOr<codec::HttpUrl> ReadWebhookUrl(const std::string& path) {
  absl::StatusOr<std::string> read = kubeclient::ReadFileToString(path);
  if (!read.ok()) return read.status();
  const std::string url(absl::StripAsciiWhitespace(*read));
  if (url.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " is empty"));
  if (url.size() > kMaxWebhookUrlBytes || std::any_of(url.begin(), url.end(), [](char c) {
        return absl::ascii_isspace(static_cast<unsigned char>(c)) || absl::ascii_iscntrl(static_cast<unsigned char>(c));
      })) {
    return absl::InvalidArgumentError(absl::StrCat(path, " does not hold one URL"));
  }
  if (!absl::StartsWith(url, "https://") && !absl::StartsWith(url, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat("the URL in ", path, " must start with https:// or http://"));
  }
  absl::StatusOr<codec::HttpUrl> parsed = codec::ParseHttpUrl(url);
  if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", parsed.status().message()));
  return parsed;
}

}  // namespace topofit::notify
