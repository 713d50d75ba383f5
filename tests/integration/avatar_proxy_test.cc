// The avatar proxy end to end (issue 17): the real binaries and CLI, author photos served by a
// loopback origin that counts requests, mentions recorded VERIFIED through the real job store
// (the verifier runs without workers), and GET /avatar/<hash> and the jf2 feeds over real HTTP.
#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crypto/sha256.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/support/child_process.h"
#include "tools/portcullis/src/page_origin.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_job_store.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

constexpr char kBaseUrl[] = "https://mentions.example";
constexpr char kBobTarget[] = "https://bob.example/post";
constexpr char kCarolTarget[] = "https://carol.example/post";

// A small PNG-looking body (the proxy checks the declared type, not the bytes).
const std::string kPng =
    std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) + std::string(300, '\x01');

cli::PageResponse Image(std::string body, std::string type = "image/png") {
  cli::PageResponse response;
  response.headers = {{"Content-Type", std::move(type)}};
  response.body = std::move(body);
  return response;
}

std::string HashOf(const std::string& url) { return crypto::ToHex(crypto::Sha256(url)); }

class AvatarProxyTest : public StackTest {
 protected:
  AvatarProxyTest() { start_stack_ = false; }

  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    absl::StatusOr<std::unique_ptr<cli::PageOrigin>> origin =
        cli::PageOrigin::Start("127.0.0.1", 0);
    ASSERT_TRUE(origin.ok()) << origin.status();
    origin_ = *std::move(origin);
    origin_->SetRoute("/alice.png", Image(kPng));
    origin_->SetRoute("/carol.png", Image(kPng));
    origin_->SetRoute("/unlisted.png", Image(kPng));
    origin_->SetRoute("/page.png", cli::PageResponse::Html("<!doctype html><p>not an image"));
    origin_->SetRoute("/huge.png", Image(std::string(600 * 1024, 'x')));
    ASSERT_TRUE(stack_
                    ->StartVerifier({"--egress_allow_cidrs=127.0.0.1/32",
                                     absl::StrCat("--fetch_allowed_ports=", origin_->port())})
                    .ok());
    ASSERT_TRUE(stack_->StartGateway({absl::StrCat("--public_base_url=", kBaseUrl)}).ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
    ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
    ASSERT_TRUE(stack_->ServeTarget("https://carol.example/*").ok());
  }

  void TearDown() override {
    StackTest::TearDown();
    origin_.reset();
  }

  std::string Photo(const std::string& path) const { return origin_->origin() + path; }

