#include "verifier-service/src/store/migrations.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace portcullis::verifier::store {
namespace {

absl::StatusOr<Migration> MigrationFromFile(const MigrationFile& file) {
  const auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("migration file '", file.file_name, "': ", why));
  };
  absl::string_view stem = file.file_name;
  if (!absl::ConsumeSuffix(&stem, ".sql")) {
    return invalid("name must end in .sql");
  }
  const size_t underscore = stem.find('_');
  if (underscore == absl::string_view::npos || underscore == 0 || underscore + 1 == stem.size()) {
    return invalid("name must read NNNN_name.sql");
  }
  const absl::string_view digits = stem.substr(0, underscore);
  int version = 0;
  if (!std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(digits, &version) || version <= 0) {
    return invalid("version must be a positive number");
  }
  if (absl::StripAsciiWhitespace(file.sql).empty()) {
    return invalid("file is empty");
  }
  return Migration{version, std::string(stem.substr(underscore + 1)), std::string(file.sql)};
}

}  // namespace

absl::StatusOr<std::vector<Migration>> MigrationsFromFiles(absl::Span<const MigrationFile> files) {
  std::vector<Migration> migrations;
  migrations.reserve(files.size());
  for (const MigrationFile& file : files) {
    absl::StatusOr<Migration> migration = MigrationFromFile(file);
    if (!migration.ok()) {
      return migration.status();
    }
    migrations.push_back(*std::move(migration));
  }
  std::sort(migrations.begin(), migrations.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  for (size_t i = 1; i < migrations.size(); ++i) {
    if (migrations[i].version == migrations[i - 1].version) {
      return absl::InvalidArgumentError(
          absl::StrCat("two migrations have version ", migrations[i].version, ": ",
                       migrations[i - 1].name, " and ", migrations[i].name));
    }
  }
  return migrations;
}

absl::StatusOr<std::vector<Migration>> BuiltinMigrations() {
  return MigrationsFromFiles(EmbeddedMigrationFiles());
}

}  // namespace portcullis::verifier::store
