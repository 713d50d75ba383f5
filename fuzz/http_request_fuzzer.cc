// The gateway's HTTP request path (ingest-gateway/src/http) on arbitrary bytes from a client: the
// bytes go through Beast's request parser exactly as http_server.cc's Session drives it — same
// parser type, header limit, body limit and the per-path cap of POST /webmention, the same
// mapping of parser errors to 400/413/431, the same target check and HttpRequest — and every
// parsed request is routed to the real webmention and ingest handlers over a healthy fake
// verifier.
// Pipelined requests are read one after the other while the connection stays keep-alive.
// The first input byte sets how many bytes each read returns (as TCP segments would).
// Invariants: every request gets exactly one response; a healthy verifier never yields a 5xx; no
// response header contains CR or LF (no response splitting).
//
// Keep in step with Session::OnHeader/OnReadError/OnRequest in http_server.cc.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "boost/asio/buffer.hpp"
#include "boost/beast/core/flat_buffer.hpp"
#include "boost/beast/core/string.hpp"
#include "boost/beast/http.hpp"
#include "fuzz/fuzz_check.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/http/router.h"
#include "ingest-gateway/src/ingest_handler.h"
#include "ingest-gateway/src/verifier_client.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "tests/ingest-gateway/fake_verifier_client.h"

namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace gateway = portcullis::gateway;
namespace http = portcullis::gateway::http;
namespace v1 = portcullis::verifier::v1;

absl::string_view ToAbsl(beast::string_view s) { return absl::string_view(s.data(), s.size()); }

// A SyncReadStream over the fuzz input, `chunk` bytes per read.
class InputStream {
 public:
  InputStream(absl::string_view data, size_t chunk) : data_(data), chunk_(chunk) {}

  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
    if (data_.empty()) {
      ec = boost::asio::error::eof;
      return 0;
    }
    ec = {};
    const size_t n = boost::asio::buffer_copy(
        buffers, boost::asio::buffer(data_.data(), std::min(chunk_, data_.size())));
    data_.remove_prefix(n);
    return n;
  }
  template <class MutableBuffers>
  size_t read_some(const MutableBuffers& buffers) {
    beast::error_code ec;
    const size_t n = read_some(buffers, ec);
    if (ec) {
      throw beast::system_error(ec);
    }
    return n;
  }

 private:
  absl::string_view data_;
  const size_t chunk_;
};

// A healthy verifier: accepts every submission and delivery, knows every mention id. The gateway
// tests' fake, so that it follows the VerifierClient interface.
void MakeHealthy(gateway::testing::FakeVerifierClient& verifier) {
  v1::SubmitMentionResponse submit;
  submit.set_decision(v1::DECISION_ACCEPTED);
  submit.set_mention_id("0f0e0d0c-0b0a-4908-8706-050403020100");
  submit.set_state(v1::MENTION_STATE_PENDING);
  verifier.submit_result = submit;
  v1::GetMentionResponse get;
  get.mutable_mention()->set_mention_id("0f0e0d0c-0b0a-4908-8706-050403020100");
  get.mutable_mention()->set_source("https://alice.example/<reply>?a=1&b=\"2\"");
  get.mutable_mention()->set_target("https://bob.example/post");
  get.mutable_mention()->set_state(v1::MENTION_STATE_PENDING);
  verifier.get_result = get;
  v1::EvaluateIngestResponse evaluate;
  evaluate.set_decision(v1::INGEST_DECISION_ACCEPTED);
  evaluate.set_item_id("item-1");
  verifier.evaluate_result = evaluate;
}

struct Gateway {
  gateway::testing::FakeVerifierClient verifier;
  gateway::WebmentionHandlers handlers{verifier, 5};
  gateway::IngestHandler ingest{verifier, {.retry_after = [] { return 5; }}};
  http::Router router;
  http::HttpServerOptions options;

