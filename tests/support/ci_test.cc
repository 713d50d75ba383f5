// Every skip in tests/ either fails under CI=true or says why the CI machine may skip it: a
// test that silently does not run in CI proves nothing (issue 14).

#include "tests/support/ci.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace portcullis::testing {
namespace {

namespace fs = std::filesystem;

// Sets CI for the scope, restores what it was.
class ScopedCi {
 public:
  explicit ScopedCi(const char* value) {
    if (const char* old = std::getenv("CI"); old != nullptr) {
      old_ = old;
    }
    ::setenv("CI", value, 1);
  }
  ~ScopedCi() {
    if (old_.has_value()) {
      ::setenv("CI", old_->c_str(), 1);
    } else {
      ::unsetenv("CI");
    }
  }

 private:
  std::optional<std::string> old_;
};

void SkipForWantOfAFrobnicator() {
  PORTCULLIS_SKIP_OR_FAIL_UNDER_CI(absl::StrCat("no frobnicator on ", "this machine"));
}

TEST(CiSkipTest, ASkipIsAFailureUnderCi) {
  const ScopedCi ci("true");
  ASSERT_TRUE(RunningInCi());
  EXPECT_FATAL_FAILURE(SkipForWantOfAFrobnicator(),
                       "CI=true, where this test must run, but no frobnicator on this machine");
}

TEST(CiSkipTest, OnlyTheExactValueTrueIsCi) {
  const ScopedCi ci("1");
  EXPECT_FALSE(RunningInCi());
}

// A GTEST_SKIP counts as guarded when RunningInCi() appears in the lines just before it (the
// "fail under CI=true, else skip" shape), when it is the one inside the helper macro, or when its
// line names the reason it is legitimate on the CI machine ("legitimately skipped under CI").
constexpr int kGuardWindow = 6;

TEST(CiSkipTest, EverySkipInTheTestsFailsUnderCiOrNamesWhyCiMaySkipIt) {
  const fs::path tests = fs::path(PORTCULLIS_SOURCE_DIR) / "tests";
  ASSERT_TRUE(fs::is_directory(tests)) << tests;
  std::vector<std::string> unguarded;
  int skips = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(tests)) {
    const std::string extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".cc" && extension != ".h") ||
        entry.path().filename() == "ci_test.cc") {
      continue;  // (this file names GTEST_SKIP in its strings)
    }
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<std::string> lines = absl::StrSplit(text, '\n');
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!absl::StrContains(lines[i], "GTEST_SKIP") ||
          absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[i]), "//")) {
        continue;
      }
      ++skips;
      bool guarded = absl::StrContains(lines[i], "legitimately skipped under CI") ||
                     absl::StrContains(lines[i], "portcullis_skip_why_");
      for (size_t back = 1; !guarded && back <= kGuardWindow && back <= i; ++back) {
        guarded = absl::StrContains(lines[i - back], "RunningInCi()");
      }
      if (!guarded) {
        unguarded.push_back(
            absl::StrCat(fs::relative(entry.path(), tests.parent_path()).string(), ":", i + 1));
      }
    }
  }
  EXPECT_GT(skips, 0) << "found no GTEST_SKIP at all under " << tests << ": is the scan broken?";
  EXPECT_TRUE(unguarded.empty())
      << "GTEST_SKIP without a CI guard (use PORTCULLIS_SKIP_OR_FAIL_UNDER_CI from "
         "tests/support/ci.h): "
      << absl::StrJoin(unguarded, ", ");
}

}  // namespace
}  // namespace portcullis::testing
