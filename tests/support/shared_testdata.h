#pragma once

// Where the shared conformance data lives (../shared/testdata, read in place, never copied) and
// how a test treats its absence: skipped loudly on a developer machine, failed under CI=true.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/ci.h"

namespace portcullis::testing {

// The contents of `path`, or nullopt when it cannot be read.
inline std::optional<std::string> ReadFileIfPresent(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Counts the cases of one shared vector file: every failed case is a test failure naming it, and
// Report() prints "LABEL: N passed, M failed" (the summary the closing notes quote).
class VectorTally {
 public:
  void Check(bool ok, const std::string& what) {
    if (ok) {
      ++passed_;
    } else {
      ++failed_;
      ADD_FAILURE() << what;
    }
  }
  void Report(const std::string& label) const {
    std::cout << label << ": " << passed_ << " passed, " << failed_ << " failed\n";
  }
  int passed() const { return passed_; }
  int failed() const { return failed_; }

 private:
  int passed_ = 0;
  int failed_ = 0;
};

}  // namespace portcullis::testing

// Reads `path` into `var` (a std::string); without it: GTEST_SKIP with the path, or a failure
// under CI=true.
#define PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(var, path)                        \
  std::string var;                                                                \
  if (auto portcullis_contents_ = ::portcullis::testing::ReadFileIfPresent(path); \
      portcullis_contents_.has_value()) {                                         \
    var = std::move(*portcullis_contents_);                                       \
  } else if (::portcullis::testing::RunningInCi()) {                              \
    FAIL() << "shared test data missing under CI=true: " << (path);               \
  } else {                                                                        \
    GTEST_SKIP() << "SKIPPED: shared test data not found at " << (path)           \
                 << " (expected ../shared/testdata beside the repository)";       \
  }
