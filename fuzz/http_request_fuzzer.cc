// The gateway's HTTP request path on arbitrary bytes from a client, through the server's own
// code: the bytes go to http::RequestReader exactly as http_server.cc's Session feeds it (Beast's
// parser with the header limit, the body limit and the per-path caps of POST /webmention and
// POST /ingest, the mapping of parser errors to the server's refusals, the target check, the
// HttpRequest), every request is dispatched (http::Dispatch) to the real router with the real
// webmention and ingest handlers over a healthy fake verifier, and every refusal is the table's
// answer (ErrorAnswer).
// Pipelined requests are read one after the other while the connection stays keep-alive.
// The first input byte sets how many bytes each read returns (as TCP segments would).
// Invariants: every request gets exactly one response; a healthy verifier never yields a 5xx; no
// response header contains CR or LF (no response splitting); a refusal closes the connection.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/gateway.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/request_reader.h"
#include "ingest-gateway/src/http/router.h"
#include "ingest-gateway/src/ingest_handler.h"
#include "ingest-gateway/src/mentions_feed.h"
#include "ingest-gateway/src/verifier_client.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "tests/ingest-gateway/fake_verifier_client.h"

namespace {

namespace gateway = portcullis::gateway;
namespace http = portcullis::gateway::http;
namespace v1 = portcullis::verifier::v1;

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
  v1::ListMentionsResponse page;
  *page.add_mentions() = get.mention();
  page.set_next_page_token("next");
  verifier.list_result = page;
}

struct Gateway {
  gateway::testing::FakeVerifierClient verifier;
  gateway::WebmentionHandlers handlers{verifier, 5};
  gateway::IngestHandler ingest{verifier, {.retry_after = [] { return 5; }}};
  gateway::MentionsFeed mentions{verifier, 5};
  http::Router router;
  http::RequestLimits limits;

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
    router.Add("GET", gateway::kMentionsPath,
               [this](const http::HttpRequest& request, http::Respond respond) {
                 mentions.Handle(request, std::move(respond));
               });
    router.Add("GET", "/healthz", [](const http::HttpRequest&, http::Respond respond) {
      respond(http::HttpResponse{200, {}, "ok\n"});
    });
    // As Gateway::Listen sets them (the defaults of GatewayConfig).
    limits.body_limit_for_path = [](absl::string_view path) {
      return gateway::PublicBodyLimitForPath(path, gateway::kMaxIngestBodyBytes);
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
// `input` is consumed `chunk` bytes per read.
bool ServeOne(Gateway& gw, http::RequestReader& reader, absl::string_view& input, size_t chunk) {
  reader.Start();
  http::ReadStep step = reader.HasBufferedBytes() ? reader.Parse() : http::ReadStep::kNeedMore;
  while (step == http::ReadStep::kNeedMore || step == http::ReadStep::kSendContinue) {
    if (step == http::ReadStep::kSendContinue) {
      step = reader.Parse();
      continue;
    }
    if (input.empty()) {
      step = reader.ReceivedEnd();
      FUZZ_CHECK(step != http::ReadStep::kNeedMore, "no answer after the end of input");
      break;
    }
    const absl::string_view bytes = input.substr(0, chunk);
    input.remove_prefix(bytes.size());
    step = reader.Feed(bytes);
  }
  if (step == http::ReadStep::kRefuse) {
    const gateway::AnswerRow& row = gateway::RowFor(reader.refusal());
    FUZZ_CHECK(row.status >= 400 && row.status < 500, absl::StrCat(row.status));
    FUZZ_CHECK((row.headers & gateway::kClose) != 0, row.code);
    CheckResponse(gateway::ErrorAnswer(reader.refusal()));
    return false;
  }
  if (step != http::ReadStep::kRequest) {
    return false;  // Closed without an answer.
  }
  http::HttpRequest request = reader.TakeRequest();
  FUZZ_CHECK(request.body.size() <= gw.limits.max_body_bytes, absl::StrCat(request.body.size()));
  const uint64_t path_limit = gw.limits.body_limit_for_path(request.path);
  FUZZ_CHECK(path_limit == 0 || request.body.size() <= path_limit,
             absl::StrCat(request.path, " ", request.body.size()));
  FUZZ_CHECK(!request.path.empty() && request.path.front() == '/', request.path);
  FUZZ_CHECK(http::IsAcceptableRequestId(request.request_id), request.request_id);
  request.client_address = "192.0.2.1:40000";
  int responses = 0;
  const std::string request_id = request.request_id;
  http::Dispatch(gw.router.AsHandler(), std::move(request), request_id,
                 [&responses](http::HttpResponse response) {
                   ++responses;
                   CheckResponse(response);
                 });
  FUZZ_CHECK(responses == 1, absl::StrCat(responses, " responses"));
  gw.verifier.submits.clear();
  gw.verifier.gets.clear();
  gw.verifier.evaluations.clear();
  gw.verifier.lists.clear();
  gw.verifier.request_ids.clear();
  return reader.keep_alive();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Gateway* gw = new Gateway();
  if (size == 0) {
    return 0;
  }
  const size_t chunk = 1 + (data[0] % 64 == 0 ? 4096 : data[0] % 64);
  absl::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  http::RequestReader reader(gw->limits);
  for (int i = 0; i < 16 && ServeOne(*gw, reader, input, chunk); ++i) {
  }
  return 0;
}
