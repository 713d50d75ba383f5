#include "ingest-gateway/src/http/request_reader.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "boost/asio/buffer.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/core/string.hpp"
#include "boost/beast/http.hpp"
#include "common/crypto/random.h"
#include "common/logging/log.h"

namespace portcullis::gateway::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

absl::string_view ToAbsl(beast::string_view s) { return absl::string_view(s.data(), s.size()); }

// How a read that failed with `ec` is answered: the server's refusal, or nothing (close).
std::optional<Answer> AnswerForReadError(const beast::error_code& ec) {
  if (ec == bhttp::error::body_limit) {
    return Answer::kBodyTooLarge;
  }
  if (ec == bhttp::error::header_limit) {
    return Answer::kHeadersTooLarge;
  }
  if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) {
    return std::nullopt;  // The peer went away.
  }
  if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category()) {
    return Answer::kBadHttp;
  }
  return std::nullopt;
}

// Beast's HTTP/1 parser writing the request line, the fields and the body straight into an
// HttpRequest: no copy into Beast's own field container on the way.
class RequestParser final : public bhttp::basic_parser<true> {
 public:
  explicit RequestParser(HttpRequest* request) : request_(request) {}

  // Whether the target starts with '/' (origin form, the only one the gateway serves).
  bool target_is_origin_form() const { return target_is_origin_form_; }
  unsigned version() const { return version_; }

 private:
  void on_request_impl(bhttp::verb, beast::string_view method, beast::string_view target,
                       int version, beast::error_code&) override {
    request_->method.assign(method.data(), method.size());
    const absl::string_view whole = ToAbsl(target);
    target_is_origin_form_ = !whole.empty() && whole.front() == '/';
    const size_t question = whole.find('?');
    const absl::string_view path = whole.substr(0, question);
    request_->path.assign(path.data(), path.size());
    if (question != absl::string_view::npos) {
      const absl::string_view query = whole.substr(question + 1);
      request_->query.assign(query.data(), query.size());
    }
    version_ = static_cast<unsigned>(version);
  }

  void on_response_impl(int, beast::string_view, int, beast::error_code& ec) override {
    ec = bhttp::error::bad_method;  // A request parser never sees a status line.
  }

  void on_field_impl(bhttp::field, beast::string_view name, beast::string_view value,
                     beast::error_code&) override {
    request_->headers.Add(ToAbsl(name), ToAbsl(value));
  }

  void on_header_impl(beast::error_code&) override {}

  // basic_parser has checked the length against the body limit.
  void on_body_init_impl(const boost::optional<uint64_t>& content_length,
                         beast::error_code&) override {
    if (content_length) {
      request_->body.reserve(static_cast<size_t>(*content_length));
    }
  }

  size_t on_body_impl(beast::string_view body, beast::error_code&) override {
    request_->body.append(body.data(), body.size());
    return body.size();
  }

  void on_chunk_header_impl(uint64_t, beast::string_view, beast::error_code&) override {}

  size_t on_chunk_body_impl(uint64_t, beast::string_view body, beast::error_code&) override {
    request_->body.append(body.data(), body.size());
    return body.size();
  }

  void on_finish_impl(beast::error_code&) override {}

  HttpRequest* const request_;
  bool target_is_origin_form_ = false;
  unsigned version_ = 11;
};

}  // namespace

struct RequestReader::Parser {
  beast::flat_buffer buffer;
  std::optional<RequestParser> parser;
};

RequestReader::RequestReader(RequestLimits limits)
    : limits_(std::move(limits)), parser_(std::make_unique<Parser>()) {}

RequestReader::~RequestReader() = default;

void RequestReader::Start() {
  request_ = HttpRequest();
  parser_->parser.emplace(&request_);
  parser_->parser->header_limit(limits_.max_header_bytes);
  parser_->parser->body_limit(limits_.max_body_bytes);
  // As http::async_read_header: stop after the header, so its limits apply before the body.
  parser_->parser->eager(false);
  header_done_ = false;
  keep_alive_ = false;
  request_id_.clear();
}

bool RequestReader::HasBufferedBytes() const { return parser_->buffer.size() > 0; }

absl::Span<char> RequestReader::Prepare(size_t n) {
  const auto room = parser_->buffer.prepare(n);
  return absl::Span<char>(static_cast<char*>(room.data()), room.size());
}

