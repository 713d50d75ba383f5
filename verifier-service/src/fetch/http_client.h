#pragma once

// HttpClient: one HTTP GET (or, for outbound deliveries, POST) to an address that was already
// checked. The interface where the
// connection starts; CurlHttpClient is the real one, tests use recording fakes.
//
// A client follows no redirects, sends no cookies and no credentials, and connects to
// `HttpRequest::address` only — never to an address of its own finding.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/net/ip_address.h"
#include "common/url/url.h"

namespace portcullis::verifier::fetch {

// The Accept header every fetch sends: the verifier parses HTML only.
inline constexpr char kAcceptHeader[] = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1";

struct HttpRequest {
  // What to GET. The Host header, TLS SNI and certificate check use url.host().
  url::Url url;
  // The only address the connection may go to: the one the egress policy checked (pinning).
  net::IpAddress address = net::IpAddress::Ipv4(0);
  // The whole transfer, connect to last byte.
  absl::Duration timeout = absl::Seconds(5);
  // Slower than this many bytes per second for `low_speed_time` ends the transfer (slow trickle).
  int64_t low_speed_bytes_per_second = 1024;
  absl::Duration low_speed_time = absl::Seconds(3);
  // Decoded body bytes kept at most (counted after content decoding): more is kResourceExhausted.
  int64_t max_body_bytes = 1 << 20;
  // A body is read only for a 2xx response whose media type (lowercase, without parameters) is
  // one of these; any other response ends after its headers, with body_skipped set.
  std::vector<std::string> body_media_types = {"text/html", "application/xhtml+xml"};
  // "GET", or "POST" with `post_body` (outbound deliveries, issue 20).
  std::string method = "GET";
  std::string post_body;
  // Extra request headers ("Name", "value"), e.g. a delivery's Content-Type and signature. The
  // GET's Accept header is sent only when none is given here.
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpResponse {
  int status = 0;
  // The Content-Type header as sent; empty when absent.
  std::string content_type;
  // The Location header as sent (not resolved), for redirects.
  std::optional<std::string> location;
  // The Retry-After header as sent, for 429 and 503.
  std::optional<std::string> retry_after;
  // Content-Length, ETag and Last-Modified as sent, reported to callers of the fetch RPC.
  std::optional<std::string> content_length;
  std::optional<std::string> etag;
  std::optional<std::string> last_modified;
  // Decoded; empty when body_skipped.
  std::string body;
  // The response had a body that was not read (see HttpRequest::body_media_types).
  bool body_skipped = false;
};

class HttpClient {
 public:
  // The response, whatever its status; or the failure:
  //   kPermissionDenied   the connection was refused at connect time (not the checked address, or
  //                       refused by the egress policy);
  //   kResourceExhausted  the decoded body passed max_body_bytes;
  //   kDeadlineExceeded   the timeout, or slower than the minimum speed;
  //   kUnavailable        connection refused or reset, TLS handshake failed, no response;
  //   kFailedPrecondition the TLS certificate does not verify for the host name;
  //   kInvalidArgument    a malformed response (bad content encoding, bad headers);
  //   kCancelled          the client shut down first.
  using Callback = absl::AnyInvocable<void(absl::StatusOr<HttpResponse>) &&>;

  virtual ~HttpClient() = default;

  // Starts the GET; calls `callback` exactly once, on any thread (possibly before Fetch
  // returns). The callback must not block.
  virtual void Fetch(HttpRequest request, Callback callback) = 0;
};

// The media type of a Content-Type value: lowercase, parameters and spaces removed
// ("Text/HTML; charset=utf-8" -> "text/html").
std::string MediaTypeOf(absl::string_view content_type);

}  // namespace portcullis::verifier::fetch
