#include "verifier-service/src/store/migrations.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::store {
namespace {

TEST(VerifierMigrationsTest, BuiltinMigrationsAreEmbeddedInOrder) {
  absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
  ASSERT_TRUE(migrations.ok()) << migrations.status();
  ASSERT_FALSE(migrations->empty());
  EXPECT_EQ((*migrations)[0].version, 1);
  EXPECT_EQ((*migrations)[0].name, "create_mentions");
  EXPECT_NE((*migrations)[0].sql.find("CREATE TABLE mentions"), std::string::npos);
  for (size_t i = 0; i < migrations->size(); ++i) {
    EXPECT_EQ((*migrations)[i].version, static_cast<int>(i) + 1) << "versions have no gaps";
  }
}

TEST(VerifierMigrationsTest, ParsesAndSortsFileNames) {
  const MigrationFile files[] = {{"0010_add_jobs.sql", "SELECT 10;"},
                                 {"0002_add_sites.sql", "SELECT 2;"}};
  absl::StatusOr<std::vector<Migration>> migrations = MigrationsFromFiles(files);
  ASSERT_TRUE(migrations.ok()) << migrations.status();
  ASSERT_EQ(migrations->size(), 2u);
  EXPECT_EQ((*migrations)[0].version, 2);
  EXPECT_EQ((*migrations)[0].name, "add_sites");
  EXPECT_EQ((*migrations)[1].version, 10);
  EXPECT_EQ((*migrations)[1].sql, "SELECT 10;");
}

TEST(VerifierMigrationsTest, RefusesBadFiles) {
  for (const MigrationFile& file :
       {MigrationFile{"0001_x.txt", "SELECT 1;"}, MigrationFile{"x_0001.sql", "SELECT 1;"},
        MigrationFile{"0000_zero.sql", "SELECT 1;"}, MigrationFile{"0001_.sql", "SELECT 1;"},
        MigrationFile{"0001.sql", "SELECT 1;"}, MigrationFile{"0001_empty.sql", " \n"}}) {
    const MigrationFile files[] = {file};
    EXPECT_TRUE(absl::IsInvalidArgument(MigrationsFromFiles(files).status())) << file.file_name;
  }
  const MigrationFile duplicates[] = {{"0001_a.sql", "SELECT 1;"}, {"001_b.sql", "SELECT 1;"}};
  EXPECT_TRUE(absl::IsInvalidArgument(MigrationsFromFiles(duplicates).status()));
}

}  // namespace
}  // namespace portcullis::verifier::store
