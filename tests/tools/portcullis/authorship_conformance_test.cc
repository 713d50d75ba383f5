#include "tools/portcullis/src/authorship_conformance.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class AuthorshipConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / "authorship_conformance_test" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name() / "blog.example";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  void Fixture(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }

  std::string Expected(const std::string& json) {
    const fs::path path = dir_.parent_path() / "expected.json";
    std::ofstream(path, std::ios::binary) << json;
    return path.string();
  }

  fs::path dir_;
};

// A post whose author is on another page, reached through a redirect (raw-HTTP fixtures), a post
// with its author inline (plain HTML), an unfetchable rel=author, an inline mf2 case, a failure.
TEST_F(AuthorshipConformanceTest, FollowsAuthorPagesAndCountsPassesAndFailures) {
  Fixture("post",
          "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
          "<div class=h-entry><a class=u-author href=/me>me</a>"
          "<p class=e-content>Hi</p></div>");
  Fixture("me", "HTTP/1.1 301 Moved Permanently\nLocation: /about\n\n");
  Fixture("about",
          "HTTP/1.1 200 OK\n\n<div class=h-card><a class='u-url u-uid' href=/about>"
          "<img class=u-photo src=/a.png alt=''><b class=p-name>Ann</b></a><p "
          "class=p-note>Writes.</p></div>");
  Fixture("inline.html",
          "<div class=h-entry><div class='p-author h-card'><a class=u-url href=/ann>Ann</a>"
          "</div></div>");
  Fixture("rel-author-missing.html",
          "<link rel=author href=http://elsewhere.example/><div class=h-entry>x</div>");
  std::ostringstream out;
  const auto summary = RunAuthorshipConformance(dir_.string(), R"json({"cases": {
      "_base": "http://blog.example/", "_upstream": "comment",
      "post": {"name": "Ann", "url": "http://blog.example/about",
               "photo": "http://blog.example/a.png", "note": "Writes."},
      "inline.html": {"name": "Ann", "url": "http://blog.example/ann"},
      "rel-author-missing.html": {"url": "http://elsewhere.example/"},
      "_inline_name": {"_input": {"items": [{"type": ["h-entry"],
                                             "properties": {"author": ["Ann"]}}]},
                       "name": "Ann"},
      "wrong": {"name": "Bob"}
    }, "other": {}})json",
                                                "cases", out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 4) << out.str();
  EXPECT_EQ(summary->failed, 1) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("FAIL wrong\n"));
  EXPECT_THAT(out.str(), HasSubstr("no fixture for http://blog.example/wrong"));
  EXPECT_THAT(out.str(), Not(HasSubstr("FAIL post")));
  EXPECT_THAT(out.str(), HasSubstr("4 passed, 1 failed\n"));
}

TEST_F(AuthorshipConformanceTest, EntryNotePicksAFeedChild) {
  Fixture("feed.html",
          "<div class=h-feed><a class='p-author h-card' href=/ann>Ann</a>"
          "<div class=h-entry><p class=p-name>One</p><a class='p-author h-card' href=/x>X</a>"
          "</div><div class=h-entry><p class=p-name>Two</p></div></div>");
  std::ostringstream out;
  const auto summary = RunAuthorshipConformance(dir_.string(), R"json({"k": {
      "_base": "http://blog.example/",
      "feed.html": {"_entry": "items[0].children[1] (the second)", "name": "Ann",
                    "url": "http://blog.example/ann"}}})json",
                                                "k", out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 1) << out.str();
  EXPECT_EQ(summary->failed, 0);
}

TEST_F(AuthorshipConformanceTest, BaseDefaultsToTheHostNamedFolder) {
  Fixture("p", "HTTP/1.1 200 OK\n\n<div class=h-entry><span class=p-author>Ann</span></div>");
  std::ostringstream out;
  const auto summary =
      RunAuthorshipConformance(dir_.string(), R"({"k": {"p": {"name": "Ann"}}})", "k", out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 1) << out.str();
}

TEST_F(AuthorshipConformanceTest, MalformedExpectationsAreRefusedBeforeRunning) {
  std::ostringstream out;
  for (const char* json :
       {"not json", R"({"other": {}})", R"({"k": []})", R"({"k": {"_base": 7}})",
        R"({"k": {"_base": "ftp://x/"}})", R"({"k": {"p": "no object"}})",
        R"({"k": {"_inline_x": {"name": "no _input"}}})", R"({"k": {"p": {"name": 7}}})",
        R"({"k": {"p": {"_entry": "children[0]"}}})"}) {
    EXPECT_EQ(RunAuthorshipConformance(dir_.string(), json, "k", out).status().code(),
              absl::StatusCode::kInvalidArgument)
        << json;
  }
}

TEST_F(AuthorshipConformanceTest, MissingDataIsSkippedUnlessCiAndNoCasesIsAFailure) {
  std::ostringstream out;
  std::ostringstream err;
  const std::string missing = (dir_ / "nope").string();
  EXPECT_EQ(RunAuthorshipConformanceFiles(missing, missing, "k", MissingData::kSkipUnlessCi,
                                          /*ci=*/false, out, err),
            kExitSkipped);
  EXPECT_THAT(err.str(), HasSubstr("SKIPPED"));
  EXPECT_EQ(RunAuthorshipConformanceFiles(missing, missing, "k", MissingData::kSkipUnlessCi,
                                          /*ci=*/true, out, err),
            kExitFailed);
  EXPECT_EQ(
      RunAuthorshipConformanceFiles(dir_.string(), Expected(R"({"k": {"_base": "http://a/"}})"),
                                    "k", MissingData::kFail, false, out, err),
      kExitFailed);
  EXPECT_EQ(cli::Run({"conformance", "authorship", "a", "b"}, CliOptions{}, out, err), kExitUsage);
}

}  // namespace
}  // namespace portcullis::cli
