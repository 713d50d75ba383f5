#include "ingest-gateway/src/http/request_reader.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>

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

}  // namespace

struct RequestReader::Parser {
  beast::flat_buffer buffer;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser;
};

RequestReader::RequestReader(RequestLimits limits)
    : limits_(std::move(limits)), parser_(std::make_unique<Parser>()) {}

RequestReader::~RequestReader() = default;

void RequestReader::Start() {
  parser_->parser.emplace();
  parser_->parser->header_limit(limits_.max_header_bytes);
  parser_->parser->body_limit(limits_.max_body_bytes);
  // As http::async_read_header: stop after the header, so its limits apply before the body.
  parser_->parser->eager(false);
  header_done_ = false;
  keep_alive_ = false;
  request_id_.clear();
  request_ = HttpRequest();
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
  const auto& header = parser.get();
  const auto incoming_id = header.find("X-Request-Id");
  if (incoming_id != header.end() && IsAcceptableRequestId(ToAbsl(incoming_id->value()))) {
    request_id_ = std::string(ToAbsl(incoming_id->value()));
  } else {
    request_id_ = crypto::UniqueIdHex();
  }
  uint64_t limit = limits_.max_body_bytes;
  if (limits_.body_limit_for_path) {
    const absl::string_view target = ToAbsl(header.target());
    const uint64_t path_limit = limits_.body_limit_for_path(target.substr(0, target.find('?')));
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
  const auto expect = header.find(bhttp::field::expect);
  if (expect != header.end() && beast::iequals(expect->value(), "100-continue")) {
    return ReadStep::kSendContinue;
  }
  return ReadStep::kNeedMore;
}

ReadStep RequestReader::OnMessage() {
  auto message = parser_->parser->release();
  parser_->parser.reset();
  const absl::string_view target = ToAbsl(message.target());
  if (target.empty() || target.front() != '/') {
    return Failed(Answer::kBadTarget);
  }
  request_ = HttpRequest();
  request_.method = std::string(ToAbsl(message.method_string()));
  const size_t question = target.find('?');
  request_.path = std::string(target.substr(0, question));
  if (question != absl::string_view::npos) {
    request_.query = std::string(target.substr(question + 1));
  }
  for (const auto& field : message) {
    request_.headers.Add(ToAbsl(field.name_string()), ToAbsl(field.value()));
  }
  request_.body = std::move(message.body());
  request_.request_id = request_id_;
  keep_alive_ = message.keep_alive();
  version_ = message.version();
  return ReadStep::kRequest;
}

HttpRequest RequestReader::TakeRequest() { return std::move(request_); }

void Dispatch(const Handler& handler, HttpRequest request, const Respond& respond) {
  const std::string request_id = request.request_id;
  try {
    handler(std::move(request), respond);
  } catch (const std::exception& e) {
    logging::Error("request_id={} handler threw: {}", request_id, e.what());
    respond(ErrorAnswer(Answer::kHandlerFailed));
  }
}

}  // namespace portcullis::gateway::http
