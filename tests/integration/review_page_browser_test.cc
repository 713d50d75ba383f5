// The review page (issue 16) as a site owner uses it: Debian's headless Chromium, driven over
// the DevTools protocol by tests/integration/review_page_driver.mjs (Node's standard library
// only), against the real gateway's ADMIN listener and the real verifier. Logged in with a
// `review` token typed into the form, the reviewer sees the pending mentions, approves one (the
// public jf2 feed then has it), rejects another (it stays out), and a POST without the CSRF token
// changes nothing; the cookie is invisible to script and the page's policy blocks nothing.
// The screenshot is kept as a test artifact: in $PORTCULLIS_TEST_ARTIFACTS (else the test's temp
// directory) and, with PORTCULLIS_REVIEW_SCREENSHOT=<file.png>, there too (docs/ holds the
// README's). Skipped without chromium or node, failed under CI=true (scripts/test installs both).
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "grpcpp/client_context.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/integration/fixture.h"
#include "tests/support/child_process.h"
#include "tests/support/ci.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_job_store.h"

namespace portcullis::integration {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace v1 = verifier::v1;

// `override_variable` when set, else the first of `names` on PATH; empty when none.
std::string FindReviewTool(const char* override_variable, const std::vector<std::string>& names) {
  if (const char* chosen = std::getenv(override_variable); chosen != nullptr && *chosen) {
    return chosen;
  }
  const char* path = std::getenv("PATH");
  for (const std::string& name : names) {
    for (absl::string_view dir : absl::StrSplit(path == nullptr ? "" : path, ':')) {
      const fs::path candidate = fs::path(std::string(dir)) / name;
      if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) {
        return candidate.string();
      }
    }
  }
  return "";
}

std::vector<std::string> Strings(const json::value& array) {
  std::vector<std::string> values;
  for (const json::value& value : array.as_array()) {
    values.emplace_back(value.as_string());
  }
  return values;
}

class ReviewPageBrowserTest : public StackTest {
 protected:
  void SetUp() override {
    chromium_ = FindReviewTool("PORTCULLIS_CHROMIUM", {"chromium"});
    node_ = FindReviewTool("PORTCULLIS_NODE", {"node", "nodejs"});
    if (chromium_.empty() || node_.empty()) {
      if (testing::RunningInCi()) {
        FAIL() << "CI=true but no chromium or node (scripts/test installs chromium and nodejs)";
      }
      GTEST_SKIP() << "SKIPPED, needs chromium and node (Debian's packages; scripts/test "
                      "installs them)";
    }
    StackTest::SetUp();
    scratch_ = fs::temp_directory_path() / absl::StrCat("portcullis-review-", getpid());
    fs::create_directories(scratch_);
  }

  void TearDown() override {
    StackTest::TearDown();
    if (!scratch_.empty()) {
      fs::remove_all(scratch_);
    }
  }

  std::string Submit(const std::string& source) {
    const testing::HttpResult accepted =
        stack_->PostWebmention(source, "https://bob.example/post");
    EXPECT_EQ(accepted.status, 202) << accepted.body;
    return accepted.status == 202
               ? std::string(json::parse(accepted.body).at("mention_id").as_string())
               : "";
  }

