#include "tools/portcullis/src/links_conformance.h"

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

class LinksConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / "links_conformance_test" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name() / "source.example.com";
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

constexpr char kPage[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
    "<div class=h-entry><a href='http://target.example.com/post-1'>t</a>"
    "<img src='/photo.jpg'></div>";

TEST_F(LinksConformanceTest, CountsPassesAndFailuresAndNamesEachFailure) {
  Fixture("page", kPage);
  std::ostringstream out;
  const auto summary = RunLinksConformance(dir_.string(), R"json({"xray_target_link": {
      "_base": "http://source.example.com/", "_upstream": "comment",
      "page": [
        {"target": "http://target.example.com/post-1", "found": true},
        {"target": "http://source.example.com/photo.jpg", "found": true},
        {"target": "http://target.example.com/post-10", "found": false},
        {"target": "http://target.example.com/post-10", "found": true},
        {"target": "http://target.example.com/post-1", "found": false}
      ],
      "absent": [{"target": "http://target.example.com/", "found": false}]
    }})json",
                                           out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 3);
  EXPECT_EQ(summary->failed, 3);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("FAIL page http://target.example.com/post-10: expected a link, "
                              "found none; links to target.example.com: "
                              "http://target.example.com/post-1\n"));
  EXPECT_THAT(text, HasSubstr("FAIL page http://target.example.com/post-1: expected no link, "
                              "found one (a[href])\n"));
  EXPECT_THAT(text, HasSubstr("FAIL absent http://target.example.com/: fixture: cannot read"));
  EXPECT_EQ(text.substr(text.rfind('\n', text.size() - 2) + 1), "3 passed, 3 failed\n");
}

TEST_F(LinksConformanceTest, FollowsRedirectsBetweenFixturesAndResolvesAgainstTheFinalUrl) {
  Fixture("old", "HTTP/1.1 301 Moved Permanently\r\nLocation: /sub\r\n\r\n<a href=x>x</a>");
  Fixture("sub", "HTTP/1.1 302 Found\nLocation: http://source.example.com/new\n\n");
  Fixture("new", "HTTP/1.1 200 OK\r\n\r\n<a href='reply'>r</a>");
  Fixture("gone", "HTTP/1.1 410 Gone\r\n\r\n<a href='http://target.example.com/'>t</a>");
  Fixture("away", "HTTP/1.1 301 Moved\r\nLocation: http://elsewhere.example/\r\n\r\n");
  std::ostringstream out;
  const auto summary = RunLinksConformance(dir_.string(), R"json({"xray_target_link": {
      "_base": "http://source.example.com/",
      "old": [{"target": "http://source.example.com/reply", "found": true},
              {"target": "http://source.example.com/x", "found": false}],
      "gone": [{"target": "http://target.example.com/", "found": false},
               {"target": "http://target.example.com/", "found": true}],
      "away": [{"target": "http://target.example.com/", "found": false}]
    }})json",
                                           out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 2) << out.str();
  EXPECT_EQ(summary->failed, 2) << out.str();
  // The 410 body links to the target: "found": false holds for the status, not the matcher.
  EXPECT_EQ(summary->skipped, 1) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("SKIP gone http://target.example.com/: the fixture answers 410"));
  EXPECT_THAT(out.str(), HasSubstr("FAIL gone http://target.example.com/: expected a link, but "
                                   "the fixture answers 410"));
  EXPECT_THAT(out.str(), HasSubstr("FAIL away http://target.example.com/: fixture: redirect to "
                                   "http://elsewhere.example/, which is no fixture"));
}

