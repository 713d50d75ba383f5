#include "ingest-gateway/src/gateway.h"

#include <atomic>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ingest-gateway/fake_verifier_client.h"
#include "tests/ingest-gateway/http/test_http_client.h"
#include "tests/support/temp_path.h"

namespace portcullis::gateway {
namespace {

using ::portcullis::gateway::testing::TestConnection;
using ::testing::HasSubstr;

class SwitchableHealthChecker final : public HealthChecker {
 public:
  explicit SwitchableHealthChecker(std::atomic<bool>& serving) : serving_(serving) {}
  absl::Status Check(absl::Duration) override {
    return serving_.load() ? absl::OkStatus() : absl::UnavailableError("down");
  }

 private:
  std::atomic<bool>& serving_;
};

class GatewayTest : public ::testing::Test {
 protected:
  void SetUp() override { gateway_ = StartGateway({}, &verifier_); }

  // A started gateway with `overrides` over the fixture's flags, in front of a fake verifier
  // (`*verifier`) that accepts every webmention.
  std::unique_ptr<Gateway> StartGateway(const config::Texts& overrides,
                                        testing::FakeVerifierClient** verifier_out) {
    config::Texts flags;
    flags["verifier_token_file"] = portcullis::testing::PrivateTempPath("gateway-test-token");
    std::ofstream(flags["verifier_token_file"], std::ios::trunc) << "pct_" << std::string(64, 'a');
    flags["http_listen"] = "127.0.0.1:0";
    flags["admin_listen"] = "127.0.0.1:0";
    flags["readiness_interval"] = "1h";  // Tests poll by hand.
    flags["retry_after_seconds"] = "3";
    for (const auto& [name, value] : overrides) {
      flags[name] = value;
    }
    absl::StatusOr<GatewayConfig> config =
        GatewayConfig::FromFlags(flags, portcullis::config::NoEnvironment);
    EXPECT_TRUE(config.ok()) << config.status();
    auto verifier = std::make_unique<testing::FakeVerifierClient>();
    *verifier_out = verifier.get();
    verifier::v1::SubmitMentionResponse accepted;
    accepted.set_decision(verifier::v1::DECISION_ACCEPTED);
    accepted.set_mention_id("0b6e3f5e-8a44-4a43-9a3c-2f1d9b7b0c11");
    accepted.set_state(verifier::v1::MENTION_STATE_PENDING);
    verifier->submit_result = accepted;
    if (!config.ok()) {
      return nullptr;
    }
    absl::StatusOr<std::unique_ptr<Gateway>> gateway = Gateway::Create(
        *config, std::move(verifier), std::make_unique<SwitchableHealthChecker>(serving_));
    EXPECT_TRUE(gateway.ok()) << gateway.status();
    if (!gateway.ok()) {
      return nullptr;
    }
    (*gateway)->Start();
    return *std::move(gateway);
  }

  std::atomic<bool> serving_{true};
  testing::FakeVerifierClient* verifier_ = nullptr;
  std::unique_ptr<Gateway> gateway_;
};

TEST_F(GatewayTest, ServesWebmentionsOnTheHttpPort) {
  TestConnection client(gateway_->http_port());
  auto response = client.Request("POST", "/webmention", "source=https://a/&target=https://b/",
                                 "Content-Type: application/x-www-form-urlencoded\r\n");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 202);
  EXPECT_EQ(response->Header("location"),
            "/webmention/status/0b6e3f5e-8a44-4a43-9a3c-2f1d9b7b0c11");
  EXPECT_FALSE(response->Header("x-request-id").empty());

  auto wrong_method = client.Request("GET", "/webmention");
  ASSERT_TRUE(wrong_method.has_value());
  EXPECT_EQ(wrong_method->status, 405);

  // Probes on both listeners; metrics only on the admin listener.
  gateway_->readiness().PollOnce();
  auto readyz = client.Request("GET", "/readyz");
  ASSERT_TRUE(readyz.has_value());
  EXPECT_EQ(readyz->status, 200);
  auto healthz = client.Request("GET", "/healthz");
  ASSERT_TRUE(healthz.has_value());
  EXPECT_EQ(healthz->status, 200);
  auto metrics = client.Request("GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->status, 404);
}

TEST_F(GatewayTest, WebmentionBodyIsCappedBelowTheGlobalLimit) {
  TestConnection client(gateway_->http_port());
  auto response = client.Request("POST", "/webmention", std::string(70 * 1024, 'a'),
                                 "Content-Type: application/x-www-form-urlencoded\r\n");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 413);
}

TEST_F(GatewayTest, ServesIngestWithItsOwnBodyCap) {
  verifier::v1::EvaluateIngestResponse accepted;
  accepted.set_decision(verifier::v1::INGEST_DECISION_ACCEPTED);
  verifier_->evaluate_result = accepted;
  TestConnection client(gateway_->http_port());
  auto response = client.Request("POST", "/ingest", R"({"id":"a"})",
                                 "Content-Type: application/json\r\n"
                                 "X-Provenance-Source: feeds.example\r\n");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 202);
  EXPECT_EQ(response->Header("x-ingest-action"), "accept");
  // The ingest cap (1 MiB by default), not the 64 KiB of /webmention.
  TestConnection big_client(gateway_->http_port());
  auto big = big_client.Request(
      "POST", "/ingest", absl::StrCat(R"({"id":"a","content":")", std::string(100 * 1024, 'a'), "\"}"),
      "Content-Type: application/json\r\nX-Provenance-Source: feeds.example\r\n");
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->status, 202);
  TestConnection too_big_client(gateway_->http_port());
  auto too_big = too_big_client.Request(
      "POST", "/ingest", std::string(1024 * 1024 + 1, ' '),
      "Content-Type: application/json\r\nX-Provenance-Source: feeds.example\r\n");
  ASSERT_TRUE(too_big.has_value());
  EXPECT_EQ(too_big->status, 413);
}

