#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace portcullis::testing {

// A program this test started, with its stdout and stderr in a log file. Stopped (and reaped) by
// its PID when the object goes away; never anything else.
class ChildProcess {
 public:
  // Starts `binary` with `args` (without argv[0]); `env` is added to this process's environment.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::string& binary, const std::vector<std::string>& args,
      const std::map<std::string, std::string>& env, const std::string& log_path);
  ~ChildProcess();

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `signal` (SIGTERM by default) if still running.
  void Signal(int signal);
  // Waits up to `timeout` for exit; returns the exit code (128+N for signal N), or
  // DeadlineExceeded.
  absl::StatusOr<int> Wait(absl::Duration timeout);
  // SIGTERM, wait up to `timeout`, then SIGKILL. Returns the exit code.
  int Stop(absl::Duration timeout = absl::Seconds(15));
  // The whole log so far.
  std::string Log() const;

 private:
  ChildProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}

  pid_t pid_;
  std::string log_path_;
  int exit_code_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago, below the kernel's ephemeral range.
int FreeLoopbackPort();

// Runs `binary args...` to completion (at most `timeout`); returns {exit code, stdout}.
struct CommandResult {
  int exit_code;
  std::string output;
};
CommandResult RunCommand(const std::string& binary, const std::vector<std::string>& args,
                         absl::Duration timeout = absl::Seconds(30));

}  // namespace portcullis::testing
