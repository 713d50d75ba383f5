#pragma once

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace portcullis::verifier::store {

// One migration file as compiled into the binary: its file name ("0001_create_mentions.sql") and
// its SQL text.
struct MigrationFile {
  absl::string_view file_name;
  absl::string_view sql;
};

// Every file of verifier-service/migrations/, sorted by name. Defined in a source file that the
// build generates (src/store/embed_migrations.cmake).
absl::Span<const MigrationFile> EmbeddedMigrationFiles();

}  // namespace portcullis::verifier::store
