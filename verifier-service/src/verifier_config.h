#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/listen_address.h"

namespace portcullis::verifier {

// The flag values as written (on the command line or in the environment), before validation.
// main.cc fills it from its flags; tests fill it by hand.
struct VerifierFlagValues {
  std::string database_url;
  std::string grpc_listen = "127.0.0.1:50051";
  std::string db_pool_size = "8";
  std::string db_acquire_timeout = "2s";
  std::string db_statement_timeout = "5s";
  std::string max_queued_work = "1024";
  std::string max_connection_age = "5m";
  std::string health_interval = "1s";
  std::string shutdown_delay = "0s";
  std::string drain_timeout = "10s";
  std::string startup_timeout = "60s";
  std::string log_level = "info";
  bool migrate_only = false;
};

// Every limit and timeout of the verifier, validated once at startup and never changed.
struct VerifierConfig {
  // libpq connection string or URI of the PostgreSQL database.
  std::string database_url;
  // Where the gRPC server listens; port 0 picks a free port.
  config::HostPort grpc_listen;
  // Database connections at most, and threads running database work.
  int db_pool_size = 8;
  // How long a request waits for a free database connection before UNAVAILABLE.
  absl::Duration db_acquire_timeout = absl::Seconds(2);
  // PostgreSQL statement_timeout on every connection.
  absl::Duration db_statement_timeout = absl::Seconds(5);
  // Requests waiting for a database thread at most; beyond that, UNAVAILABLE at once.
  size_t max_queued_work = 1024;
  // gRPC connections are closed (GOAWAY) after this long so clients rebalance onto new pods.
  absl::Duration max_connection_age = absl::Minutes(5);
  // How often the health checker pings the database.
  absl::Duration health_interval = absl::Seconds(1);
  // On SIGTERM: how long to report NOT_SERVING before stopping to accept calls.
  absl::Duration shutdown_delay = absl::ZeroDuration();
  // On SIGTERM: how long in-flight calls get to finish.
  absl::Duration drain_timeout = absl::Seconds(10);
  // --migrate_only: how long to keep trying to reach the database.
  absl::Duration startup_timeout = absl::Seconds(60);
  // trace, debug, info, warn, error or off.
  std::string log_level = "info";
  // Apply migrations and exit.
  bool migrate_only = false;
};

// Parses and checks every value. InvalidArgument with one line naming the flag (and its
// environment variable) otherwise.
absl::StatusOr<VerifierConfig> BuildVerifierConfig(const VerifierFlagValues& flags);

}  // namespace portcullis::verifier
