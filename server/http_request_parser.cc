#include "server/http_request_parser.h"

#include <boost/beast/http/error.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace topofit::server {

namespace http = boost::beast::http;
using boost::beast::error_code;
using boost::beast::string_view;

namespace {

absl::string_view View(string_view s) { return absl::string_view(s.data(), s.size()); }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

RequestRefusal RefusalFor(const error_code& ec) {
  if (!ec) return RequestRefusal::kNone;
  if (ec == http::error::header_limit) return RequestRefusal::kHeaderTooLarge;
  if (ec == http::error::body_limit) return RequestRefusal::kBodyTooLarge;
  return RequestRefusal::kMalformed;
}

std::string UrlDecode(absl::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

RequestParser::RequestParser(const RequestLimits& limits, HttpRequest& out) : limits_(limits), out_(out) {
  header_limit(static_cast<std::uint32_t>(std::min<size_t>(limits.max_header_bytes, UINT32_MAX)));
  body_limit(limits.max_body_bytes);
  eager(true);
  out_.body.clear();  // keeps the capacity
}

void RequestParser::on_request_impl(http::verb, string_view method_str, string_view target, int, error_code&) {
  out_.method = std::string(View(method_str));
  const absl::string_view whole = View(target);
  const size_t question = whole.find('?');
  out_.path = UrlDecode(whole.substr(0, question), /*plus_is_space=*/false);
  if (question == absl::string_view::npos) return;
  for (absl::string_view pair : absl::StrSplit(whole.substr(question + 1), '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    out_.query.emplace(UrlDecode(pair.substr(0, eq), true),
                       eq == absl::string_view::npos ? std::string() : UrlDecode(pair.substr(eq + 1), true));
  }
}

void RequestParser::on_response_impl(int, string_view, int, error_code& ec) { ec = http::error::bad_version; }

void RequestParser::on_field_impl(http::field name, string_view name_string, string_view value, error_code& ec) {
  // A flood of short fields stays under the byte limit long enough to cost a map node each: count them too.
  if (++fields_ > limits_.max_header_fields) {
    ec = http::error::header_limit;
    return;
  }
  if (name == http::field::expect && absl::EqualsIgnoreCase(View(value), "100-continue")) expects_continue_ = true;
  out_.headers.emplace(std::string(View(name_string)), std::string(View(value)));
}

void RequestParser::on_header_impl(error_code&) {}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length, error_code&) {
  // basic_parser has refused a Content-Length above body_limit already, so this is at most max_body_bytes.
  if (content_length) out_.body.reserve(static_cast<size_t>(*content_length) + kBodyPadding);
}

std::size_t RequestParser::on_body_impl(string_view body, error_code&) {
  out_.body.append(body.data(), body.size());
  return body.size();
}

void RequestParser::on_chunk_header_impl(std::uint64_t, string_view, error_code&) {}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t, string_view body, error_code&) {
  // basic_parser counts chunk sizes against body_limit as their headers arrive.
  out_.body.append(body.data(), body.size());
  return body.size();
}

void RequestParser::on_finish_impl(error_code&) {
  // Room for simdjson's padding past the end of a body read in chunks.
  if (out_.body.capacity() < out_.body.size() + kBodyPadding) out_.body.reserve(out_.body.size() + kBodyPadding);
}

}  // namespace topofit::server
