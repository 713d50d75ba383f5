#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"

// How the conformance runners find their data (../shared/testdata, read in place): present, or
// skipped loudly on a developer machine, or a failure in CI.
namespace portcullis::cli {

// What to do when the data does not exist.
enum class MissingData {
  kFail,  // an error, exit 1
  // Exit kExitSkipped with a loud message, unless `ci` is set: then an error, exit 1. For ctest,
  // where the shared test data may be absent on a developer machine but never in CI.
  kSkipUnlessCi,
};

// Exit code of a skipped conformance run (ctest's SKIP_RETURN_CODE).
inline constexpr int kExitSkipped = 77;

// Nothing when `path` (a file or a directory) exists. Otherwise writes the skip or error line
// naming `what` to `err` and returns the exit code the command ends with.
std::optional<int> ExitUnlessPresent(const std::string& path, absl::string_view what,
                                     MissingData missing, bool ci, std::ostream& err);

// The whole file at `path`, or nullopt after an "error: cannot read" line on `err`.
std::optional<std::string> ReadWholeFile(const std::string& path, std::ostream& err);

}  // namespace portcullis::cli
