#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codec/http_url.h"

namespace topofit::notify {

// The webhook URL a file holds (a mounted Secret: the URL is the webhook's credential, so never a flag's
// value): one http(s) URL, surrounding whitespace trimmed. Errors name the file and say what is wrong,
// never repeating the URL.
absl::StatusOr<codec::HttpUrl> ReadWebhookUrl(const std::string& path);

}  // namespace topofit::notify
