#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "verifier-service/src/store/embedded_migrations.h"

namespace portcullis::verifier::store {

// One numbered schema change.
struct Migration {
  int version = 0;   // From the file name: 0001_create_mentions.sql -> 1.
  std::string name;  // From the file name: 0001_create_mentions.sql -> "create_mentions".
  std::string sql;   // Run in one transaction; may hold several statements.
};

// Turns migration files into migrations ordered by version. File names must read
// NNNN_name.sql (at least one digit, a positive version, a non-empty name); versions must be
// unique. InvalidArgument naming the file otherwise.
absl::StatusOr<std::vector<Migration>> MigrationsFromFiles(absl::Span<const MigrationFile> files);

// The migrations compiled into this binary (verifier-service/migrations/).
absl::StatusOr<std::vector<Migration>> BuiltinMigrations();

}  // namespace portcullis::verifier::store