  Gateway() {
    MakeHealthy(verifier);
    router.Add("POST", gateway::kWebmentionPath,
               [this](const http::HttpRequest& request, http::Respond respond) {
                 handlers.Submit(request, std::move(respond));
               });
    router.Add("GET", gateway::kStatusRoute,
               [this](const http::HttpRequest& request, http::Respond respond) {
                 handlers.Status(request, std::move(respond));
               });
    router.Add("POST", gateway::kIngestPath,
               [this](const http::HttpRequest& request, http::Respond respond) {
                 ingest.Handle(request, std::move(respond));
               });
    router.Add("GET", "/healthz", [](const http::HttpRequest&, http::Respond respond) {
      respond(http::HttpResponse{200, {}, "ok\n"});
    });
    // As Gateway::Listen sets them (the defaults of GatewayConfig).
    options.body_limit_for_path = [](absl::string_view path) -> uint64_t {
      if (path == gateway::kIngestPath) {
        return gateway::kMaxIngestBodyBytes;
      }
      return path == gateway::kWebmentionPath ? gateway::kWebmentionMaxBodyBytes : 0;
    };
  }
};

void CheckResponse(const http::HttpResponse& response) {
  FUZZ_CHECK(response.status >= 200 && response.status < 500, absl::StrCat(response.status));
  for (const auto& [name, value] : response.headers.fields()) {
    FUZZ_CHECK(name.find_first_of("\r\n:") == std::string::npos, name);
    FUZZ_CHECK(value.find_first_of("\r\n") == std::string::npos, value);
  }
}

// One request, as Session reads it; false when the connection would close afterwards.
bool ServeOne(Gateway& gw, InputStream& stream, beast::flat_buffer& buffer) {
  const http::HttpServerOptions& options = gw.options;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(options.max_header_bytes);
  parser.body_limit(options.max_body_bytes);
  beast::error_code ec;
  bhttp::read_header(stream, buffer, parser, ec);
  auto on_error = [](beast::error_code error) {
    // OnReadError: body_limit → 413, header_limit → 431, other HTTP grammar errors → 400,
    // anything else closes. Either way the connection ends.
    (void)error;
    return false;
  };
  if (ec) {
    return on_error(ec);
  }
  const auto& header = parser.get();
  uint64_t limit = options.max_body_bytes;
  const absl::string_view header_target = ToAbsl(header.target());
  const uint64_t path_limit =
      options.body_limit_for_path(header_target.substr(0, header_target.find('?')));
  if (path_limit > 0) {
    limit = std::min(limit, path_limit);
  }
  if (parser.content_length() && *parser.content_length() > limit) {
    return on_error(bhttp::error::body_limit);
  }
  parser.body_limit(limit);
  if (!parser.is_done()) {
    bhttp::read(stream, buffer, parser, ec);
    if (ec) {
      return on_error(ec);
    }
  }
  FUZZ_CHECK(parser.get().body().size() <= limit, absl::StrCat(parser.get().body().size()));

  auto message = parser.release();
  const absl::string_view target = ToAbsl(message.target());
  if (target.empty() || target.front() != '/') {
    return false;  // 400, connection closed.
  }
  http::HttpRequest request;
  request.method = std::string(ToAbsl(message.method_string()));
  const size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != absl::string_view::npos) {
    request.query = std::string(target.substr(question + 1));
  }
  for (const auto& field : message) {
    request.headers.Add(ToAbsl(field.name_string()), ToAbsl(field.value()));
  }
  request.body = std::move(message.body());
  request.client_address = "192.0.2.1:40000";
  request.request_id = "fuzz";
  int responses = 0;
  gw.router.Handle(std::move(request), [&responses](http::HttpResponse response) {
    ++responses;
    CheckResponse(response);
  });
  FUZZ_CHECK(responses == 1, absl::StrCat(responses, " responses"));
  gw.verifier.submits.clear();
  gw.verifier.gets.clear();
  gw.verifier.evaluations.clear();
  return message.keep_alive();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Gateway* gw = new Gateway();
  if (size == 0) {
    return 0;
  }
  const size_t chunk = 1 + (data[0] % 64 == 0 ? 4096 : data[0] % 64);
  InputStream stream(absl::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), chunk);
  beast::flat_buffer buffer;
  for (int i = 0; i < 16 && ServeOne(*gw, stream, buffer); ++i) {
  }
  return 0;
}
