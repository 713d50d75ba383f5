#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"

// The socket-free half of one HTTP/1.1 connection: bytes in, requests (or the server's own
// refusals) out. The server's Session feeds it what it reads and does what it says; the HTTP
// request fuzzer feeds it arbitrary bytes. It owns Beast's request parser with the header and
// body limits and the per-path body cap, the mapping of parser errors to answers, the target
// check and the HttpRequest it builds. Beast stays inside.
namespace portcullis::gateway::http {

struct RequestLimits {
  uint64_t max_body_bytes = 1 << 20;
  uint32_t max_header_bytes = 16384;
  // Per-path cap, smaller than max_body_bytes (0 or unset: no smaller cap).
  std::function<uint64_t(absl::string_view path)> body_limit_for_path;
};

// What the connection does next.
enum class ReadStep {
  // Read more bytes (Received), or tell of the end (ReceivedEnd).
  kNeedMore,
  // The header asks for "100 Continue" before the body: send it, then Parse().
  kSendContinue,
  // A whole request: TakeRequest(), answer it, then Start() the next one.
  kRequest,
  // Answer refusal() (which closes the connection).
  kRefuse,
  // Close without answering (the peer went away mid-request, or sent nothing).
  kClose,
};

class RequestReader {
 public:
  explicit RequestReader(RequestLimits limits);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Begins the next request. Bytes already received (pipelined) stay buffered.
  void Start();
  // True when bytes of the next request are already buffered (call Parse()).
  bool HasBufferedBytes() const;

  // Room for up to `n` bytes read from the connection; Received(count) then parses them.
  absl::Span<char> Prepare(size_t n);
  ReadStep Received(size_t count);
  // Parses what is buffered (after Start() with buffered bytes, after 100 Continue).
  ReadStep Parse();
  // The peer closed its side: there are no more bytes.
  ReadStep ReceivedEnd();
  // Prepare + copy + Received, for callers that hold the bytes already.
  ReadStep Feed(absl::string_view bytes);

  // After kRequest: the request (client_address left for the caller), once.
  HttpRequest TakeRequest();
  // After kRequest: whether the client keeps the connection open, and its HTTP version (11 =
  // HTTP/1.1).
  bool keep_alive() const { return keep_alive_; }
  unsigned version() const { return version_; }
  // After kRefuse: the answer (a row with kClose).
  Answer refusal() const { return refusal_; }
  // The client's X-Request-Id when acceptable (IsAcceptableRequestId), otherwise a random one;
  // set once the header is read, or by a refusal before it. After kRequest it has moved into the
  // request.
  const std::string& request_id() const { return request_id_; }

 private:
  struct Parser;

  ReadStep OnHeader();
  ReadStep OnMessage();
  // The request cannot be read: answered `answer`, or closed without an answer.
  ReadStep Failed(std::optional<Answer> answer);

  const RequestLimits limits_;
  std::unique_ptr<Parser> parser_;
  bool header_done_ = false;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  Answer refusal_ = Answer::kBadHttp;
  std::string request_id_;
  HttpRequest request_;
};

// Runs `handler` for `request`; a handler that throws is answered kHandlerFailed (500) and logged
// with `request_id`.
void Dispatch(const Handler& handler, HttpRequest request, absl::string_view request_id,
              const Respond& respond);

}  // namespace portcullis::gateway::http
