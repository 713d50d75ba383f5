#include "ingest-gateway/src/http/http_server.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ingest-gateway/http/test_http_client.h"

namespace portcullis::gateway::http {
namespace {

using ::portcullis::gateway::testing::RequestText;
using ::portcullis::gateway::testing::TestConnection;
using ::portcullis::gateway::testing::TestResponse;
using ::testing::HasSubstr;

HttpServerOptions TestOptions() {
  HttpServerOptions options;
  options.name = "test";
  options.listen = config::HostPort{"127.0.0.1", 0};
  options.io_threads = 2;
  options.max_connections = 16;
  options.max_body_bytes = 1024;
  options.max_header_bytes = 2048;
  options.read_timeout = absl::Seconds(5);
  options.idle_timeout = absl::Seconds(5);
  options.write_timeout = absl::Seconds(5);
  return options;
}

// Echoes what it was given, so tests can see the request as handlers see it.
void Echo(HttpRequest request, Respond respond) {
  HttpResponse response;
  response.headers.Set("Content-Type", "text/plain");
  response.body = absl::StrCat(request.method, " ", request.path, " ?", request.query, " [",
                               request.body, "] id=", request.request_id);
  respond(std::move(response));
}

std::unique_ptr<HttpServer> StartServer(HttpServerOptions options, Handler handler = Echo) {
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Create(std::move(options), std::move(handler));
  EXPECT_TRUE(server.ok()) << server.status();
  (*server)->Start();
  return *std::move(server);
}

// Waits (bounded) until `predicate` holds; for states that change on server threads.
template <typename Predicate>
bool Eventually(Predicate predicate, absl::Duration limit = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + limit;
  while (absl::Now() < deadline) {
    if (predicate()) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return predicate();
}

// Keeps the Respond of the request it is given instead of answering, so that a test answers
// later, from its own thread, or never.
class HeldAnswer {
 public:
  void Hold(Respond respond) {
    std::lock_guard<std::mutex> lock(mu_);
    respond_ = std::move(respond);
    held_.Notify();
  }

  // Waits (bounded) until a request is held.
  bool WaitForRequest() { return held_.WaitForNotificationWithTimeout(absl::Seconds(5)); }

  Respond respond() {
    std::lock_guard<std::mutex> lock(mu_);
    return respond_;
  }

 private:
  std::mutex mu_;
  Respond respond_;
  absl::Notification held_;
};

TEST(GatewayHttpServerTest, BindsPortZeroAndReportsTheBoundPort) {
  auto server = StartServer(TestOptions());
  EXPECT_NE(server->port(), 0);
  EXPECT_EQ(server->address(), absl::StrCat("127.0.0.1:", server->port()));
}

TEST(GatewayHttpServerTest, AnswersARequest) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  std::optional<TestResponse> response = client.Request("POST", "/echo?x=1", "hello");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(response->body, HasSubstr("POST /echo ?x=1 [hello]"));
  const std::string id = response->Header("x-request-id");
  EXPECT_EQ(id.size(), 32u);
  EXPECT_THAT(response->body, HasSubstr(absl::StrCat("id=", id)));
}

TEST(GatewayHttpServerTest, EchoesASaneIncomingRequestIdAndReplacesOthers) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  auto sane = client.Request("GET", "/", "", "X-Request-Id: abc-123_x.y\r\n");
  ASSERT_TRUE(sane.has_value());
  EXPECT_EQ(sane->Header("x-request-id"), "abc-123_x.y");
  auto insane = client.Request("GET", "/", "", "X-Request-Id: <script>\r\n");
  ASSERT_TRUE(insane.has_value());
  EXPECT_NE(insane->Header("x-request-id"), "<script>");
  EXPECT_EQ(insane->Header("x-request-id").size(), 32u);
  auto too_long =
      client.Request("GET", "/", "", absl::StrCat("X-Request-Id: ", std::string(65, 'a'), "\r\n"));
  ASSERT_TRUE(too_long.has_value());
  EXPECT_EQ(too_long->Header("x-request-id").size(), 32u);
}

TEST(GatewayHttpServerTest, KeepsConnectionsAlive) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  for (int i = 0; i < 3; ++i) {
    auto response = client.Request("GET", absl::StrCat("/n", i));
    ASSERT_TRUE(response.has_value()) << i;
    EXPECT_TRUE(response->keep_alive);
    EXPECT_THAT(response->body, HasSubstr(absl::StrCat("/n", i)));
  }
  EXPECT_EQ(server->open_connections(), 1u);
}

