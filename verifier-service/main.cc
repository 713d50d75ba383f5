// verifier-service: parses flags, builds the config, wires the server and runs it until SIGTERM.
// The flags are declared, with their environment variables, in src/verifier_flags.cc.
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "absl/flags/usage.h"
#include "common/config/setting.h"
#include "common/lifecycle/allocator_caches.h"
#include "common/lifecycle/mutex_checks.h"
#include "common/lifecycle/termination_signal.h"
#include "common/logging/log.h"
#include "verifier-service/src/server/verifier_server.h"
#include "verifier-service/src/verifier_flags.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int Fail(int code, absl::string_view message) {
  std::fprintf(stderr, "verifier-service: %.*s\n", static_cast<int>(message.size()),
               message.data());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  portcullis::lifecycle::BlockTerminationSignals();
  portcullis::lifecycle::LimitAllocatorCaches();
  portcullis::lifecycle::SkipMutexDeadlockChecks();
  absl::SetProgramUsageMessage("Portcullis verifier: receives and verifies webmentions.");
  const absl::StatusOr<portcullis::config::Texts> command_line =
      portcullis::config::ParseCommandLine(argc, argv);
  if (!command_line.ok()) {
    return Fail(kExitUsage, command_line.status().message());
  }
  const absl::StatusOr<portcullis::verifier::VerifierConfig> config =
      portcullis::verifier::BuildVerifierConfig(*command_line);
  if (!config.ok()) {
    return Fail(kExitUsage, config.status().message());
  }
  if (absl::Status status = portcullis::logging::Init("verifier", config->log_level);
      !status.ok()) {
    return Fail(kExitUsage, status.message());
  }

  if (config->migrate_only) {
    const absl::Status status = portcullis::verifier::server::MigrateWithRetry(
        config->database_url, config->startup_timeout);
    if (!status.ok()) {
      return Fail(kExitFailure, status.message());
    }
    return 0;
  }

  absl::StatusOr<std::unique_ptr<portcullis::verifier::server::VerifierServer>> server =
      portcullis::verifier::server::VerifierServer::Start(
          *config, [] { kill(getpid(), SIGTERM); });  // Give up: run the shutdown below.
  if (!server.ok()) {
    // A bad DNS server list or fetch limit is a misconfiguration, like a bad flag.
    return Fail(absl::IsInvalidArgument(server.status()) ? kExitUsage : kExitFailure,
                server.status().message());
  }
  const int signal_number = portcullis::lifecycle::WaitForTerminationSignal();
  portcullis::logging::Info("received signal={}", signal_number);
  (*server)->Shutdown();
  if (const absl::Status fatal = (*server)->fatal_error(); !fatal.ok()) {
    return Fail(kExitFailure, fatal.message());
  }
  return 0;
}
