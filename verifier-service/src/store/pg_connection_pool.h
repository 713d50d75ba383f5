#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pqxx/connection"

namespace portcullis::verifier::store {

struct PgPoolOptions {
  // libpq connection string or URI.
  std::string database_url;
  // At most this many connections are open at once.
  int size = 8;
  // How long Run() waits for a free connection before answering UNAVAILABLE.
  absl::Duration acquire_timeout = absl::Seconds(2);
  // Set as `statement_timeout` on every connection.
  absl::Duration statement_timeout = absl::Seconds(5);
};

// A bounded pool of PostgreSQL connections, the only place the store touches libpqxx connection
// lifecycles. Connections are opened lazily, a broken one is dropped (and a new one opened the next
// time one is needed), and no libpqxx exception ever leaves Run(). Thread-safe.
class PgConnectionPool {
 public:
  // Checks the options; connects to nothing yet.
  static absl::StatusOr<std::unique_ptr<PgConnectionPool>> Create(PgPoolOptions options);

  PgConnectionPool(const PgConnectionPool&) = delete;
  PgConnectionPool& operator=(const PgConnectionPool&) = delete;

  // Runs `work` on a pooled connection. Whatever `work` throws is caught and returned as a status:
  //   - no free connection within the acquire timeout, cannot connect, connection lost, server
  //     shutting down, serialization conflicts, commit outcome unknown: UNAVAILABLE;
  //   - statement timeout: DEADLINE_EXCEEDED;
  //   - anything else: INTERNAL.
  // Returned messages never carry SQL or server detail; that is logged, with `operation`.
  absl::Status Run(absl::string_view operation, absl::FunctionRef<void(pqxx::connection&)> work);

  // Connections currently open (idle or in use). For tests and metrics.
  int open_connections() const;

 private:
  explicit PgConnectionPool(PgPoolOptions options) : options_(std::move(options)) {}

  absl::StatusOr<std::unique_ptr<pqxx::connection>> Acquire(absl::string_view operation);
  void Release(std::unique_ptr<pqxx::connection> connection);
  void Discard();

  const PgPoolOptions options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
  // Idle, leased, and being opened.
  int open_ ABSL_GUARDED_BY(mu_) = 0;
};

// Translates the exception being handled (call only inside a catch block) into a status with a
// message safe for callers, logging the detail. Sets `*connection_unusable` when the connection
// that raised it must not be reused. Shared by the pool and the migrator.
absl::Status StatusFromCurrentDatabaseException(absl::string_view operation,
                                                bool* connection_unusable);

}  // namespace portcullis::verifier::store
