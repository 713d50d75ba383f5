// Differential test against an independent implementation: the reference microformats2 parser
// from npm ("microformats-parser", pinned by tests/differential/microformats-parser/
// package-lock.json) parses the same documents as ParseMf2 — every microformats-v2 suite input
// and the webmention-shaped pages in tests/differential/microformats-parser/pages — and the two
// results must be equal (object key order ignored). Installed at test time into the build tree
// (never into the source tree). Without node, npm or the registry the test is skipped loudly;
// under CI=true it fails.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/json/parse.hpp"
#include "boost/json/serialize.hpp"
#include "gtest/gtest.h"
#include "tests/support/ci.h"
#include "tests/support/npm_oracle.h"
#include "tests/support/shared_testdata.h"
#include "tools/portcullis/src/mf2_commands.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::verifier::html {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

struct Case {
  fs::path file;
  std::string base_url;
};

// The .html files under `dir`, in path order; with `paired_only`, only those with a .json beside.
std::vector<fs::path> HtmlFiles(const fs::path& dir, bool paired_only) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir, error)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".html") {
      continue;
    }
    fs::path expected = entry.path();
    expected.replace_extension(".json");
    if (!paired_only || fs::exists(expected)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

class Mf2DifferentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest may run the tests of this file in parallel.
    PORTCULLIS_INSTALL_NPM_ORACLE_OR_SKIP(
        oracle_, PORTCULLIS_ORACLE_SOURCE_DIR,
        fs::path(PORTCULLIS_ORACLE_WORK_DIR) /
            ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        absl::Seconds(90), "the reference parser");
    work_ = oracle_->work_dir();
  }

  // Runs both parsers on every case; one failure per disagreement. Returns {passed, failed}.
  std::pair<int, int> Compare(const std::vector<Case>& cases, const std::string& label) {
    json::array list;
    for (const Case& c : cases) {
      list.push_back(json::object{{"file", c.file.string()}, {"base_url", c.base_url}});
    }
    const fs::path list_file = work_ / (label + "-cases.json");
    std::ofstream(list_file) << json::serialize(list);
    const std::optional<std::string> output =
        oracle_->Run(testing::ShellQuoted(list_file), absl::Seconds(120));
    if (!output.has_value()) {
      ADD_FAILURE() << "node oracle.js failed";
      return {0, static_cast<int>(cases.size())};
    }
    const json::array results = json::parse(*output).as_array();
    EXPECT_EQ(results.size(), cases.size());
    int passed = 0;
    int failed = 0;
    for (size_t i = 0; i < std::min(results.size(), cases.size()); ++i) {
      const Case& c = cases[i];
      const json::object& reference = results[i].as_object();
      std::vector<std::string> differences;
      if (const json::value* error = reference.if_contains("error")) {
        differences.push_back(
            absl::StrCat("the reference parser threw: ", json::serialize(*error)));
      } else {
        std::ifstream in(c.file, std::ios::binary);
        const std::string html((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        const absl::StatusOr<json::object> ours = ParseMf2(html, c.base_url);
        if (!ours.ok()) {
          differences.push_back(std::string(ours.status().message()));
        } else {
          differences = cli::JsonDifferences(*ours, reference.at("result"));
        }
      }
      if (differences.empty()) {
        ++passed;
      } else {
        ++failed;
        ADD_FAILURE() << c.file.string() << " (base " << c.base_url
                      << "), ours vs the reference:\n  " << absl::StrJoin(differences, "\n  ");
      }
    }
    std::cout << "mf2 differential (" << label << "): " << passed << " passed, " << failed
              << " failed\n";
    return {passed, failed};
  }

  std::optional<testing::NpmOracle> oracle_;
  fs::path work_;
};

TEST_F(Mf2DifferentialTest, AgreesOnTheWebmentionShapedPages) {
  std::vector<Case> cases;
  for (const fs::path& file :
       HtmlFiles(fs::path(PORTCULLIS_ORACLE_SOURCE_DIR) / "pages", /*paired_only=*/false)) {
    cases.push_back({file, "https://source.example/notes/page"});
  }
  ASSERT_GE(cases.size(), 7u);
  EXPECT_EQ(Compare(cases, "pages").second, 0);
}

TEST_F(Mf2DifferentialTest, AgreesOnEveryMicroformatsV2SuiteInput) {
  const fs::path suite = fs::path(PORTCULLIS_SHARED_TESTDATA_DIR) / "mf2" / "microformats-v2";
  if (!fs::is_directory(suite)) {
    if (::portcullis::testing::RunningInCi()) {
      FAIL() << "shared test data missing under CI=true: " << suite;
    }
    GTEST_SKIP() << "SKIPPED: shared test data not found at " << suite;
  }
  std::vector<Case> cases;
  for (const fs::path& file : HtmlFiles(suite, /*paired_only=*/true)) {
    cases.push_back({file, "http://example.com/"});
  }
  ASSERT_EQ(cases.size(), 58u);
  EXPECT_EQ(Compare(cases, "microformats-v2").second, 0);
}

}  // namespace
}  // namespace portcullis::verifier::html
