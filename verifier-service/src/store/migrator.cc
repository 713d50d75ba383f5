#include "verifier-service/src/store/migrator.h"

#include <cstdint>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging/log.h"
#include "pqxx/connection"
#include "pqxx/except"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {
namespace {

// The pg_advisory_lock key every verifier process takes while migrating ("prtcllis" in ASCII).
constexpr int64_t kMigrationLockKey = 0x707274636c6c6973;

constexpr char kCreateSchemaMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version int PRIMARY KEY,"
    " name text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())";

}  // namespace

absl::StatusOr<std::vector<int>> Migrator::Apply(const std::string& database_url) const {
  std::vector<int> applied;
  const Migration* current = nullptr;
  try {
    pqxx::connection connection(database_url);
    {
      pqxx::nontransaction session(connection);
      // Session lock: held across the per-migration transactions below, released when the
      // connection closes even if this process dies half-way.
      session.exec_params("SELECT pg_advisory_lock($1)", kMigrationLockKey);
      session.exec0(kCreateSchemaMigrations);
      session.commit();
    }
    std::set<int> recorded;
    {
      pqxx::nontransaction read(connection);
      for (const auto& row : read.exec("SELECT version FROM schema_migrations")) {
        recorded.insert(row[0].as<int>());
      }
      read.commit();
    }
    std::set<int> known;
    for (const Migration& migration : migrations_) {
      known.insert(migration.version);
    }
    std::vector<int> unknown;
    for (int version : recorded) {
      if (known.count(version) == 0) {
        unknown.push_back(version);
      }
    }
    if (!unknown.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("database schema has migration version(s) ", absl::StrJoin(unknown, ","),
                       " that this binary does not know (it knows up to ",
                       migrations_.empty() ? 0 : migrations_.back().version,
                       "); the database was migrated by a newer release, refusing to start"));
    }
    for (const Migration& migration : migrations_) {
      if (recorded.count(migration.version) != 0) {
        continue;
      }
      current = &migration;
      pqxx::work transaction(connection);
      transaction.exec(migration.sql);
      transaction.exec_params0("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                               migration.version, migration.name);
      transaction.commit();
      current = nullptr;
      applied.push_back(migration.version);
      logging::Info("migration applied version={} name={}", migration.version, migration.name);
    }
    if (applied.empty()) {
      logging::Info("migrations up to date version={}",
                    migrations_.empty() ? 0 : migrations_.back().version);
    }
    // Closing the connection releases the advisory lock.
  } catch (...) {
    bool unused = true;
    absl::Status status = StatusFromCurrentDatabaseException("migrate", &unused);
    if (current != nullptr && !absl::IsUnavailable(status)) {
      return absl::InternalError(absl::StrCat("migration version=", current->version, " name=",
                                              current->name, " failed (see the log line before)"));
    }
    return status;
  }
  return applied;
}

}  // namespace portcullis::verifier::store