ReadStep RequestReader::Received(size_t count) {
  parser_->buffer.commit(count);
  return Parse();
}

ReadStep RequestReader::Feed(absl::string_view bytes) {
  const absl::Span<char> room = Prepare(bytes.size());
  std::memcpy(room.data(), bytes.data(), bytes.size());
  return Received(bytes.size());
}

ReadStep RequestReader::Parse() {
  // Beast's read loop (http::read_some) over the bytes at hand.
  auto& parser = *parser_->parser;
  while (parser_->buffer.size() > 0) {
    beast::error_code ec;
    const size_t used = parser.put(parser_->buffer.data(), ec);
    parser_->buffer.consume(used);
    if (ec == bhttp::error::need_more) {
      return ReadStep::kNeedMore;
    }
    if (ec) {
      return Failed(AnswerForReadError(ec));
    }
    if (!header_done_ && parser.is_header_done()) {
      if (const ReadStep step = OnHeader(); step != ReadStep::kNeedMore) {
        return step;
      }
    }
    if (parser.is_done()) {
      return OnMessage();
    }
    if (used == 0) {
      return ReadStep::kNeedMore;
    }
  }
  return ReadStep::kNeedMore;
}

ReadStep RequestReader::ReceivedEnd() {
  auto& parser = *parser_->parser;
  if (!parser.got_some()) {
    return Failed(std::nullopt);  // end_of_stream: nothing of a request arrived.
  }
  beast::error_code ec;
  parser.put_eof(ec);
  if (ec) {
    return Failed(AnswerForReadError(ec));
  }
  return parser.is_done() ? OnMessage() : Failed(std::nullopt);
}

ReadStep RequestReader::Failed(std::optional<Answer> answer) {
  if (request_id_.empty()) {
    request_id_ = crypto::UniqueIdHex();
  }
  if (!answer.has_value()) {
    return ReadStep::kClose;
  }
  refusal_ = *answer;
  return ReadStep::kRefuse;
}

ReadStep RequestReader::OnHeader() {
  header_done_ = true;
  auto& parser = *parser_->parser;
  const std::optional<absl::string_view> incoming_id = request_.headers.Get("X-Request-Id");
  if (incoming_id.has_value() && IsAcceptableRequestId(*incoming_id)) {
    request_id_ = std::string(*incoming_id);
  } else {
    request_id_ = crypto::UniqueIdHex();
  }
  uint64_t limit = limits_.max_body_bytes;
  if (limits_.body_limit_for_path) {
    const uint64_t path_limit = limits_.body_limit_for_path(request_.path);
    if (path_limit > 0) {
      limit = std::min(limit, path_limit);
    }
  }
  if (parser.content_length() && *parser.content_length() > limit) {
    return Failed(Answer::kBodyTooLarge);
  }
  parser.body_limit(limit);
  // As http::async_read: the body as fast as it comes.
  parser.eager(true);
  if (parser.is_done()) {
    return ReadStep::kNeedMore;  // No body: Parse() finishes the message.
  }
  const std::optional<absl::string_view> expect = request_.headers.Get("Expect");
  if (expect.has_value() && absl::EqualsIgnoreCase(*expect, "100-continue")) {
    return ReadStep::kSendContinue;
  }
  return ReadStep::kNeedMore;
}

ReadStep RequestReader::OnMessage() {
  const RequestParser& parser = *parser_->parser;
  if (!parser.target_is_origin_form()) {
    return Failed(Answer::kBadTarget);
  }
  // Not needed here any more until the next request sets it again.
  request_.request_id = std::move(request_id_);
  keep_alive_ = parser.keep_alive();
  version_ = parser.version();
  parser_->parser.reset();
  return ReadStep::kRequest;
}

HttpRequest RequestReader::TakeRequest() { return std::move(request_); }

void Dispatch(const Handler& handler, HttpRequest request, absl::string_view request_id,
              const Respond& respond) {
  try {
    handler(std::move(request), respond);
  } catch (const std::exception& e) {
    logging::Error("request_id={} handler threw: {}", std::string(request_id), e.what());
    respond(ErrorAnswer(Answer::kHandlerFailed));
  }
}

}  // namespace portcullis::gateway::http
