#include "tests/support/npm_oracle.h"

#include <array>
#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"

namespace portcullis::testing {

namespace fs = std::filesystem;

std::string ShellQuoted(const fs::path& path) { return absl::StrCat("'", path.string(), "'"); }

std::optional<std::string> RunShell(const std::string& command) {
  struct PipeCloser {
    void operator()(FILE* pipe) const {
      if (pipe != nullptr) {
        pclose(pipe);
      }
    }
  };
  std::unique_ptr<FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (pipe == nullptr) {
    return std::nullopt;
  }
  std::string output;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) {
    output.append(buffer.data(), n);
  }
  if (pclose(pipe.release()) != 0) {
    return std::nullopt;
  }
  return output;
}

absl::StatusOr<NpmOracle> NpmOracle::Install(const fs::path& source_dir, const fs::path& work_dir,
                                             absl::Duration install_timeout) {
  std::error_code error;
  fs::create_directories(work_dir, error);
  for (const char* file : {"package.json", "package-lock.json", "oracle.js"}) {
    fs::copy_file(source_dir / file, work_dir / file, fs::copy_options::overwrite_existing, error);
    if (error) {
      return absl::InternalError(absl::StrCat("cannot copy ", file, ": ", error.message()));
    }
  }
  // Local packages the lock file refers to ("file:" overrides), copied whole.
  for (const fs::directory_entry& entry : fs::directory_iterator(source_dir, error)) {
    if (entry.is_directory() && entry.path().filename() != "node_modules") {
      fs::copy(entry.path(), work_dir / entry.path().filename(),
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, error);
      if (error) {
        return absl::InternalError(
            absl::StrCat("cannot copy ", entry.path().string(), ": ", error.message()));
      }
    }
  }
  if (!RunShell("command -v node >/dev/null && command -v npm >/dev/null").has_value()) {
    return absl::UnavailableError("node or npm is not installed");
  }
  // npm ci: exactly the locked versions, checked against the lock file's integrity hashes.
  const std::string install = absl::StrCat(
      "cd ", ShellQuoted(work_dir), " && timeout ", absl::ToInt64Seconds(install_timeout),
      " npm ci --no-audit --no-fund --prefer-offline --loglevel=error 1>&2");
  if (!RunShell(install).has_value()) {
    return absl::UnavailableError(
        absl::StrCat("`npm ci` in ", work_dir.string(), " failed (offline?)"));
  }
  return NpmOracle(work_dir);
}

std::optional<std::string> NpmOracle::Run(const std::string& arguments,
                                          absl::Duration timeout) const {
  return RunShell(absl::StrCat("cd ", ShellQuoted(work_dir_), " && timeout ",
                               absl::ToInt64Seconds(timeout), " node oracle.js ", arguments));
}

}  // namespace portcullis::testing
