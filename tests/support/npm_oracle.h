#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"

// An independent implementation from npm, used as a differential oracle: a folder in the test
// tree with package.json, package-lock.json and oracle.js, installed with `npm ci` (exactly the
// locked versions) into the build tree at test time, never into the source tree.
namespace portcullis::testing {

class NpmOracle {
 public:
  // Copies the oracle from `source_dir` into `work_dir` and runs `npm ci` there (at most
  // `install_timeout`). Unavailable when node or npm is missing or the install fails (offline).
  static absl::StatusOr<NpmOracle> Install(const std::filesystem::path& source_dir,
                                           const std::filesystem::path& work_dir,
                                           absl::Duration install_timeout);

  // Runs `node oracle.js ARGUMENTS` (shell-quoted by the caller) in the work directory; its
  // stdout, or nullopt when it exits non-zero or takes over `timeout`.
  std::optional<std::string> Run(const std::string& arguments,
                                 absl::Duration timeout = absl::Seconds(20)) const;

  const std::filesystem::path& work_dir() const { return work_dir_; }

 private:
  explicit NpmOracle(std::filesystem::path work_dir) : work_dir_(std::move(work_dir)) {}

  std::filesystem::path work_dir_;
};

// `path` in single quotes for the shell.
std::string ShellQuoted(const std::filesystem::path& path);

// Runs `command` through the shell; its stdout, or nullopt when it exits non-zero.
std::optional<std::string> RunShell(const std::string& command);

}  // namespace portcullis::testing

// Installs the oracle into `var` (a std::optional<NpmOracle>) or ends the test: a loud skip on a
// developer machine without node, npm or the registry, a failure under CI=true. `what` names the
// reference implementation in the message.
#define PORTCULLIS_INSTALL_NPM_ORACLE_OR_SKIP(var, source_dir, work_dir, timeout, what)            \
  do {                                                                                             \
    absl::StatusOr<::portcullis::testing::NpmOracle> portcullis_oracle_ =                          \
        ::portcullis::testing::NpmOracle::Install(source_dir, work_dir, timeout);                  \
    if (!portcullis_oracle_.ok()) {                                                                \
      const std::string portcullis_why_ =                                                          \
          absl::StrCat(portcullis_oracle_.status().message(), "; the differential check against ", \
                       what, " did not run");                                                      \
      if (::portcullis::testing::RunningInCi()) {                                                  \
        FAIL() << portcullis_why_;                                                                 \
      }                                                                                            \
      GTEST_SKIP() << "SKIPPED: " << portcullis_why_;                                              \
    }                                                                                              \
    (var).emplace(*std::move(portcullis_oracle_));                                                 \
  } while (false)
