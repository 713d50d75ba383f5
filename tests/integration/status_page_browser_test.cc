// The webmention status page as its reader sees it: Debian's headless Chromium opens the page
// served by the real gateway on loopback, for a mention the real verifier recorded as FAILED
// no_link, and the rendered DOM shows the state, the plain sentence, the near misses and the
// next step; the page's one stylesheet is fetched from the gateway (its request counted on
// /metrics) and the browser reports no Content-Security-Policy violation. With
// PORTCULLIS_STATUS_SCREENSHOT=<file.png> the screenshot is also written there (docs/ holds the
// README's). Skipped without chromium, failed under CI=true (scripts/test installs it).
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/integration/metrics_support.h"
#include "tests/support/child_process.h"
#include "tests/support/ci.h"

namespace portcullis::integration {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSource[] = "https://alice.example/2026/12/a-reply";
constexpr char kTarget[] = "https://bob.example/posts/webmentions";

// PORTCULLIS_CHROMIUM, else `chromium` on PATH; empty when there is none.
std::string FindChromium() {
  if (const char* chosen = std::getenv("PORTCULLIS_CHROMIUM"); chosen != nullptr && *chosen) {
    return chosen;
  }
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path == nullptr ? "" : path, ':')) {
    const fs::path candidate = fs::path(std::string(dir)) / "chromium";
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
  }
  return "";
}

class StatusPageBrowserTest : public StackTest {
 protected:
  void SetUp() override {
    chromium_ = FindChromium();
    if (chromium_.empty()) {
      if (testing::RunningInCi()) {
        FAIL() << "CI=true but no chromium (scripts/test installs Debian's chromium)";
      }
      GTEST_SKIP() << "SKIPPED, needs chromium (Debian's package; scripts/test installs it)";
    }
    StackTest::SetUp();
    scratch_ = fs::temp_directory_path() /
               absl::StrCat("portcullis-chromium-", getpid(), "-", ::testing::UnitTest::GetInstance()
                                                                    ->current_test_info()
                                                                    ->name());
    fs::create_directories(scratch_);
  }

  void TearDown() override {
    StackTest::TearDown();
    if (!scratch_.empty()) {
      fs::remove_all(scratch_);
    }
  }

  // Runs headless Chromium on `url` with `mode` (--dump-dom, --screenshot=...); returns what it
  // printed (the DOM on stdout, its console log on stderr).
  std::string RunChromium(const std::string& url, const std::vector<std::string>& mode) {
    std::vector<std::string> args = {
        "--headless=new",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--enable-logging=stderr",
        "--v=0",
        // Every test stays on loopback: nothing but the gateway is reachable.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--window-size=760,600",
        // Lets the stylesheet load and layout settle before the DOM or the picture is taken.
        "--virtual-time-budget=5000",
        absl::StrCat("--user-data-dir=", (scratch_ / "profile").string()),
    };
    if (geteuid() == 0) {
      args.push_back("--no-sandbox");  // Chromium refuses to run as root with its sandbox.
    }
    args.insert(args.end(), mode.begin(), mode.end());
    args.push_back(url);
    const std::string log = (scratch_ / absl::StrCat("chromium-", runs_++, ".log")).string();
    auto process = testing::ChildProcess::Start(chromium_, args, {}, log);
    EXPECT_TRUE(process.ok()) << process.status();
    if (!process.ok()) {
      return "";
    }
    absl::StatusOr<int> exit_code = (*process)->Wait(absl::Seconds(90));
    EXPECT_TRUE(exit_code.ok() && *exit_code == 0)
        << "chromium: " << (exit_code.ok() ? absl::StrCat("exit ", *exit_code)
                                           : exit_code.status().ToString())
        << "\n" << (*process)->Log();
    return (*process)->Log();
  }

  // A webmention accepted through the gateway, then FAILED no_link with two near misses as the
  // verifier records it (pg_job_store), received 12 minutes ago; its status page's URL, or ""
  // on failure.
  std::string FailedNoLinkMention() {
    EXPECT_TRUE(stack_->ServeTarget(kTarget).ok());
    const testing::HttpResult accepted = stack_->PostWebmention(kSource, kTarget);
    EXPECT_EQ(accepted.status, 202) << accepted.body;
    if (accepted.status != 202) {
      return "";
    }
    const json::value body = json::parse(accepted.body);
    pqxx::connection connection(database_->connection_string());
    pqxx::work transaction(connection);
    transaction.exec0(
        "UPDATE mentions SET state = 'FAILED', reason = 'no_link', "
        "links_to_target_host = ARRAY['https://bob.example/posts/webmention', "
        "'https://bob.example/'], created_at = now() - interval '12 minutes', "
        "updated_at = now() - interval '11 minutes'");
    transaction.commit();
    return absl::StrCat("http://127.0.0.1:", stack_->http_port(),
                        std::string(body.at("status_url").as_string()));
  }

  double StylesheetRequests() {
    const testing::HttpResult metrics = testing::SendHttp(stack_->admin_port(), "GET", "/metrics");
    EXPECT_EQ(metrics.status, 200);
    return SumSamples(metrics.body, "portcullis_gateway_http_requests_total",
                      {R"(route="/webmention/status.css")", R"(status="200")"});
  }

  std::string chromium_;
  fs::path scratch_;
  int runs_ = 0;
};

TEST_F(StatusPageBrowserTest, ChromiumShowsTheStateTheAdviceAndLoadsTheStylesheet) {
  const std::string url = FailedNoLinkMention();
  ASSERT_FALSE(url.empty());
  const double stylesheets_before = StylesheetRequests();
  const std::string dom = RunChromium(url, {"--dump-dom"});
  // The rendered document: state, plain sentence, the near misses as links, the next step.
  EXPECT_THAT(dom, HasSubstr("<title>Webmention FAILED</title>"));
  EXPECT_THAT(dom, HasSubstr("<span class=\"state state-failed\">FAILED</span>"));
  EXPECT_THAT(dom, HasSubstr("Your page does not link to the target."));
  EXPECT_THAT(dom, HasSubstr("did you mean one of those?"));
  EXPECT_THAT(dom, HasSubstr("href=\"https://bob.example/posts/webmention\""));
  EXPECT_THAT(dom, HasSubstr("then send the webmention again."));
  EXPECT_THAT(dom, HasSubstr(absl::StrCat("href=\"", kSource, "\"")));
  EXPECT_THAT(dom, HasSubstr("(12 minutes ago)"));
  // The stylesheet reached the gateway, and the page's policy blocked nothing.
  EXPECT_GE(StylesheetRequests(), stylesheets_before + 1);
  EXPECT_THAT(dom, Not(HasSubstr("Content Security Policy")));
  EXPECT_THAT(dom, Not(HasSubstr("Refused to")));
}

TEST_F(StatusPageBrowserTest, ChromiumTakesTheScreenshotTheReadmeShows) {
  const std::string url = FailedNoLinkMention();
  ASSERT_FALSE(url.empty());
  const fs::path picture = scratch_ / "status-page.png";
  RunChromium(url, {absl::StrCat("--screenshot=", picture.string())});
  std::ifstream file(picture, std::ios::binary);
  ASSERT_TRUE(file.good()) << "no screenshot at " << picture;
  std::string png((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(png.size(), 10'000u);  // A rendered page, not a blank one.
  if (const char* keep = std::getenv("PORTCULLIS_STATUS_SCREENSHOT"); keep != nullptr && *keep) {
    fs::copy_file(picture, keep, fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace portcullis::integration
