#pragma once

#include <memory>

#include "gtest/gtest.h"
#include "tests/integration/stack.h"

namespace portcullis::integration {

// A fresh database and a stack started against it (skipped loudly without PostgreSQL, failed
// under CI=true).
class StackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = testing::TestDatabase::Create();
    if (!database.ok()) {
      if (testing::RunningInCi()) {
        FAIL() << "CI=true but no test PostgreSQL: " << database.status();
      }
      GTEST_SKIP() << "SKIPPED, needs PostgreSQL (run through scripts/test): "
                   << database.status();
    }
    database_ = std::move(database).value();
    stack_ = std::make_unique<Stack>(*database_);
    if (start_stack_) {
      const absl::Status started = stack_->StartAll();
      ASSERT_TRUE(started.ok()) << started;
    }
  }

  void TearDown() override { stack_.reset(); }

  bool start_stack_ = true;
  std::unique_ptr<testing::TestDatabase> database_;
  std::unique_ptr<Stack> stack_;
};

}  // namespace portcullis::integration
