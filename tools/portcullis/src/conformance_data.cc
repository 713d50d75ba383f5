#include "tools/portcullis/src/conformance_data.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {

std::optional<int> ExitUnlessPresent(const std::string& path, absl::string_view what,
                                     MissingData missing, bool ci, std::ostream& err) {
  std::error_code error;
  if (std::filesystem::exists(path, error)) {
    return std::nullopt;
  }
  if (missing == MissingData::kSkipUnlessCi && !ci) {
    err << "SKIPPED: " << what << " not found at " << path
        << " (the shared test data is not checked out beside the repository); "
           "with CI=true this is a failure\n";
    return kExitSkipped;
  }
  err << "error: " << what << " not found at " << path << "\n";
  return kExitFailed;
}

std::optional<std::string> ReadWholeFile(const std::string& path, std::ostream& err) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file || (!file.good() && !file.eof())) {
    err << "error: cannot read " << path << "\n";
    return std::nullopt;
  }
  return text.str();
}

}  // namespace portcullis::cli
