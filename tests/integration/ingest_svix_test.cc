// Issue 22, through the real binaries (gateway, verifier, CLI, PostgreSQL on loopback):
//  - deliveries signed by the npm `svix` library arrive as Svix sends them — svix-id,
//    svix-timestamp, svix-signature and no other provenance header — and are accepted; a
//    tampered one is dropped; one field under two names with different values is a 422;
//  - the gateway's /metrics tells a drop from a duplicate (both 200) by X-Ingest-Action, and
//    POST /webmention's accepted, refused and rate-limited answers apart by decision.
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/integration/metrics_support.h"
#include "tests/support/child_process.h"
#include "tests/support/npm_oracle.h"

namespace portcullis::integration {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using Headers = std::map<std::string, std::string>;

constexpr char kPublisher[] = "feeds.example";
constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

std::string SyntheticItem(const std::string& id) {
  return absl::StrCat(R"({"id":")", id, R"(","content":"A lighthouse at dusk.","is_synthetic":true})");
}

class IngestSvixTest : public StackTest {
 protected:
  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("ingest-svix-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    Cli({"publisher", "add", kPublisher});
    Cli({"publisher", "key-add", kPublisher, kSecret});
  }
  void TearDown() override {
    StackTest::TearDown();
    if (!dir_.empty()) {
      fs::remove_all(dir_);
    }
  }

  void Cli(std::vector<std::string> args) {
    const std::string line = absl::StrJoin(args, " ");
    const testing::CommandResult result =
        testing::RunCommand(PORTCULLIS_CLI_BINARY, stack_->CliArgs(std::move(args)));
    EXPECT_EQ(result.exit_code, 0) << line << ": " << result.output;
  }

  // The headers the svix library makes for `body` (signed now with kSecret as `msg_id`).
  Headers SvixSign(const testing::NpmOracle& svix, const std::string& msg_id,
                   const std::string& body) {
    const fs::path file = dir_ / absl::StrCat("body-", ++files_, ".json");
    std::ofstream(file, std::ios::binary) << body;
    const std::optional<std::string> printed =
        svix.Run(absl::StrCat("sign ", kSecret, " ", msg_id, " ", absl::ToUnixSeconds(absl::Now()),
                              " ", testing::ShellQuoted(file)));
    EXPECT_TRUE(printed.has_value()) << "the svix oracle failed";
    Headers headers;
    for (absl::string_view line : absl::StrSplit(printed.value_or(""), '\n', absl::SkipEmpty())) {
      const size_t colon = line.find(": ");
      if (colon != absl::string_view::npos) {
        headers[std::string(line.substr(0, colon))] = std::string(line.substr(colon + 2));
      }
    }
    return headers;
  }

  testing::HttpResult Post(const std::string& body, Headers headers) const {
    headers["X-Provenance-Source"] = kPublisher;
    return testing::SendHttp(stack_->http_port(), "POST", "/ingest", body, "application/json",
                             absl::Seconds(30), headers);
  }

  // "STATUS ACTION status-or-error reason", e.g. "202 accept accepted -".
  static std::string Outcome(const testing::HttpResult& result) {
    json::error_code ec;
    const json::value body = json::parse(result.body, ec);
    const auto member = [&](const char* name) -> std::string {
      if (ec || !body.is_object() || !body.as_object().contains(name)) {
        return "-";
      }
      const json::value& value = body.at(name);
      return value.is_string() ? std::string(value.as_string()) : json::serialize(value);
    };
    const std::string status = member("status");
    return absl::StrCat(result.status, " ", result.Header("x-ingest-action"), " ",
                        status == "-" ? member("error") : status, " ", member("reason"));
  }

  double Requests(std::initializer_list<absl::string_view> labels) const {
    const testing::HttpResult metrics = testing::SendHttp(stack_->admin_port(), "GET", "/metrics");
    EXPECT_EQ(metrics.status, 200);
    return SumSamples(metrics.body, "portcullis_gateway_http_requests_total", labels);
  }