  // Records every queued mention as a VERIFIED reply by `author`, as a worker would.
  void VerifyAll(const std::string& author) {
    auto pool = verifier::store::PgConnectionPool::Create(
        {database_->connection_string(), 1, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    verifier::store::PgJobStore jobs(**pool);
    auto claimed = jobs.Claim("review-page-test", 100, absl::Seconds(30));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    verifier::store::JobResult result;
    result.kind = verifier::store::JobResult::Kind::kVerified;
    result.content.type = "reply";
    result.content.author_name = author;
    result.content.author_url = "https://alice.example/";
    result.content.author_photo = "https://alice.example/photo.jpg";
    result.content.content_text = "Lovely post, thank you";
    result.content.content_html = "<p>Lovely <em>post</em>, thank you</p>";
    for (const verifier::store::JobRecord& job : *claimed) {
      ASSERT_TRUE(jobs.Finish(job.job_id, "review-page-test", result).ok());
    }
  }

  std::string chromium_;
  std::string node_;
  fs::path scratch_;
};

TEST_F(ReviewPageBrowserTest, ChromiumLogsInApprovesRejectsAndAPostWithoutCsrfChangesNothing) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  auto admin = v1::Verifier::NewStub(stack_->AdminChannel());
  {
    v1::SetSiteSettingsRequest settings;
    settings.set_domain("bob.example");
    settings.set_moderation(v1::MODERATION_ALL);
    v1::SetSiteSettingsResponse set;
    grpc::ClientContext context;
    const grpc::Status status = admin->SetSiteSettings(&context, settings, &set);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  const std::string approve = Submit("https://alice.example/replies/1");
  const std::string reject = Submit("https://alice.example/replies/2");
  const std::string untouched = Submit("https://alice.example/replies/3");
  VerifyAll("Alice Example");
  absl::StatusOr<std::string> token = stack_->CreateToken("bob-reviewer", {"review"}, {"bob.example"});
  ASSERT_TRUE(token.ok()) << token.status();

  const fs::path screenshot = scratch_ / "review-page.png";
  json::object config;
  config["chromium"] = chromium_;
  config["profile_dir"] = (scratch_ / "profile").string();
  config["review_url"] = absl::StrCat("http://127.0.0.1:", stack_->admin_port(),
                                      "/admin/review?site=bob.example");
  config["feed_url"] =
      absl::StrCat("http://127.0.0.1:", stack_->http_port(), "/mentions?site=bob.example");
  config["token"] = *token;
  config["approve_id"] = approve;
  config["reject_id"] = reject;
  config["csrf_id"] = untouched;
  config["screenshot"] = screenshot.string();
  config["no_sandbox"] = geteuid() == 0;  // Chromium refuses to run as root with its sandbox.
  const fs::path config_file = scratch_ / "config.json";
  std::ofstream(config_file) << json::serialize(config);

  auto driver = testing::ChildProcess::Start(
      node_, {PORTCULLIS_REVIEW_DRIVER, config_file.string()}, {},
      (scratch_ / "driver.log").string());
  ASSERT_TRUE(driver.ok()) << driver.status();
  const absl::StatusOr<int> exit_code = (*driver)->Wait(absl::Seconds(150));
  ASSERT_TRUE(exit_code.ok() && *exit_code == 0) << (*driver)->Log();
  // The driver's answer is its last line (Node prints nothing else on stdout).
  const std::string log = (*driver)->Log();
  const size_t start = log.rfind("\n{\"");
  const json::value result = json::parse(log.substr(start == std::string::npos ? 0 : start + 1));
  ASSERT_FALSE(result.as_object().contains("error")) << log;
  const json::value& steps = result.at("steps");

  // Logged out: the token form, and nothing of the queue.
  EXPECT_TRUE(steps.at("login_form").at("has_login").as_bool());
  EXPECT_TRUE(steps.at("login_form").at("mentions").as_array().empty());
  // Logged in: the three pending mentions, each form with its CSRF token (and the log-out one).
  std::vector<std::string> all = {approve, reject, untouched};
  std::sort(all.begin(), all.end());
  EXPECT_EQ(Strings(steps.at("queue").at("mentions")), all) << json::serialize(steps.at("queue"));
  EXPECT_EQ(steps.at("queue").at("csrf_fields").to_number<int>(), 4);
  EXPECT_NE(std::string(steps.at("queue").at("text").as_string()).find("Alice Example"),
            std::string::npos);
  EXPECT_EQ(steps.at("cookie_visible_to_script").as_string(), "") << "the cookie is HttpOnly";
  EXPECT_TRUE(result.at("feed_before").as_array().empty()) << "moderation all: nothing shown yet";

  // Approved: in the public feed, out of the queue.
  EXPECT_EQ(Strings(result.at("feed_after_approve")), std::vector<std::string>{approve});
  EXPECT_EQ(steps.at("after_approve").at("mentions").as_array().size(), 2u);
  // Rejected: stays out of the feed.
  EXPECT_EQ(Strings(result.at("feed_after_reject")), std::vector<std::string>{approve});
  // Without the CSRF token: refused, nothing changed.
  EXPECT_EQ(steps.at("without_csrf").at("title").as_string(), "Nothing changed");
  EXPECT_EQ(Strings(result.at("feed_after_csrfless")), std::vector<std::string>{approve});
  v1::GetMentionRequest get;
  get.set_mention_id(untouched);
  v1::GetMentionResponse got;
  grpc::ClientContext context;
  ASSERT_TRUE(admin->GetMention(&context, get, &got).ok());
  EXPECT_EQ(got.mention().review(), v1::REVIEW_STATE_UNREVIEWED);

  // The policy blocked nothing (no script, no images, one stylesheet from the gateway).
  for (const json::value& message : result.at("messages").as_array()) {
    const std::string text(message.as_string());
    EXPECT_EQ(text.find("Content Security Policy"), std::string::npos) << text;
    EXPECT_EQ(text.find("Refused to"), std::string::npos) << text;
  }

  // The screenshot of the logged-in queue: a rendered page, kept as an artifact.
  std::ifstream file(screenshot, std::ios::binary);
  ASSERT_TRUE(file.good()) << "no screenshot at " << screenshot;
  const std::string png((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(png.size(), 10'000u);
  const char* artifacts = std::getenv("PORTCULLIS_TEST_ARTIFACTS");
  const fs::path kept =
      fs::path(artifacts != nullptr && *artifacts ? artifacts : ::testing::TempDir()) /
      "review-page.png";
  std::error_code ignored;
  fs::create_directories(kept.parent_path(), ignored);
  fs::copy_file(screenshot, kept, fs::copy_options::overwrite_existing, ignored);
  if (const char* keep = std::getenv("PORTCULLIS_REVIEW_SCREENSHOT"); keep != nullptr && *keep) {
    fs::copy_file(screenshot, keep, fs::copy_options::overwrite_existing);
  }
}

TEST_F(ReviewPageBrowserTest, ThePageIsOnTheAdminListenerOnly) {
  const testing::HttpResult public_side =
      testing::SendHttp(stack_->http_port(), "GET", "/admin/review?site=bob.example");
  EXPECT_EQ(public_side.status, 404);
  const testing::HttpResult admin_side =
      testing::SendHttp(stack_->admin_port(), "GET", "/admin/review?site=bob.example");
  EXPECT_EQ(admin_side.status, 200);
  EXPECT_EQ(admin_side.Header("content-security-policy").find("script-src"), std::string::npos)
      << "default-src 'none' covers script";
  EXPECT_NE(admin_side.Header("content-security-policy").find("default-src 'none'"),
            std::string::npos);
  EXPECT_NE(admin_side.body.find("id=\"token\""), std::string::npos);
  // A forged session cookie is refused by the verifier: the form again, the cookie cleared.
  const testing::HttpResult forged = testing::SendHttp(
      stack_->admin_port(), "GET", "/admin/review?site=bob.example", "", "", absl::Seconds(10),
      {{"Cookie", "portcullis_review=pct_0000000000000000000000000000000000000000000000000000000000000000"}});
  EXPECT_EQ(forged.status, 401) << forged.body;
  EXPECT_NE(forged.Header("set-cookie").find("Max-Age=0"), std::string::npos);
}

}  // namespace
}  // namespace portcullis::integration
