#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/stack.h"
#include "tests/support/ci.h"
#include "tests/support/npm_oracle.h"

namespace portcullis::integration {

// A stack on a PostgreSQL cluster of the test's own (scripts/lib/common.sh pg_start in a
// temporary directory), for tests that stop and start the database: stopping the shared test
// server would break every other test. Needs PORTCULLIS_SOURCE_DIR (the repository) defined by
// the test target. Skipped loudly without a test PostgreSQL, failed under CI=true.
class PrivateClusterStackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("PORTCULLIS_TEST_POSTGRES") == nullptr) {
      if (testing::RunningInCi()) {
        FAIL() << "CI=true but no test PostgreSQL";
      }
      GTEST_SKIP() << "SKIPPED, needs PostgreSQL (run through scripts/test)";
    }
    char dir_template[] = "/tmp/portcullis-private-pg-XXXXXX";
    pg_dir_ = ::mkdtemp(dir_template);
    std::optional<std::string> conninfo = Pg("pg_start");
    ASSERT_TRUE(conninfo.has_value() && !conninfo->empty()) << "pg_start failed in " << pg_dir_;
    while (!conninfo->empty() && conninfo->back() == '\n') {
      conninfo->pop_back();
    }
    // This process's TestDatabase goes to the private cluster (ctest runs each test alone).
    ::setenv("PORTCULLIS_TEST_POSTGRES", conninfo->c_str(), 1);
    auto database = testing::TestDatabase::Create();
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = std::move(database).value();
    stack_ = std::make_unique<Stack>(*database_);
    ASSERT_TRUE(stack_->StartAll().ok());
  }

  void TearDown() override {
    stack_.reset();
    if (!pg_dir_.empty()) {
      Pg("pg_start");  // The database is dropped on a running server.
      database_.reset();
      Pg("pg_stop");
      std::filesystem::remove_all(pg_dir_);
    }
  }

  // Runs `pg_start DIR` / `pg_stop DIR` from scripts/lib/common.sh; its output.
  std::optional<std::string> Pg(const std::string& verb) const {
    return testing::RunShell(absl::StrCat("bash -c ", testing::ShellQuoted(absl::StrCat(
                                                          "source ", PORTCULLIS_SOURCE_DIR,
                                                          "/scripts/lib/common.sh && ", verb, " ",
                                                          pg_dir_)),
                                          " 2>/dev/null"));
  }

  std::string pg_dir_;
  std::unique_ptr<testing::TestDatabase> database_;
  std::unique_ptr<Stack> stack_;
};

}  // namespace portcullis::integration
