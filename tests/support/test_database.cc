#include "tests/support/test_database.h"

#include <cstdlib>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "common/crypto/random.h"

namespace portcullis::testing {

absl::StatusOr<std::unique_ptr<TestDatabase>> TestDatabase::Create() {
  const char* server = std::getenv("PORTCULLIS_TEST_POSTGRES");
  if (server == nullptr || *server == '\0') {
    return absl::NotFoundError("PORTCULLIS_TEST_POSTGRES is not set");
  }
  const std::string name = absl::StrCat("portcullis_test_", crypto::RandomHex(6));
  try {
    pqxx::connection admin(absl::StrCat(server, " dbname=postgres"));
    pqxx::nontransaction work(admin);
    work.exec0(absl::StrCat("CREATE DATABASE ", name));
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot create test database: ", e.what()));
  }
  return std::unique_ptr<TestDatabase>(new TestDatabase(server, name));
}

TestDatabase::TestDatabase(std::string server, std::string name)
    : server_(std::move(server)),
      name_(std::move(name)),
      connection_string_(absl::StrCat(server_, " dbname=", name_)) {}

TestDatabase::~TestDatabase() {
  try {
    pqxx::connection admin(absl::StrCat(server_, " dbname=postgres"));
    pqxx::nontransaction work(admin);
    work.exec0(absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)"));
  } catch (const std::exception&) {
    // A leftover database in a throwaway cluster harms nothing.
  }
}

}  // namespace portcullis::testing
