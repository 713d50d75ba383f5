// ingest-gateway: the public HTTP front of Portcullis. Parses flags, builds the config, wires the
// gateway, serves until SIGTERM/SIGINT, drains, exits 0. The flags are declared, with their
// environment variables, in src/gateway_config.cc.
#include <cstdio>
#include <string>

#include "absl/flags/usage.h"
#include "absl/time/clock.h"
#include "common/config/setting.h"
#include "common/lifecycle/allocator_caches.h"
#include "common/lifecycle/mutex_checks.h"
#include "common/lifecycle/termination_signal.h"
#include "common/logging/log.h"
#include "ingest-gateway/src/gateway.h"
#include "ingest-gateway/src/gateway_config.h"

namespace {

int Usage(const absl::Status& status) {
  std::fprintf(stderr, "ingest-gateway: %s\n", std::string(status.message()).c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  portcullis::lifecycle::BlockTerminationSignals();
  portcullis::lifecycle::LimitAllocatorCaches();
  portcullis::lifecycle::SkipMutexDeadlockChecks();
  absl::SetProgramUsageMessage("The Portcullis ingest gateway (HTTP front of the verifier).");
  const absl::StatusOr<portcullis::config::Texts> command_line =
      portcullis::config::ParseCommandLine(argc, argv);
  if (!command_line.ok()) {
    return Usage(command_line.status());
  }
  const absl::StatusOr<portcullis::gateway::GatewayConfig> config =
      portcullis::gateway::GatewayConfig::FromFlags(*command_line);
  if (!config.ok()) {
    return Usage(config.status());
  }
  if (absl::Status logging = portcullis::logging::Init("ingest-gateway", config->log_level);
      !logging.ok()) {
    return Usage(logging);
  }

  absl::StatusOr<std::unique_ptr<portcullis::gateway::Gateway>> gateway =
      portcullis::gateway::Gateway::Create(*config);
  if (!gateway.ok()) {
    portcullis::logging::Error("{}", std::string(gateway.status().message()));
    return 1;
  }
  (*gateway)->Start();
  portcullis::logging::Info("listening http={} admin={} verifier={}", (*gateway)->http_address(),
                            (*gateway)->admin_address(), config->verifier_target);

  const int signal = portcullis::lifecycle::WaitForTerminationSignal();
  portcullis::logging::Info("signal {} received: draining", signal);
  (*gateway)->BeginShutdown();
  if (config->shutdown_delay > absl::ZeroDuration()) {
    absl::SleepFor(config->shutdown_delay);
  }
  const bool drained = (*gateway)->Drain(absl::Now() + config->drain_timeout);
  portcullis::logging::Info("stopped ({})",
                            drained ? "all connections finished" : "drain deadline passed");
  gateway->reset();
  return 0;
}