  fs::path dir_;
  int files_ = 0;
};

TEST_F(IngestSvixTest, DeliveriesSignedBySvixAreAcceptedWithSvixHeadersOnly) {
  std::optional<testing::NpmOracle> svix;
  PORTCULLIS_INSTALL_NPM_ORACLE_OR_SKIP(svix, PORTCULLIS_SVIX_ORACLE_SOURCE_DIR,
                                        fs::path(PORTCULLIS_SVIX_ORACLE_WORK_DIR) / "svix",
                                        absl::Seconds(60), "the svix library");
  for (int i = 0; i < 3; ++i) {
    const std::string item = SyntheticItem(absl::StrCat("svix-", i));
    const Headers headers = SvixSign(*svix, absl::StrCat("msg_svix", i), item);
    ASSERT_EQ(headers.size(), 3u);
    ASSERT_TRUE(headers.count("svix-id") && headers.count("svix-timestamp") &&
                headers.count("svix-signature"));
    // A synthetic item is kept only with a valid signature: accept means it verified.
    const testing::HttpResult result = Post(item, headers);
    EXPECT_EQ(Outcome(result), "202 accept accepted -") << result.body;
  }

  // The same headers on other bytes: the signature does not verify.
  const std::string item = SyntheticItem("svix-tampered");
  Headers headers = SvixSign(*svix, "msg_tampered", item);
  EXPECT_EQ(Outcome(Post(SyntheticItem("svix-tampered-2"), headers)),
            "200 drop dropped invalid_provenance_signature");

  // One field, two names, two values: refused before the verifier.
  headers["webhook-id"] = "msg_other";
  const testing::HttpResult conflict = Post(item, headers);
  EXPECT_EQ(Outcome(conflict), "422  schema_violation -") << conflict.body;
  EXPECT_NE(conflict.body.find(R"("field":"svix-id")"), std::string::npos) << conflict.body;
  // The same value under both names is one field.
  headers["webhook-id"] = "msg_tampered";
  EXPECT_EQ(Outcome(Post(item, headers)), "202 accept accepted -");
}

TEST_F(IngestSvixTest, MetricsTellADropFromADuplicateAndEachWebmentionDecision) {
  // Two drops, one duplicate, one accept: the first two and the third all answer 200.
  EXPECT_EQ(Outcome(Post(SyntheticItem("unsigned-1"), {})),
            "200 drop dropped unverified_synthetic_content");
  EXPECT_EQ(Outcome(Post(SyntheticItem("unsigned-2"), {})),
            "200 drop dropped unverified_synthetic_content");
  const std::string plain = R"({"id":"plain-1","content":"Written by a person."})";
  EXPECT_EQ(Outcome(Post(plain, {})), "202 accept accepted -");
  EXPECT_EQ(Outcome(Post(plain, {})), "200 duplicate acknowledged_duplicate accepted");
  EXPECT_EQ(Post("{", {}).status, 400);

  EXPECT_EQ(Requests({R"(route="/ingest")", R"(action="drop")", R"(status="200")"}), 2);
  EXPECT_EQ(Requests({R"(route="/ingest")", R"(action="duplicate")", R"(status="200")"}), 1);
  EXPECT_EQ(Requests({R"(route="/ingest")", R"(action="accept")", R"(status="202")"}), 1);
  EXPECT_EQ(Requests({R"(route="/ingest")", R"(action="none")", R"(status="400")"}), 1);

  // POST /webmention: accepted, refused (a target nobody serves), and a form error.
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/post").ok());
  EXPECT_EQ(stack_->PostWebmention("https://alice.example/reply", "https://bob.example/post").status,
            202);
  EXPECT_EQ(stack_->PostWebmention("https://alice.example/reply", "https://carol.example/").status,
            400);
  EXPECT_EQ(testing::SendHttp(stack_->http_port(), "POST", "/webmention", "source=x",
                              "application/x-www-form-urlencoded")
                .status,
            400);
  EXPECT_EQ(Requests({R"(route="/webmention")", R"(decision="accepted")"}), 1);
  EXPECT_EQ(Requests({R"(route="/webmention")", R"(decision="refused_4xx")"}), 2);
  EXPECT_EQ(Requests({R"(route="/webmention")", R"(decision="rate_limited")"}), 0);
}

}  // namespace
}  // namespace portcullis::integration
