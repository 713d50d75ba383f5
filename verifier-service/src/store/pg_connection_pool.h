#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "pqxx/connection"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction_base"

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
  // For connections whose every statement reads and writes rows by their keys (the submission
  // writers'): `plan_cache_mode = force_generic_plan`, so each prepared statement is planned once
  // per connection, never again per execution; and `enable_seqscan = off`, so that plan uses the
  // indexes even when it was made while the tables were empty or their statistics stale (seen: a
  // plan made on a fresh database hashed the whole mentions table once per batch); and `jit =
  // off`, since a plan with a disabled scan in it is costed past JIT's threshold.
  bool keyed_statements_only = false;
};

// A named SQL statement, prepared (parsed and planned once) on a connection the first time it runs
// there, then executed by name. Define each as a namespace-scope constant:
//   constexpr PgStatement kFindSite{"site_find", "SELECT id FROM sites WHERE domain = $1"};
// The name must be unique in the process (prefix it with the store's name): preparing two
// different statements under one name fails the call with INTERNAL. Parameters are passed as to
// exec_params (nullptr for NULL). Prepared statements are per session, not per transaction: one
// prepared inside a transaction that rolls back stays prepared.
struct PgStatement {
  const char* name;
  const char* sql;
};

// A pooled connection: a pqxx::connection that remembers which PgStatements it has prepared, so
// ExecPrepared on it costs one hash lookup beyond the execution itself. Run() hands these out (as
// pqxx::connection&), and ExecPrepared recognizes them inside Run's work.
class PgPooledConnection final : public pqxx::connection {
 public:
  using pqxx::connection::connection;

  // Whether `statement` (this very definition) was declared on this connection already.
  bool IsPrepared(const PgStatement& statement) const {
    const auto it = prepared_.find(statement.name);
    return it != prepared_.end() && it->second == statement.sql;
  }
  void SetPrepared(const PgStatement& statement) { prepared_[statement.name] = statement.sql; }
  // Statements declared on this connection so far. For tests.
  int prepared_count() const { return static_cast<int>(prepared_.size()); }

 private:
  // Name → the definition's text (by address: each PgStatement is a constant).
  std::unordered_map<std::string, const char*> prepared_;
};

// Declares `statement` on the transaction's connection (once per pooled connection; libpqxx
// sends the PREPARE with the first execution). Used by ExecPrepared*.
void PrepareOnce(pqxx::transaction_base& transaction, const PgStatement& statement);

// Executes `statement` in `transaction`, preparing it on the connection first when needed.
template <typename... Args>
pqxx::result ExecPrepared(pqxx::transaction_base& transaction, const PgStatement& statement,
                          Args&&... args) {
  PrepareOnce(transaction, statement);
  return transaction.exec_prepared(statement.name, std::forward<Args>(args)...);
}

// As ExecPrepared, for a statement that returns exactly one row (else pqxx::unexpected_rows,
// which Run() turns into INTERNAL).
template <typename... Args>
pqxx::row ExecPrepared1(pqxx::transaction_base& transaction, const PgStatement& statement,
                        Args&&... args) {
  PrepareOnce(transaction, statement);
  return transaction.exec_prepared1(statement.name, std::forward<Args>(args)...);
}

// As ExecPrepared, for a statement that returns no rows.
template <typename... Args>
pqxx::result ExecPrepared0(pqxx::transaction_base& transaction, const PgStatement& statement,
                           Args&&... args) {
  PrepareOnce(transaction, statement);
  return transaction.exec_prepared0(statement.name, std::forward<Args>(args)...);
}

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

  absl::StatusOr<std::unique_ptr<PgPooledConnection>> Acquire(absl::string_view operation);
  void Release(std::unique_ptr<PgPooledConnection> connection);
  void Discard();

  const PgPoolOptions options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<PgPooledConnection>> idle_ ABSL_GUARDED_BY(mu_);
  // Idle, leased, and being opened.
  int open_ ABSL_GUARDED_BY(mu_) = 0;
};

// The connections of a batching writer's `writers` threads (MentionWriter, IngestWriter): a pool
// of one connection each, `options` otherwise, keyed statements only.
absl::StatusOr<std::vector<std::unique_ptr<PgConnectionPool>>> OpenWriterConnections(
    PgPoolOptions options, int writers);

// `values` as a PostgreSQL text[] literal, for a `$n::text[]` parameter: every element
// double-quoted with '"' and '\' escaped, so none can break out of it; NUL bytes, which
// PostgreSQL cannot store, are dropped.
std::string TextArrayLiteral(const std::vector<std::string>& values);

// Translates the exception being handled (call only inside a catch block) into a status with a
// message safe for callers, logging the detail. Sets `*connection_unusable` when the connection
// that raised it must not be reused. Shared by the pool and the migrator.
absl::Status StatusFromCurrentDatabaseException(absl::string_view operation,
                                                bool* connection_unusable);

}  // namespace portcullis::verifier::store
