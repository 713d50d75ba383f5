#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "verifier-service/src/store/migrations.h"

namespace portcullis::verifier::store {

// Brings a database's schema up to date. Safe when many processes start at once: all of them
// take the same PostgreSQL session advisory lock, so each migration is applied exactly once and
// every process goes on once the schema is current.
class Migrator {
 public:
  // `migrations` as returned by MigrationsFromFiles (ordered, unique versions).
  explicit Migrator(std::vector<Migration> migrations) : migrations_(std::move(migrations)) {}

  // Connects to `database_url`, and under the advisory lock creates `schema_migrations` if
  // needed and applies every migration not recorded there, in version order, each in its own
  // transaction together with its row in `schema_migrations`. Returns the versions it applied
  // (empty when the schema was already current) and logs one line per migration, or
  // "migrations up to date".
  // Errors: UNAVAILABLE / DEADLINE_EXCEEDED when the database cannot be reached (retry);
  // FAILED_PRECONDITION when the database records a version this binary does not know (it was
  // migrated by a newer release); INTERNAL when a migration fails.
  absl::StatusOr<std::vector<int>> Apply(const std::string& database_url) const;

 private:
  const std::vector<Migration> migrations_;
};

}  // namespace portcullis::verifier::store