TEST(GatewayHttpServerTest, HonoursConnectionClose) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  auto response = client.Request("GET", "/", "", "Connection: close\r\n");
  ASSERT_TRUE(response.has_value());
  EXPECT_FALSE(response->keep_alive);
  EXPECT_TRUE(client.WaitForClose());
}

TEST(GatewayHttpServerTest, RespondsAsynchronouslyFromAnotherThread) {
  std::vector<std::thread> workers;
  std::mutex mu;
  auto server = StartServer(TestOptions(), [&](HttpRequest, Respond respond) {
    std::lock_guard<std::mutex> lock(mu);
    workers.emplace_back([respond] {
      HttpResponse response;
      response.status = 202;
      response.body = "later";
      respond(response);
    });
  });
  TestConnection client(server->port());
  auto response = client.Request("GET", "/");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 202);
  EXPECT_EQ(response->body, "later");
  std::lock_guard<std::mutex> lock(mu);
  for (std::thread& worker : workers) {
    worker.join();
  }
}

TEST(GatewayHttpServerTest, OnlyTheFirstAnswerToARequestIsSent) {
  auto server = StartServer(TestOptions(), [](HttpRequest request, Respond respond) {
    HttpResponse first;
    first.body = "first to " + request.path;
    HttpResponse second;
    second.body = "second to " + request.path;
    const Respond copy = respond;
    respond(std::move(first));
    copy(std::move(second));
  });
  TestConnection client(server->port());
  for (const std::string path : {"/a", "/b"}) {
    auto response = client.Request("GET", path);
    ASSERT_TRUE(response.has_value()) << path;
    EXPECT_EQ(response->body, "first to " + path);
  }
}

TEST(GatewayHttpServerTest, ALateAnswerToAnEarlierRequestDoesNotAnswerTheNextOne) {
  std::mutex mu;
  std::vector<Respond> responds;
  auto server = StartServer(TestOptions(), [&](HttpRequest request, Respond respond) {
    std::lock_guard<std::mutex> lock(mu);
    responds.push_back(respond);
    if (request.path == "/first") {
      HttpResponse response;
      response.body = "first";
      respond(std::move(response));
    }
  });
  TestConnection client(server->port());
  auto first = client.Request("GET", "/first");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->body, "first");
  ASSERT_TRUE(client.Send(RequestText("GET", "/second")));
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard<std::mutex> lock(mu);
    return responds.size() == 2;
  }));
  std::lock_guard<std::mutex> lock(mu);
  HttpResponse stale;
  stale.body = "a second answer to /first";
  responds[0](std::move(stale));
  HttpResponse own;
  own.body = "second";
  responds[1](std::move(own));
  auto second = client.ReadResponse();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->body, "second");
}

TEST(GatewayHttpServerTest, OversizedBodyIs413ThenClosed) {
  HttpServerOptions options = TestOptions();
  std::atomic<int> last_protocol_error{0};
  options.on_protocol_error = [&](int status) { last_protocol_error = status; };
  auto server = StartServer(options);
  TestConnection client(server->port());
  auto response = client.Request("POST", "/", std::string(5000, 'x'));
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(response->Header("content-type"), "application/json");
  EXPECT_THAT(response->body, HasSubstr(R"("error":"payload_too_large")"));
  EXPECT_FALSE(response->Header("x-request-id").empty());
  EXPECT_FALSE(response->keep_alive);
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(last_protocol_error.load(), 413);
}

TEST(GatewayHttpServerTest, OversizedChunkedBodyIs413) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  std::string request = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 4; ++i) {
    absl::StrAppend(&request, "200\r\n", std::string(512, 'x'), "\r\n");
  }
  absl::StrAppend(&request, "0\r\n\r\n");
  ASSERT_TRUE(client.Send(request));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 413);
}

