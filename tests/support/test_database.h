#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"

namespace portcullis::testing {

// A fresh, empty database on the PostgreSQL server that scripts/test started, dropped again when
// this object goes away. The server is named by PORTCULLIS_TEST_POSTGRES, a libpq connection
// string without dbname (e.g. "host=/repo/run/test-postgres user=postgres").
class TestDatabase {
 public:
  // Creates the database. NotFound when PORTCULLIS_TEST_POSTGRES is unset.
  static absl::StatusOr<std::unique_ptr<TestDatabase>> Create();
  ~TestDatabase();

  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  // libpq connection string of the new database, usable as DATABASE_URL.
  const std::string& connection_string() const { return connection_string_; }
  const std::string& name() const { return name_; }

 private:
  TestDatabase(std::string server, std::string name);

  std::string server_;
  std::string name_;
  std::string connection_string_;
};

}  // namespace portcullis::testing

// Creates `var` (a std::unique_ptr<TestDatabase>) or ends the test: with a loud skip on a
// developer machine without PostgreSQL, with a failure under CI=true.
#define PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(var)                                          \
  auto var##_or = ::portcullis::testing::TestDatabase::Create();                             \
  if (!var##_or.ok()) {                                                                      \
    if (::portcullis::testing::RunningInCi()) {                                              \
      FAIL() << "CI=true but no test PostgreSQL: " << var##_or.status();                     \
    }                                                                                        \
    GTEST_SKIP() << "SKIPPED, needs PostgreSQL (run through scripts/test): "                 \
                 << var##_or.status();                                                       \
  }                                                                                          \
  std::unique_ptr<::portcullis::testing::TestDatabase> var = std::move(var##_or).value()