TEST_F(LinksConformanceTest, ANon200FixturePassesOnlyWhenTheMatcherRanAndAgrees) {
  // A 404 whose body has no link to the target passes "found": false (the matcher ran and found
  // none); one whose body does link to it cannot pass: it is skipped with the reason, and a run
  // of nothing but such cases fails.
  Fixture("missing", "HTTP/1.1 404 Not Found\r\n\r\n<a href='http://other.example/'>o</a>");
  Fixture("error", "HTTP/1.1 500 Oops\r\n\r\n<a href='http://target.example.com/'>t</a>");
  std::ostringstream out;
  const auto summary = RunLinksConformance(dir_.string(), R"json({"xray_target_link": {
      "_base": "http://source.example.com/",
      "missing": [{"target": "http://target.example.com/", "found": false}],
      "error": [{"target": "http://target.example.com/", "found": false}]
    }})json",
                                           out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 1) << out.str();
  EXPECT_EQ(summary->skipped, 1) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("SKIP error http://target.example.com/: the fixture answers "
                                   "500, from which the verifier reads no links, but its body "
                                   "links to the target (a[href])"));
  EXPECT_EQ(out.str().substr(out.str().rfind('\n', out.str().size() - 2) + 1),
            "1 passed, 0 failed, 1 skipped\n");

  const std::string only_skipped = Expected(R"json({"xray_target_link": {
      "_base": "http://source.example.com/",
      "error": [{"target": "http://target.example.com/", "found": false}]}})json");
  std::ostringstream err;
  EXPECT_EQ(cli::Run({"conformance", "links", dir_.string(), only_skipped}, {}, out, err),
            kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("all were skipped"));
}

TEST_F(LinksConformanceTest, RefusesMalformedExpectationsBeforeRunning) {
  for (
      const char* json : {
          "not json",
          "[]",
          R"({"other": {}})",
          R"({"xray_target_link": {"page": []}})",
          R"({"xray_target_link": {"_base": "/relative", "page": []}})",
          R"({"xray_target_link": {"_base": "http://s/", "page": {}}})",
          R"({"xray_target_link": {"_base": "http://s/", "page": [{"target": "x"}]}})",
          R"({"xray_target_link": {"_base": "http://s/", "page": [{"target": 1, "found": true}]}})",
      }) {
    std::ostringstream out;
    const auto summary = RunLinksConformance(dir_.string(), json, out);
    EXPECT_TRUE(absl::IsInvalidArgument(summary.status())) << json;
    EXPECT_EQ(out.str(), "") << json;
  }
}

TEST_F(LinksConformanceTest, CommandExitCodes) {
  Fixture("page", kPage);
  const std::string good = Expected(R"json({"xray_target_link": {
      "_base": "http://source.example.com/",
      "page": [{"target": "http://target.example.com/post-1", "found": true}]}})json");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(cli::Run({"conformance", "links", dir_.string(), good}, {}, out, err), kExitOk)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("1 passed, 0 failed\n"));

  const std::string failing = Expected(R"json({"xray_target_link": {
      "_base": "http://source.example.com/",
      "page": [{"target": "http://target.example.com/post-2", "found": true}]}})json");
  EXPECT_EQ(cli::Run({"conformance", "links", dir_.string(), failing}, {}, out, err), kExitFailed);

  const std::string empty = Expected(R"({"xray_target_link": {"_base": "http://s/"}})");
  EXPECT_EQ(cli::Run({"conformance", "links", dir_.string(), empty}, {}, out, err), kExitFailed);

  EXPECT_EQ(cli::Run({"conformance", "links", dir_.string()}, {}, out, err), kExitUsage);
}

TEST_F(LinksConformanceTest, MissingDataSkipsOrFails) {
  const std::string absent = (dir_ / "nope.json").string();
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunLinksConformanceFiles(dir_.string(), absent, MissingData::kSkipUnlessCi,
                                     /*ci=*/false, out, err),
            kExitSkipped);
  EXPECT_THAT(err.str(), HasSubstr("SKIPPED"));
  EXPECT_EQ(RunLinksConformanceFiles(dir_.string(), absent, MissingData::kSkipUnlessCi,
                                     /*ci=*/true, out, err),
            kExitFailed);
  EXPECT_EQ(
      RunLinksConformanceFiles(dir_.string(), absent, MissingData::kFail, /*ci=*/false, out, err),
      kExitFailed);
  const std::string expected = Expected(R"({"xray_target_link": {"_base": "http://s/"}})");
  err.str("");
  EXPECT_EQ(RunLinksConformanceFiles((dir_ / "no-such-dir").string(), expected,
                                     MissingData::kSkipUnlessCi, /*ci=*/false, out, err),
            kExitSkipped);
  EXPECT_THAT(err.str(), Not(HasSubstr("error")));
}

}  // namespace
}  // namespace portcullis::cli
