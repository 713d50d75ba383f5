#include "common/config/env.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace portcullis::config {
namespace {

TEST(EnvOrTest, ReadsSetVariableElseFallback) {
  ::setenv("PORTCULLIS_ENV_TEST", "from-env", 1);
  EXPECT_EQ(EnvOr("PORTCULLIS_ENV_TEST", "fallback"), "from-env");
  ::unsetenv("PORTCULLIS_ENV_TEST");
  EXPECT_EQ(EnvOr("PORTCULLIS_ENV_TEST", "fallback"), "fallback");
}

TEST(EnvOrTest, EmptyValueIsAValue) {
  ::setenv("PORTCULLIS_ENV_TEST", "", 1);
  EXPECT_EQ(EnvOr("PORTCULLIS_ENV_TEST", "fallback"), "");
  ::unsetenv("PORTCULLIS_ENV_TEST");
}

}  // namespace
}  // namespace portcullis::config
