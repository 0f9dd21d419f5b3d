#pragma once

// An HTTP/1.1 request parser bounded by construction, for HttpServer: Beast's basic_parser does the framing
// (request line, fields, Content-Length and chunked bodies); this class writes straight into an HttpRequest
// and refuses, as soon as a limit is crossed and before anything is sized from it:
//   - more than `max_header_fields` fields, or more than `max_header_bytes` of request line and fields
//     (Beast's header_limit) -> kHeaderTooLarge (431);
//   - a Content-Length above `max_body_bytes`, from the header alone, or a chunked body that grows past it
//     -> kBodyTooLarge (413).
// Beast parses iteratively (no recursion), buffers at most the header limit before the header is complete,
// and hands the body over in the pieces it read.

#include <cstddef>
#include <cstdint>

#include <boost/beast/http/basic_parser.hpp>

#include "server/http_server.h"

namespace topofit::server {

struct RequestLimits {
  size_t max_header_bytes = 0;
  size_t max_header_fields = 0;
  size_t max_body_bytes = 0;
};

// Room a parser may read past the end of a body (simdjson's padding): a body is read into a buffer with this
// much spare capacity, so the extender parses a large body where it lies instead of copying it.
inline constexpr size_t kBodyPadding = 64;

enum class RequestRefusal {
  kNone,
  kHeaderTooLarge,  // 431
  kBodyTooLarge,    // 413
  kMalformed,       // 400
};

// What a parse error means for the answer.
RequestRefusal RefusalFor(const boost::beast::error_code& ec);

class RequestParser : public boost::beast::http::basic_parser<true> {
 public:
  // `out` is filled as the request arrives; its body keeps its buffer's capacity (a kept buffer) but not
  // its bytes. `out` must outlive the parser.
  RequestParser(const RequestLimits& limits, HttpRequest& out);

  // Whether the client asked to be told before it sends the body ("Expect: 100-continue").
  bool expects_continue() const { return expects_continue_; }

 private:
  void on_request_impl(boost::beast::http::verb method, boost::beast::string_view method_str,
                       boost::beast::string_view target, int version, boost::beast::error_code& ec) override;
  void on_response_impl(int, boost::beast::string_view, int, boost::beast::error_code& ec) override;
  void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, boost::beast::error_code& ec) override;
  void on_header_impl(boost::beast::error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         boost::beast::error_code& ec) override;
  std::size_t on_body_impl(boost::beast::string_view body, boost::beast::error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, boost::beast::string_view extensions,
                            boost::beast::error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t remain, boost::beast::string_view body,
                                 boost::beast::error_code& ec) override;
  void on_finish_impl(boost::beast::error_code& ec) override;

  const RequestLimits limits_;
  HttpRequest& out_;
  size_t fields_ = 0;
  bool expects_continue_ = false;
};

// Percent-decodes `text`; with `plus_is_space` (a query string), '+' is a space too. A malformed escape is
// kept as it is.
std::string UrlDecode(absl::string_view text, bool plus_is_space);

}  // namespace topofit::server
