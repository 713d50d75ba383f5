#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/listen_address.h"
#include "common/net/cidr.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/respond.h"

// An HTTP/1.1 server for requests from strangers. Every limit a client controls is bounded:
// body and header size, the time to send one request, the time a keep-alive connection may sit
// idle, the time to take a response, and the number of open connections, in total and per
// client address (ConnectionLimits). Beast stays inside.
namespace portcullis::gateway::http {

// Answers one request. May return before responding (e.g. while waiting on a gRPC callback);
// must never block.
using Handler = std::function<void(HttpRequest request, Respond respond)>;

struct HttpServerOptions {
  // Used in log lines ("http", "admin").
  std::string name = "http";
  config::HostPort listen;
  int io_threads = 1;
  // Connections over this number are answered 503 + Retry-After and closed.
  size_t max_connections = 1024;
  // Connections from one address (IPv4, or an IPv6 /64) over this number are answered 429 +
  // Retry-After and closed; 0: no per-address cap. Both refusals are written with a short write
  // timeout and a short linger, so a peer that never reads holds nothing for long.
  size_t max_connections_per_address = 64;
  // Peers exempt from the per-address cap (reverse proxies, load balancers).
  std::vector<net::Cidr> per_address_exempt;
  int retry_after_seconds = 5;
  // Requests with a larger body are answered 413 and the connection closed.
  uint64_t max_body_bytes = 1 << 20;
  // Per-path cap, smaller than max_body_bytes (0 or unset: no smaller cap).
  std::function<uint64_t(absl::string_view path)> body_limit_for_path;
  // Requests with a larger header are answered 431 and the connection closed.
  uint32_t max_header_bytes = 16384;
  // From the first byte of a request to its last.
  absl::Duration read_timeout = absl::Seconds(10);
  // How long a keep-alive connection may wait for the first byte of its next request.
  absl::Duration idle_timeout = absl::Seconds(30);
  // To write one response.
  absl::Duration write_timeout = absl::Seconds(10);
  // Called for every connection refused for being over max_connections.
  std::function<void()> on_connection_rejected;
  // Called for every connection refused for being over max_connections_per_address.
  std::function<void()> on_connection_rejected_per_address;
  // Called for every request the server answers itself (400, 413, 431) without a handler.
  std::function<void(int status)> on_protocol_error;
};

class HttpServer {
 public:
  // Binds the listener (port 0 picks a free port) without accepting yet.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(HttpServerOptions options,
                                                            Handler handler);
  virtual ~HttpServer() = default;

  // Starts the I/O threads and accepting.
  virtual void Start() = 0;

  // The bound port.
  virtual uint16_t port() const = 0;
  // "host:port" actually bound.
  virtual std::string address() const = 0;

  // Stops accepting, closes idle connections, lets requests in progress finish (their responses
  // say Connection: close). Returns true when every connection is gone before `deadline`;
  // otherwise closes the rest and returns false. The server is stopped afterwards.
  virtual bool Drain(absl::Time deadline) = 0;

  // Closes everything at once and joins the I/O threads. Idempotent; the destructor calls it.
  virtual void Stop() = 0;

  // Connections currently open (for tests and metrics).
  virtual size_t open_connections() const = 0;
};

}  // namespace portcullis::gateway::http
