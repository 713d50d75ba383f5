#pragma once

// CurlHttpClient: HttpClient over the libcurl multi interface — every transfer in one event-loop
// thread (curl_multi_socket_action over epoll: a wakeup costs what its ready sockets cost, however
// many transfers are in flight), many at once.
//
// Each transfer:
//   - connects only to HttpRequest::address (CURLOPT_CONNECT_TO, per transfer, so concurrent
//     fetches of one host pinned to different answers never share an entry);
//   - re-checks the address of every socket it opens (CURLOPT_OPENSOCKETFUNCTION): it must be the
//     pinned address and pass EgressPolicy::CheckAddress, else no socket is created;
//   - verifies TLS against the URL's host name (SNI and certificate);
//   - ignores proxy settings (CURLOPT_PROXY ""), speaks http and https only, follows no
//     redirects, sends no cookies and no credentials (no netrc);
//   - is bounded by a total timeout and a minimum speed, and keeps at most max_body_bytes of the
//     body counted after content decoding (gzip/deflate/br bombs stop at the cap);
//   - once it has proved slow (TricklePacing), is read in batches: paused after each read so that
//     the kernel gathers what arrives, then read again.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/http_client.h"

namespace portcullis::verifier::fetch {

// A body trickled a few bytes at a time (a tarpit keeping a fetch open until its deadline) would
// wake the loop once per packet: a thousand of them at 10 packets/s each are 10,000 wakeups a
// second taken from the fast fetches. A transfer that has run at least `after` and received fewer
// than `below_bytes_per_second` × its running time is paused for `pause` after each read (its
// socket unwatched: the kernel holds what arrives, up to the receive window), then read at once.
// At that rate a pause gathers about below_bytes_per_second × pause bytes, far under the receive
// buffer, so a slow transfer finishes at most `pause` later than it would have. The deadline still
// applies (libcurl's timer); the minimum speed, which libcurl stops checking across pauses, is
// checked by the loop at each pause.
// below_bytes_per_second 0: no pacing.
struct TricklePacing {
  absl::Duration after = absl::Milliseconds(500);
  int64_t below_bytes_per_second = 64 * 1024;
  absl::Duration pause = absl::Milliseconds(500);
};

struct CurlHttpClientConfig {
  std::string user_agent =
      "Portcullis/0.1 (webmention verifier; fetches the source of a webmention once)";
  // Trusted CA bundle (PEM) instead of the system's; for tests with a local TLS origin.
  std::string ca_file;
  TricklePacing pacing;
};

class CurlHttpClient final : public HttpClient {
 public:
  // `policy` is checked again at connect time; it must outlive the client.
  static absl::StatusOr<std::unique_ptr<CurlHttpClient>> Create(CurlHttpClientConfig config,
                                                                const EgressPolicy* policy);

  // Stops the loop; transfers still running are answered kCancelled.
  ~CurlHttpClient() override;

  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;

  void Fetch(HttpRequest request, Callback callback) override;

 private:
  class Loop;
  explicit CurlHttpClient(std::unique_ptr<Loop> loop);

  std::unique_ptr<Loop> loop_;
};

}  // namespace portcullis::verifier::fetch