TEST(GatewayHttpServerTest, PerPathBodyLimitIsSmaller) {
  HttpServerOptions options = TestOptions();
  options.body_limit_for_path = [](absl::string_view path) -> uint64_t {
    return path == "/small" ? 100 : 0;
  };
  auto server = StartServer(options);
  TestConnection small(server->port());
  auto refused = small.Request("POST", "/small?q=1", std::string(200, 'x'));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 413);
  TestConnection other(server->port());
  auto accepted = other.Request("POST", "/other", std::string(200, 'x'));
  ASSERT_TRUE(accepted.has_value());
  EXPECT_EQ(accepted->status, 200);
}

TEST(GatewayHttpServerTest, OversizedHeaderIs431ThenClosed) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  auto response =
      client.Request("GET", "/", "", absl::StrCat("X-Big: ", std::string(4000, 'a'), "\r\n"));
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 431);
  EXPECT_THAT(response->body, HasSubstr(R"("error":"headers_too_large")"));
  EXPECT_TRUE(client.WaitForClose());
}

TEST(GatewayHttpServerTest, MalformedRequestIs400ThenClosed) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  ASSERT_TRUE(client.Send("THIS IS NOT HTTP\r\n\r\n"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 400);
  EXPECT_THAT(response->body, HasSubstr(R"("error":"bad_request")"));
  EXPECT_TRUE(client.WaitForClose());
}

TEST(GatewayHttpServerTest, AbsoluteFormTargetIs400) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  auto response = client.Request("GET", "http://example.com/");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 400);
}