// Issue 21: --ingest_duplicate_cache_ttl=0s sends every repeat of an accepted item to the
// verifier (bench/load measures the durable duplicate path that way); by default the gateway
// answers the repeat itself, the same way.
TEST_F(GatewayTest, IngestDuplicateCacheTtlZeroAsksTheVerifierForEveryRepeat) {
  for (const char* ttl : {"2s", "0s"}) {
    testing::FakeVerifierClient* verifier = nullptr;
    std::unique_ptr<Gateway> gateway =
        StartGateway({{"ingest_duplicate_cache_ttl", ttl}}, &verifier);
    ASSERT_NE(gateway, nullptr);
    verifier::v1::EvaluateIngestResponse accepted;
    accepted.set_decision(verifier::v1::INGEST_DECISION_ACCEPTED);
    accepted.set_item_id("a");
    verifier->evaluate_result = accepted;
    TestConnection client(gateway->http_port());
    const auto deliver = [&client] {
      return client.Request("POST", "/ingest", R"({"id":"a","content":"x"})",
                            "Content-Type: application/json\r\n"
                            "X-Provenance-Source: feeds.example\r\n");
    };
    auto first = deliver();
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->Header("x-ingest-action"), "accept") << ttl;
    verifier::v1::EvaluateIngestResponse duplicate = accepted;
    duplicate.set_decision(verifier::v1::INGEST_DECISION_DUPLICATE);
    duplicate.set_reason("accepted");
    verifier->evaluate_result = duplicate;
    auto repeat = deliver();
    ASSERT_TRUE(repeat.has_value());
    EXPECT_EQ(repeat->Header("x-ingest-action"), "duplicate") << ttl;
    EXPECT_EQ(verifier->evaluations.size(), std::string(ttl) == "0s" ? 2u : 1u) << ttl;
  }
}

TEST_F(GatewayTest, AdminPortServesProbesAndMetrics) {
  gateway_->readiness().PollOnce();
  TestConnection admin(gateway_->admin_port());
  auto healthz = admin.Request("GET", "/healthz");
  ASSERT_TRUE(healthz.has_value());
  EXPECT_EQ(healthz->status, 200);
  auto readyz = admin.Request("GET", "/readyz");
  ASSERT_TRUE(readyz.has_value());
  EXPECT_EQ(readyz->status, 200);

  TestConnection client(gateway_->http_port());
  ASSERT_TRUE(client.Request("GET", "/webmention/status/abc").has_value());
  auto metrics = admin.Request("GET", "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->Header("content-type"), HasSubstr("text/plain"));
  EXPECT_THAT(
      metrics->body,
      HasSubstr(
          R"(portcullis_gateway_http_requests_total{route="/webmention/status/{id}",status="503"} 1)"));
  EXPECT_THAT(metrics->body, HasSubstr("portcullis_gateway_ready 1"));

  serving_ = false;
  gateway_->readiness().PollOnce();
  auto not_ready = admin.Request("GET", "/readyz");
  ASSERT_TRUE(not_ready.has_value());
  EXPECT_EQ(not_ready->status, 503);
}

TEST_F(GatewayTest, ShutdownMakesReadyz503ThenDrains) {
  gateway_->readiness().PollOnce();
  TestConnection admin(gateway_->admin_port());
  // Ready first: /readyz answers 503 before the first check too, so the 503 below must follow a
  // 200 to say anything about the shutdown.
  auto ready = admin.Request("GET", "/readyz");
  ASSERT_TRUE(ready.has_value());
  ASSERT_EQ(ready->status, 200);
  gateway_->BeginShutdown();
  auto readyz = admin.Request("GET", "/readyz");
  ASSERT_TRUE(readyz.has_value());
  EXPECT_EQ(readyz->status, 503);
  // Still serving while the load balancer catches up.
  TestConnection client(gateway_->http_port());
  auto response = client.Request("POST", "/webmention", "source=a&target=b",
                                 "Content-Type: application/x-www-form-urlencoded\r\n");
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->status, 202);
  EXPECT_TRUE(gateway_->Drain(absl::Now() + absl::Seconds(5)));
  EXPECT_TRUE(client.WaitForClose());  // The idle keep-alive connection was closed.
  TestConnection late(gateway_->http_port(), absl::Milliseconds(500));
  EXPECT_TRUE(!late.connected() || late.WaitForClose());
}

// A call still in flight when the gateway is destroyed ends during the destruction (the gRPC
// client waits for it), and its answer goes through the route's metrics label and the server:
// both must still exist then (AddressSanitizer caught the use of freed memory here).
TEST_F(GatewayTest, ACallInFlightAtDestructionEndsQuietly) {
  testing::FakeVerifierClient* verifier = nullptr;
  std::unique_ptr<Gateway> gateway = StartGateway({}, &verifier);
  ASSERT_NE(gateway, nullptr);
  verifier->hold_submits = true;
  TestConnection client(gateway->http_port());
  ASSERT_TRUE(client.Send(testing::RequestText(
      "POST", "/webmention", "source=https://a/&target=https://b/",
      "Content-Type: application/x-www-form-urlencoded\r\n")));
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (verifier->held_submits() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_EQ(verifier->held_submits(), 1u);
  gateway.reset();
  // Unanswered: the server stopped before the verifier's answer; the connection is closed.
  EXPECT_TRUE(client.WaitForClose());
}

}  // namespace
}  // namespace portcullis::gateway
