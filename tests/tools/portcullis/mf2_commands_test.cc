#include "tools/portcullis/src/mf2_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "boost/json/parse.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(JsonDifferencesTest, ObjectKeyOrderDoesNotMatter) {
  EXPECT_THAT(JsonDifferences(boost::json::parse(R"({"a": 1, "b": [1, 2]})"),
                              boost::json::parse(R"({"b": [1, 2], "a": 1})")),
              IsEmpty());
}

TEST(JsonDifferencesTest, ArrayOrderMattersAndEveryDifferenceHasItsPath) {
  EXPECT_THAT(
      JsonDifferences(
          boost::json::parse(R"({"items": [{"properties": {"name": ["b", "a"]}}], "x": 1})"),
          boost::json::parse(R"({"items": [{"properties": {"name": ["a", "b"]}}], "y": 1})")),
      ElementsAre(R"($.items[0].properties.name[0]: expected "a", got "b")",
                  R"($.items[0].properties.name[1]: expected "b", got "a")",
                  "$.y: missing, expected 1", "$.x: unexpected 1"));
  EXPECT_THAT(JsonDifferences(boost::json::parse("[1]"), boost::json::parse("[1, {}]")),
              ElementsAre("$[1]: missing, expected {}"));
  EXPECT_THAT(JsonDifferences(boost::json::parse(R"("1")"), boost::json::parse("1")),
              ElementsAre(R"($: expected 1, got "1")"));
}

class Mf2CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("mf2_commands_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "nested");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const fs::path& path, const std::string& text) { std::ofstream(dir_ / path) << text; }

  fs::path dir_;
};

constexpr char kCard[] = R"(<a class="h-card" href="/me">Ann</a>)";
constexpr char kCardJson[] = R"({"items": [{"type": ["h-card"], "properties":
  {"name": ["Ann"], "url": ["http://example.com/me"]}}], "rels": {}, "rel-urls": {}})";

TEST_F(Mf2CommandsTest, RunsEveryPairRecursivelyAndCountsFailures) {
  Write("card.html", kCard);
  Write("card.json", kCardJson);
  Write("nested/wrong.html", kCard);
  Write("nested/wrong.json", R"({"items": [], "rels": {}, "rel-urls": {}})");
  Write("nested/change-log.html", "<p>not a case</p>");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(
      RunMf2Conformance(dir_.string(), kDefaultMf2BaseUrl, MissingData::kFail, false, out, err),
      kExitFailed);
  EXPECT_THAT(out.str(), HasSubstr("FAIL nested/wrong\n  $.items[0]: unexpected"));
  EXPECT_THAT(out.str(), HasSubstr("\n1 passed, 1 failed\n"));
}

TEST_F(Mf2CommandsTest, BaseUrlIsConfigurable) {
  Write("card.html", kCard);
  Write("card.json", R"({"items": [{"type": ["h-card"], "properties":
    {"name": ["Ann"], "url": ["http://example.test/me"]}}], "rels": {}, "rel-urls": {}})");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunMf2Command({"conformance", "mf2", dir_.string()}, "http://example.test", out, err),
            kExitOk)
      << out.str() << err.str();
  EXPECT_EQ(out.str(), "1 passed, 0 failed\n");
}

TEST_F(Mf2CommandsTest, MissingDirectorySkipsUnlessCi) {
  std::ostringstream out;
  std::ostringstream err;
  const std::string missing = (dir_ / "absent").string();
  EXPECT_EQ(
      RunMf2Conformance(missing, kDefaultMf2BaseUrl, MissingData::kSkipUnlessCi, false, out, err),
      kExitSkipped);
  EXPECT_THAT(err.str(), HasSubstr("SKIPPED"));
  EXPECT_EQ(
      RunMf2Conformance(missing, kDefaultMf2BaseUrl, MissingData::kSkipUnlessCi, true, out, err),
      kExitFailed);
  EXPECT_EQ(RunMf2Conformance(missing, kDefaultMf2BaseUrl, MissingData::kFail, false, out, err),
            kExitFailed);
}

TEST_F(Mf2CommandsTest, EmptyDirectoryFails) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(
      RunMf2Conformance(dir_.string(), kDefaultMf2BaseUrl, MissingData::kFail, false, out, err),
      kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("no NAME.html + NAME.json pairs"));
}

TEST_F(Mf2CommandsTest, ReportModeRunsEveryCaseAndExitsZeroWithFailures) {
  Write("card.html", kCard);
  Write("card.json", kCardJson);
  Write("nested/wrong.html", kCard);
  Write("nested/wrong.json", R"({"items": [], "rels": {}, "rel-urls": {}})");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunMf2Command({"conformance", "mf2-report", dir_.string()}, "", out, err), kExitOk)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("FAIL nested/wrong\n"));
  EXPECT_THAT(out.str(), HasSubstr("\n1 passed, 1 failed\n"));
  // The gate over the same cases fails.
  EXPECT_EQ(RunMf2Command({"conformance", "mf2", dir_.string()}, "", out, err), kExitFailed);
}

TEST_F(Mf2CommandsTest, ReportModeStillFailsWithoutCasesAndWithoutItsDirectoryUnderCi) {
  std::ostringstream out;
  std::ostringstream err;
  // An empty suite reports nothing: a failure, not "0 passed, 0 failed" and exit 0.
  EXPECT_EQ(RunMf2Conformance(dir_.string(), kDefaultMf2BaseUrl, MissingData::kSkipUnlessCi,
                              /*ci=*/true, out, err, Mf2Mode::kReport),
            kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("no NAME.html + NAME.json pairs"));
  const std::string missing = (dir_ / "absent").string();
  EXPECT_EQ(RunMf2Conformance(missing, kDefaultMf2BaseUrl, MissingData::kSkipUnlessCi,
                              /*ci=*/true, out, err, Mf2Mode::kReport),
            kExitFailed);
  EXPECT_EQ(RunMf2Conformance(missing, kDefaultMf2BaseUrl, MissingData::kSkipUnlessCi,
                              /*ci=*/false, out, err, Mf2Mode::kReport),
            kExitSkipped);
  EXPECT_EQ(RunMf2Command({"conformance", "mf2-report", missing}, "", out, err), kExitFailed);
}

TEST_F(Mf2CommandsTest, Mf2PrintsTheParseAsJson) {
  Write("card.html", kCard);
  std::ostringstream out;
  std::ostringstream err;
  const CliOptions options{.verifier_target = "unused",
                           .timeout = absl::Seconds(1),
                           .base_url = "https://blog.example/post/"};
  ASSERT_EQ(cli::Run({"mf2", (dir_ / "card.html").string()}, options, out, err), kExitOk)
      << err.str();
  const boost::json::value parsed = boost::json::parse(out.str());
  EXPECT_EQ(parsed.at("items").at(0).at("properties").at("url").at(0), "https://blog.example/me");
  EXPECT_THAT(out.str(), HasSubstr("\n  \"items\": [\n"));
}

TEST_F(Mf2CommandsTest, Mf2ReportsUnreadableFilesAndBadBaseUrls) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(PrintMf2((dir_ / "absent.html").string(), kDefaultMf2BaseUrl, out, err), kExitFailed);
  Write("card.html", kCard);
  EXPECT_EQ(PrintMf2((dir_ / "card.html").string(), "not a url", out, err), kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("error: "));
  EXPECT_EQ(RunMf2Command({"mf2"}, "", out, err), kExitUsage);
}

}  // namespace
}  // namespace portcullis::cli
