#include "ingest-gateway/src/http/request_reader.h"

#include <optional>
#include <stdexcept>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway::http {
namespace {

using ::testing::HasSubstr;

RequestLimits TestLimits() {
  return {.max_body_bytes = 1024,
          .max_header_bytes = 2048,
          .body_limit_for_path = [](absl::string_view path) -> uint64_t {
            return path == "/small" ? 8 : 0;
          }};
}

// Feeds `bytes` `chunk` at a time from Start() until the reader decides; then the end of input.
ReadStep ReadAll(RequestReader& reader, absl::string_view bytes, size_t chunk = 1 << 20) {
  reader.Start();
  ReadStep step = reader.HasBufferedBytes() ? reader.Parse() : ReadStep::kNeedMore;
  while (step == ReadStep::kNeedMore || step == ReadStep::kSendContinue) {
    if (step == ReadStep::kSendContinue) {
      step = reader.Parse();
      continue;
    }
    if (bytes.empty()) {
      return reader.ReceivedEnd();
    }
    const absl::string_view piece = bytes.substr(0, chunk);
    bytes.remove_prefix(piece.size());
    step = reader.Feed(piece);
  }
  if (step == ReadStep::kRequest) {
    EXPECT_TRUE(bytes.empty()) << "left over: " << bytes;
  }
  return step;
}

TEST(GatewayRequestReaderTest, ReadsARequestAsHandlersSeeIt) {
  RequestReader reader(TestLimits());
  ASSERT_EQ(ReadAll(reader,
                    "POST /webmention?a=1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc-1\r\n"
                    "Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"),
            ReadStep::kRequest);
  EXPECT_TRUE(reader.keep_alive());
  EXPECT_EQ(reader.version(), 11u);
  const HttpRequest request = reader.TakeRequest();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.path, "/webmention");
  EXPECT_EQ(request.query, "a=1");
  EXPECT_EQ(request.body, "hello");
  EXPECT_EQ(request.request_id, "abc-1");
  EXPECT_EQ(request.headers.Get("content-type"), "text/plain");
}

TEST(GatewayRequestReaderTest, OneByteAtATimeGivesTheSameRequest) {
  RequestReader reader(TestLimits());
  ASSERT_EQ(ReadAll(reader,
                    "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
                    1),
            ReadStep::kRequest);
  EXPECT_EQ(reader.TakeRequest().body, "abcde");
}

TEST(GatewayRequestReaderTest, PipelinedRequestsAreReadOneAfterTheOther) {
  RequestReader reader(TestLimits());
  reader.Start();
  ASSERT_EQ(reader.Feed("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n"
                        "Connection: close\r\n\r\n"),
            ReadStep::kRequest);
  EXPECT_EQ(reader.TakeRequest().path, "/a");
  EXPECT_TRUE(reader.keep_alive());
  reader.Start();
  ASSERT_TRUE(reader.HasBufferedBytes());
  ASSERT_EQ(reader.Parse(), ReadStep::kRequest);
  EXPECT_EQ(reader.TakeRequest().path, "/b");
  EXPECT_FALSE(reader.keep_alive());
}

TEST(GatewayRequestReaderTest, AMissingOrUnacceptableRequestIdIsReplaced) {
  RequestReader reader(TestLimits());
  ASSERT_EQ(ReadAll(reader, "GET / HTTP/1.1\r\nHost: x\r\nX-Request-Id: has space\r\n\r\n"),
            ReadStep::kRequest);
  const std::string replaced = reader.TakeRequest().request_id;
  EXPECT_NE(replaced, "has space");
  EXPECT_TRUE(IsAcceptableRequestId(replaced));
  ASSERT_EQ(ReadAll(reader, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), ReadStep::kRequest);
  EXPECT_TRUE(IsAcceptableRequestId(reader.TakeRequest().request_id));
}

// The connection closes after a refusal, so each case reads on a new connection.
std::optional<Answer> RefusalOf(absl::string_view bytes) {
  RequestReader reader(TestLimits());
  const ReadStep step = ReadAll(reader, bytes);
  if (step != ReadStep::kRefuse) {
    return std::nullopt;
  }
  return reader.refusal();
}

TEST(GatewayRequestReaderTest, BodiesOverTheCapsAre413) {
  EXPECT_EQ(RefusalOf("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n"),
            Answer::kBodyTooLarge);
  // The per-path cap, declared and chunked.
  EXPECT_EQ(RefusalOf("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n"),
            Answer::kBodyTooLarge);
  EXPECT_EQ(RefusalOf("POST /small?q HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                      "\r\n9\r\n123456789\r\n0\r\n\r\n"),
            Answer::kBodyTooLarge);
  RequestReader reader(TestLimits());
  EXPECT_EQ(ReadAll(reader, "POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n12345678"),
            ReadStep::kRequest);
}

TEST(GatewayRequestReaderTest, AHeaderOverItsCapIs431) {
  RequestReader reader(TestLimits());
  EXPECT_EQ(ReadAll(reader,
                    absl::StrCat("GET / HTTP/1.1\r\nHost: x\r\nX-Big: ", std::string(4000, 'a'),
                                 "\r\n\r\n"),
                    100),
            ReadStep::kRefuse);
  EXPECT_EQ(reader.refusal(), Answer::kHeadersTooLarge);
  EXPECT_TRUE(IsAcceptableRequestId(reader.request_id()));
}

TEST(GatewayRequestReaderTest, BadHttpAndNonPathTargetsAre400) {
  EXPECT_EQ(RefusalOf("NOT HTTP AT ALL\r\n\r\n"), Answer::kBadHttp);
  EXPECT_EQ(RefusalOf("GET http://example.com/ HTTP/1.1\r\nHost: x\r\n\r\n"), Answer::kBadTarget);
  for (Answer answer : {Answer::kBadHttp, Answer::kBadTarget}) {
    const HttpResponse response = ErrorAnswer(answer);
    EXPECT_EQ(response.status, 400);
    EXPECT_THAT(response.body, HasSubstr(R"("error":"bad_request")"));
  }
}

TEST(GatewayRequestReaderTest, ExpectContinueIsAskedForBeforeTheBody) {
  RequestReader reader(TestLimits());
  reader.Start();
  EXPECT_EQ(reader.Feed("POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                        "Content-Length: 2\r\n\r\n"),
            ReadStep::kSendContinue);
  EXPECT_EQ(reader.Parse(), ReadStep::kNeedMore);
  EXPECT_EQ(reader.Feed("ok"), ReadStep::kRequest);
  EXPECT_EQ(reader.TakeRequest().body, "ok");
}

TEST(GatewayRequestReaderTest, APeerThatGoesAwayIsClosedWithoutAnAnswer) {
  RequestReader reader(TestLimits());
  EXPECT_EQ(ReadAll(reader, ""), ReadStep::kClose);
  EXPECT_EQ(ReadAll(reader, "GET / HTTP/1.1\r\nHo"), ReadStep::kClose);
  EXPECT_EQ(ReadAll(reader, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nabc"),
            ReadStep::kClose);
}

TEST(GatewayRequestReaderTest, DispatchAnswersAThrowingHandler500) {
  std::optional<HttpResponse> got;
  Dispatch([](HttpRequest, Respond) { throw std::runtime_error("boom"); }, HttpRequest(), "r1",
           [&](HttpResponse response) { got = std::move(response); });
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 500);
  EXPECT_THAT(got->body, HasSubstr(R"("error":"internal_error")"));
  EXPECT_THAT(got->body, ::testing::Not(HasSubstr("boom")));
}

}  // namespace
}  // namespace portcullis::gateway::http
