#pragma once

#include <string>

namespace portcullis::testing {

// True under CI=true: there, a test that lacks a real part it needs (PostgreSQL, the shared
// conformance data, the npm registry, IPv6 loopback, enough file descriptors) fails instead of
// skipping.
bool RunningInCi();

}  // namespace portcullis::testing

// Ends the test because something it needs is missing here (`why`, a std::string or string
// literal saying what): a loud skip on a developer machine, a failure under CI=true, where the
// machine (Debian 12, root, loopback IPv4 and IPv6, a 20,000 file-descriptor hard limit) has
// every part the tests need, so that no test can silently not run there. Use it in a TEST body or
// its SetUp (it returns from the function, as GTEST_SKIP and FAIL do); needs gtest/gtest.h.
// A skip that the CI machine legitimately needs must not use this: it says so loudly in its own
// message and names that reason (tests/support/ci_test.cc checks every GTEST_SKIP in tests/).
#define PORTCULLIS_SKIP_OR_FAIL_UNDER_CI(why)                                                 \
  do {                                                                                        \
    const std::string portcullis_skip_why_ = (why);                                           \
    if (::portcullis::testing::RunningInCi()) {                                               \
      FAIL() << "CI=true, where this test must run, but " << portcullis_skip_why_;            \
    }                                                                                         \
    GTEST_SKIP() << "SKIPPED: " << portcullis_skip_why_ << " (under CI=true this is a failure)"; \
  } while (false)
