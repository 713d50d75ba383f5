#pragma once

// A path in the test temporary directory that no other test process uses: ctest runs every test
// in its own process, in parallel, so two tests writing one fixed name there race (one reads the
// file while the other has just truncated it).

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace portcullis::testing {

// TempDir()/portcullis-<pid>-<name>.
inline std::string PrivateTempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/portcullis-", getpid(), "-", name);
}

}  // namespace portcullis::testing