  // A VERIFIED reply to `target` whose author's photo is `photo`, recorded as a worker would;
  // sets `id` to the mention's id when given.
  void Verified(const std::string& source, const std::string& target, const std::string& photo,
                std::string* id = nullptr) {
    const testing::HttpResult accepted = stack_->PostWebmention(source, target);
    ASSERT_EQ(accepted.status, 202) << accepted.body << accepted.error;
    if (id != nullptr) {
      *id = std::string(json::parse(accepted.body).at("mention_id").as_string());
    }
    auto pool = verifier::store::PgConnectionPool::Create(
        {database_->connection_string(), 1, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    verifier::store::PgJobStore jobs(**pool);
    auto claimed = jobs.Claim("avatar-test", 100, absl::Seconds(30));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    ASSERT_EQ(claimed->size(), 1u);
    verifier::store::JobResult result;
    result.kind = verifier::store::JobResult::Kind::kVerified;
    result.content.type = "reply";
    result.content.author_name = "Alice";
    result.content.author_url = "https://alice.example/";
    result.content.author_photo = photo;
    result.content.content_text = "Nice";
    ASSERT_TRUE(jobs.Finish((*claimed)[0].job_id, "avatar-test", result).ok());
  }

  json::value Cli(const std::vector<std::string>& args) {
    const testing::CommandResult result =
        testing::RunCommand(PORTCULLIS_CLI_BINARY, stack_->CliArgs(args));
    EXPECT_EQ(result.exit_code, 0) << absl::StrJoin(args, " ") << ": " << result.output;
    json::error_code ec;
    json::value value = json::parse(result.output, ec);
    EXPECT_FALSE(ec) << result.output;
    return value;
  }

  testing::HttpResult Get(const std::string& path,
                          const std::map<std::string, std::string>& headers = {}) {
    return testing::SendHttp(stack_->http_port(), "GET", path, "", "", absl::Seconds(10), headers);
  }

  // The photo of the only entry of a feed body.
  static std::string FeedPhoto(const std::string& body) {
    json::error_code ec;
    const json::value feed = json::parse(body, ec);
    if (ec || !feed.is_object() || feed.at("children").as_array().size() != 1) {
      ADD_FAILURE() << body;
      return "";
    }
    return std::string(feed.at("children").at(0).at("author").at("photo").as_string());
  }

  std::unique_ptr<cli::PageOrigin> origin_;
};

TEST_F(AvatarProxyTest, FeedsReferenceTheProxyOnlyForSitesThatTurnItOn) {
  std::string id;
  Verified("https://alice.example/1", kBobTarget, Photo("/alice.png"), &id);
  Verified("https://alice.example/2", kCarolTarget, Photo("/carol.png"));
  EXPECT_EQ(FeedPhoto(Get("/mentions?site=bob.example").body), Photo("/alice.png"))
      << "off by default: the remote URL";
  const auto status_photo = [&] {
    const testing::HttpResult status =
        Get(absl::StrCat("/webmention/status/", id), {{"Accept", "application/json"}});
    EXPECT_EQ(status.status, 200) << status.body;
    json::error_code ec;
    const json::value body = json::parse(status.body, ec);
    return ec ? std::string() : std::string(body.at("author").at("photo").as_string());
  };
  EXPECT_EQ(status_photo(), Photo("/alice.png"));

  // Moderation first, then the proxy alone: the policy stays as it was.
  json::value set = Cli({"site", "set", "bob.example", "--moderation=all"});
  EXPECT_EQ(set.at("site").at("moderation"), "MODERATION_ALL") << set;
  EXPECT_EQ(set.at("site").at("avatar_proxy"), false) << set;
  set = Cli({"site", "set", "bob.example", "--avatar-proxy=on"});
  EXPECT_EQ(set.at("site").at("moderation"), "MODERATION_ALL") << "left unchanged: " << set;
  EXPECT_EQ(set.at("site").at("avatar_proxy"), true) << set;
  set = Cli({"site", "set", "bob.example", "--moderation=off"});
  EXPECT_EQ(set.at("site").at("avatar_proxy"), true) << "left unchanged: " << set;
  const json::value sites = Cli({"site", "list"});
  EXPECT_NE(json::serialize(sites).find("\"avatar_proxy\":true"), std::string::npos) << sites;

  const std::string proxied = absl::StrCat(kBaseUrl, "/avatar/", HashOf(Photo("/alice.png")));
  EXPECT_EQ(FeedPhoto(Get("/mentions?site=bob.example").body), proxied);
  EXPECT_EQ(FeedPhoto(Get("/api/mentions.jf2?domain=bob.example").body), proxied);
  EXPECT_EQ(FeedPhoto(Get("/mentions?site=carol.example").body), Photo("/carol.png"))
      << "another site keeps the remote URL";
  EXPECT_EQ(status_photo(), absl::StrCat("/avatar/", HashOf(Photo("/alice.png"))))
      << "the status page points at the proxy too (relative: it is the gateway's own page)";
  EXPECT_EQ(origin_->requests("/alice.png"), 0) << "rendering a feed fetches nothing";

  Cli({"site", "set", "bob.example", "--avatar-proxy=off"});
  EXPECT_EQ(FeedPhoto(Get("/mentions?site=bob.example").body), Photo("/alice.png"));
}

TEST_F(AvatarProxyTest, ServesTheImageOnceFromTheOriginThenFromTheCache) {
  Verified("https://alice.example/1", kBobTarget, Photo("/alice.png"));
  Cli({"site", "set", "bob.example", "--avatar-proxy=on"});
  const std::string path = absl::StrCat("/avatar/", HashOf(Photo("/alice.png")));

  const testing::HttpResult first = Get(path);
  ASSERT_EQ(first.status, 200) << first.body << first.error;
  EXPECT_EQ(first.body, kPng);
  EXPECT_EQ(first.Header("content-type"), "image/png");
  EXPECT_EQ(first.Header("x-content-type-options"), "nosniff");
  EXPECT_NE(first.Header("content-security-policy").find("default-src 'none'"), std::string::npos);
  EXPECT_NE(first.Header("cache-control").find("max-age="), std::string::npos);
  EXPECT_EQ(origin_->requests("/alice.png"), 1);

  const testing::HttpResult second = Get(path);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.body, kPng);
  const testing::HttpResult not_modified = Get(path, {{"If-None-Match", first.Header("etag")}});
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_EQ(not_modified.body, "");
  EXPECT_EQ(origin_->requests("/alice.png"), 1) << "the second read comes from the cache";
}

TEST_F(AvatarProxyTest, AnUnknownHashIs404AndNothingIsFetched) {
  Verified("https://alice.example/1", kBobTarget, Photo("/alice.png"));
  Verified("https://alice.example/2", kCarolTarget, Photo("/carol.png"));
  Cli({"site", "set", "bob.example", "--avatar-proxy=on"});
  // First a positive signal: the proxied photo is served.
  ASSERT_EQ(Get(absl::StrCat("/avatar/", HashOf(Photo("/alice.png")))).status, 200);

  // A URL no mention has, though the origin would serve it.
  EXPECT_EQ(Get(absl::StrCat("/avatar/", HashOf(Photo("/unlisted.png")))).status, 404);
  // A real photo, of a site that did not turn the proxy on.
  EXPECT_EQ(Get(absl::StrCat("/avatar/", HashOf(Photo("/carol.png")))).status, 404);
  // Malformed.
  EXPECT_EQ(Get("/avatar/not-a-hash").status, 404);
  EXPECT_EQ(Get(absl::StrCat("/avatar/", std::string(64, 'F'))).status, 404);
  EXPECT_EQ(origin_->requests("/unlisted.png"), 0);
  EXPECT_EQ(origin_->requests("/carol.png"), 0);
}

// 502 (bad_gateway): the author's host answered, but not with an image the proxy serves.
TEST_F(AvatarProxyTest, ANonImageAndAnOversizedImageAreRefused) {
  Verified("https://alice.example/1", kBobTarget, Photo("/page.png"));
  Verified("https://alice.example/2", kBobTarget, Photo("/huge.png"));
  Cli({"site", "set", "bob.example", "--avatar-proxy=on"});

  const testing::HttpResult html = Get(absl::StrCat("/avatar/", HashOf(Photo("/page.png"))));
  EXPECT_EQ(html.status, 502) << html.body;
  EXPECT_NE(html.body.find("bad_gateway"), std::string::npos) << html.body;
  EXPECT_EQ(html.body.find("not an image"), std::string::npos) << "the page is never passed on";
  EXPECT_EQ(origin_->requests("/page.png"), 1);

  const testing::HttpResult huge = Get(absl::StrCat("/avatar/", HashOf(Photo("/huge.png"))));
  EXPECT_EQ(huge.status, 502) << huge.body;
  EXPECT_EQ(origin_->requests("/huge.png"), 1);
}

}  // namespace
}  // namespace portcullis::integration