TEST(GatewayHttpServerTest, AnswersExpectContinue) {
  auto server = StartServer(TestOptions());
  TestConnection client(server->port());
  ASSERT_TRUE(client.Send(
      "POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_THAT(client.ReadSome(64), HasSubstr("100 Continue"));
  ASSERT_TRUE(client.Send("hello"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  EXPECT_THAT(response->body, HasSubstr("[hello]"));
}

TEST(GatewayHttpServerTest, SlowLorisIsDisconnectedAfterTheReadTimeout) {
  HttpServerOptions options = TestOptions();
  options.read_timeout = absl::Milliseconds(200);
  auto server = StartServer(options);
  TestConnection client(server->port(), absl::Seconds(3));
  const absl::Time start = absl::Now();
  ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "));
  EXPECT_TRUE(client.WaitForClose());
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_GE(elapsed, absl::Milliseconds(150));
  EXPECT_LT(elapsed, absl::Seconds(2));
  EXPECT_TRUE(Eventually([&] { return server->open_connections() == 0; }));
}

TEST(GatewayHttpServerTest, SilentConnectionIsDisconnectedAfterTheReadTimeout) {
  HttpServerOptions options = TestOptions();
  options.read_timeout = absl::Milliseconds(200);
  auto server = StartServer(options);
  TestConnection client(server->port(), absl::Seconds(3));
  EXPECT_TRUE(client.WaitForClose());
}

TEST(GatewayHttpServerTest, IdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  HttpServerOptions options = TestOptions();
  options.idle_timeout = absl::Milliseconds(200);
  auto server = StartServer(options);
  TestConnection client(server->port(), absl::Seconds(3));
  auto response = client.Request("GET", "/");
  ASSERT_TRUE(response.has_value());
  EXPECT_TRUE(response->keep_alive);
  const absl::Time start = absl::Now();
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

TEST(GatewayHttpServerTest, ConnectionsOverTheLimitGet503AndAreClosed) {
  HttpServerOptions options = TestOptions();
  options.max_connections = 2;
  options.retry_after_seconds = 7;
  std::atomic<int> rejected{0};
  options.on_connection_rejected = [&] { ++rejected; };
  auto server = StartServer(options);

  TestConnection first(server->port());
  TestConnection second(server->port());
  ASSERT_TRUE(first.Request("GET", "/").has_value());
  ASSERT_TRUE(second.Request("GET", "/").has_value());
  ASSERT_EQ(server->open_connections(), 2u);

  TestConnection third(server->port());
  ASSERT_TRUE(third.connected());
  auto response = third.ReadResponse();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->Header("retry-after"), "7");
  EXPECT_THAT(response->body, HasSubstr(R"("error":"unavailable")"));
  EXPECT_FALSE(response->Header("x-request-id").empty());
  EXPECT_TRUE(third.WaitForClose());
  EXPECT_EQ(rejected.load(), 1);

  // Room again once a connection goes.
  ASSERT_TRUE(first.Request("GET", "/", "", "Connection: close\r\n").has_value());
  ASSERT_TRUE(first.WaitForClose());
  first.Close();
  ASSERT_TRUE(Eventually([&] { return server->open_connections() == 1; }));
  TestConnection fourth(server->port());
  auto accepted = fourth.Request("GET", "/");
  ASSERT_TRUE(accepted.has_value());
  EXPECT_EQ(accepted->status, 200);
}

TEST(GatewayHttpServerTest, ConnectionsOverThePerAddressLimitGet429AndAreClosed) {
  HttpServerOptions options = TestOptions();
  options.max_connections_per_address = 3;
  options.retry_after_seconds = 9;
  std::atomic<int> refused{0};
  std::atomic<int> refused_total{0};
  options.on_connection_rejected_per_address = [&] { ++refused; };
  options.on_connection_rejected = [&] { ++refused_total; };
  auto server = StartServer(options);

  std::vector<std::unique_ptr<TestConnection>> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(std::make_unique<TestConnection>(server->port()));
    ASSERT_TRUE(open.back()->Request("GET", "/").has_value());
  }
  TestConnection fourth(server->port());
  const absl::Time sent = absl::Now();
  auto response = fourth.ReadResponse();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 429);
  EXPECT_EQ(response->Header("retry-after"), "9");
  EXPECT_EQ(response->Header("connection"), "close");
  EXPECT_THAT(response->body, HasSubstr(R"("error":"too_many_connections")"));
  EXPECT_TRUE(fourth.WaitForClose());
  EXPECT_LT(absl::Now() - sent, absl::Seconds(2)) << "answered and closed without waiting";
  EXPECT_EQ(refused.load(), 1);
  EXPECT_EQ(refused_total.load(), 0);

  // Another address is served.
  TestConnection other(server->port(), absl::Seconds(5), "127.0.0.2");
  ASSERT_TRUE(other.connected());
  auto served = other.Request("GET", "/");
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(server->open_connections(), 4u);

  // One of the three closes: the address is served again.
  open.front()->Close();
  open.erase(open.begin());
  ASSERT_TRUE(Eventually([&] { return server->open_connections() == 3; }));
  TestConnection again(server->port());
  auto accepted = again.Request("GET", "/");
  ASSERT_TRUE(accepted.has_value());
  EXPECT_EQ(accepted->status, 200);
}

TEST(GatewayHttpServerTest, ConnectionsEndedByTimeoutsGiveTheirPerAddressSlotBack) {
  HttpServerOptions options = TestOptions();
  options.max_connections_per_address = 2;
  options.read_timeout = absl::Milliseconds(300);
  options.idle_timeout = absl::Milliseconds(300);
  auto server = StartServer(options);
  // One silent (cut at the read timeout), one idle after a request (cut at the idle timeout).
  TestConnection silent(server->port());
  TestConnection idle(server->port());
  ASSERT_TRUE(idle.Request("GET", "/").has_value());
  ASSERT_TRUE(Eventually([&] { return server->open_connections() == 0; }));
  TestConnection first(server->port());
  TestConnection second(server->port());
  EXPECT_EQ(first.Request("GET", "/")->status, 200);
  EXPECT_EQ(second.Request("GET", "/")->status, 200);
}

TEST(GatewayHttpServerTest, ExemptPeersAreNotCappedPerAddress) {
  HttpServerOptions options = TestOptions();
  options.max_connections_per_address = 1;
  options.per_address_exempt = {*net::Cidr::Parse("127.0.0.1/32")};
  auto server = StartServer(options);
  TestConnection first(server->port());
  TestConnection second(server->port());
  EXPECT_EQ(first.Request("GET", "/")->status, 200);
  EXPECT_EQ(second.Request("GET", "/")->status, 200);
  // 127.0.0.2 is not exempt.
  TestConnection other(server->port(), absl::Seconds(5), "127.0.0.2");
  TestConnection other_again(server->port(), absl::Seconds(5), "127.0.0.2");
  EXPECT_EQ(other.Request("GET", "/")->status, 200);
  auto refused = other_again.ReadResponse();
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 429);
}

TEST(GatewayHttpServerTest, DrainFinishesInFlightRequestsAndRefusesNewConnections) {
  HeldAnswer slow_answer;
  auto server = StartServer(TestOptions(), [&](HttpRequest request, Respond respond) {
    if (request.path == "/slow") {
      slow_answer.Hold(std::move(respond));
      return;
    }
    Echo(std::move(request), std::move(respond));
  });
  const uint16_t port = server->port();

  TestConnection idle(port);
  ASSERT_TRUE(idle.Request("GET", "/").has_value());
  TestConnection slow(port);
  ASSERT_TRUE(slow.Send(RequestText("GET", "/slow")));
  ASSERT_TRUE(slow_answer.WaitForRequest());

  std::atomic<bool> drained{false};
  std::atomic<bool> drain_returned{false};
  std::thread drainer([&] {
    drained = server->Drain(absl::Now() + absl::Seconds(10));
    drain_returned = true;
  });

  // The idle keep-alive connection is closed at once; new connections are refused.
  EXPECT_TRUE(idle.WaitForClose());
  EXPECT_TRUE(Eventually([&] {
    TestConnection late(port, absl::Milliseconds(500));
    return !late.connected() || late.WaitForClose();
  }));
  EXPECT_FALSE(drain_returned.load());

  HttpResponse finished;
  finished.body = "finished";
  slow_answer.respond()(std::move(finished));
  auto response = slow.ReadResponse();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "finished");
  EXPECT_FALSE(response->keep_alive);
  EXPECT_TRUE(slow.WaitForClose());
  slow.Close();
  drainer.join();
  EXPECT_TRUE(drained.load());
}

TEST(GatewayHttpServerTest, DrainGivesUpAtTheDeadline) {
  HeldAnswer held;
  auto server = StartServer(TestOptions(), [&](HttpRequest, Respond respond) {
    held.Hold(std::move(respond));
  });
  TestConnection slow(server->port());
  ASSERT_TRUE(slow.Send(RequestText("GET", "/slow")));
  ASSERT_TRUE(held.WaitForRequest());
  EXPECT_FALSE(server->Drain(absl::Now() + absl::Milliseconds(100)));
  // Responding after the server stopped is harmless.
  held.respond()(HttpResponse{});
}

TEST(GatewayHttpServerTest, HandlerExceptionIs500) {
  auto server =
      StartServer(TestOptions(), [](HttpRequest, Respond) { throw std::runtime_error("boom"); });
  TestConnection client(server->port());
  auto response = client.Request("GET", "/");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 500);
  EXPECT_THAT(response->body, ::testing::Not(HasSubstr("boom")));
}

TEST(GatewayHttpServerTest, CreateFailsWhenThePortIsTaken) {
  auto first = StartServer(TestOptions());
  HttpServerOptions options = TestOptions();
  options.listen.port = first->port();
  EXPECT_FALSE(HttpServer::Create(options, Echo).ok());
}

// A gateway stopping under load: verifier answers arrive on gRPC's threads while the server is
// being destroyed, and such a thread may hold a connection last. Destroying the server must wait
// until that connection is gone with its socket and timers, not merely unregistered (caught by
// AddressSanitizer in CI: a connection's timer outlived the io_context it belonged to).
TEST(GatewayHttpServerTest, AnswersRacingTheServersDestructionAreHarmless) {
  constexpr int kRounds = 100;
  constexpr int kAnswersPerRound = 2000;
  for (int round = 0; round < kRounds; ++round) {
    HeldAnswer held;
    auto server = StartServer(TestOptions(), [&](HttpRequest, Respond respond) {
      held.Hold(std::move(respond));
    });
    TestConnection client(server->port());
    ASSERT_TRUE(client.Send(RequestText("GET", "/slow")));
    ASSERT_TRUE(held.WaitForRequest());
    const Respond answer = held.respond();
    std::atomic<bool> destroyed{false};
    std::atomic<int> answers{0};
    // Bounded, so that the server's last polls of its queue end.
    std::thread answering([&] {
      for (int i = 0; i < kAnswersPerRound && !destroyed.load(); ++i) {
        answer(HttpResponse{});
        answers.fetch_add(1);
      }
    });
    ASSERT_TRUE(Eventually([&] { return answers.load() > 0; }));
    server.reset();
    destroyed.store(true);
    answering.join();
    // The connection was answered or closed; either way it ends.
    EXPECT_TRUE(client.WaitForClose()) << "round " << round;
  }
}

}  // namespace
}  // namespace portcullis::gateway::http
