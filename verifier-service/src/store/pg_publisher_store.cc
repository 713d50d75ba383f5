#include "verifier-service/src/store/pg_publisher_store.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/sha256.h"
#include "pqxx/binarystring"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {
namespace {

#define PORTCULLIS_MICROS(column) "(extract(epoch FROM " column ") * 1000000)::bigint"

#define PORTCULLIS_PUBLISHER_COLUMNS                                                   \
  "name, verified, require_signature, retention_seconds, enabled, " PORTCULLIS_MICROS( \
      "created_at") ", keep_drops_seconds, require_c2pa_for_media, c2pa_trust"

constexpr char kPublisherColumns[] = PORTCULLIS_PUBLISHER_COLUMNS;

// The no-op DO UPDATE makes RETURNING answer for an existing row too; `xmax = 0` holds only for
// a row this statement inserted.
constexpr char kAddPublisher[] =
    "INSERT INTO publishers (name, verified, require_signature, retention_seconds, "
    "  keep_drops_seconds, require_c2pa_for_media, c2pa_trust) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7) "
    "ON CONFLICT (name) DO UPDATE SET name = publishers.name "
    "RETURNING " PORTCULLIS_PUBLISHER_COLUMNS ", (xmax = 0)";

constexpr char kSetEnabled[] =
    "UPDATE publishers SET enabled = $2 WHERE name = $1 RETURNING " PORTCULLIS_PUBLISHER_COLUMNS;

// NULL leaves a setting as it is.
constexpr char kUpdateSettings[] =
    "UPDATE publishers SET keep_drops_seconds = coalesce($2::bigint, keep_drops_seconds), "
    "  require_c2pa_for_media = coalesce($3::boolean, require_c2pa_for_media), "
    "  c2pa_trust = coalesce($4::text, c2pa_trust) "
    "WHERE name = $1 RETURNING " PORTCULLIS_PUBLISHER_COLUMNS;

constexpr char kKeyColumns[] =
    "id::text, algorithm, key_material, fingerprint, " PORTCULLIS_MICROS(
        "created_at") ", " PORTCULLIS_MICROS("revoked_at");

// Idempotent while the same key is active (the partial unique index decides).
constexpr char kAddKey[] =
    "INSERT INTO publisher_keys (publisher, algorithm, key_material, fingerprint) "
    "VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (publisher, algorithm, key_material) WHERE revoked_at IS NULL "
    "DO UPDATE SET fingerprint = publisher_keys.fingerprint "
    "RETURNING id::text, algorithm, key_material, fingerprint, " PORTCULLIS_MICROS(
        "created_at") ", " PORTCULLIS_MICROS("revoked_at") ", (xmax = 0)";

constexpr char kPublisherExists[] = "SELECT count(*) FROM publishers WHERE name = $1";

constexpr char kRevokeKey[] =
    "UPDATE publisher_keys SET revoked_at = coalesce(revoked_at, now()) "
    "WHERE publisher = $1 AND id = $2::uuid "
    "RETURNING id::text, algorithm, key_material, fingerprint, " PORTCULLIS_MICROS(
        "created_at") ", " PORTCULLIS_MICROS("revoked_at");

#undef PORTCULLIS_PUBLISHER_COLUMNS
#undef PORTCULLIS_MICROS

PublisherRecord PublisherFromRow(const pqxx::row& row) {
  PublisherRecord record;
  record.settings.name = row[0].as<std::string>();
  record.settings.verified = row[1].as<bool>();
  record.settings.require_signature = row[2].as<bool>();
  record.settings.retention_seconds = row[3].as<int64_t>();
  record.enabled = row[4].as<bool>();
  record.created_at = absl::FromUnixMicros(row[5].as<int64_t>());
  record.settings.keep_drops_seconds = row[6].as<int64_t>();
  record.settings.require_c2pa_for_media = row[7].as<bool>();
  record.settings.c2pa_trust = row[8].as<std::string>();
  return record;
}

PublisherKeyRecord KeyFromRow(const pqxx::row& row, int offset = 0) {
  PublisherKeyRecord key;
  key.key_id = row[offset + 0].as<std::string>();
  key.algorithm = row[offset + 1].as<std::string>();
  key.material = pqxx::binarystring(row[offset + 2]).str();
  key.fingerprint = row[offset + 3].as<std::string>();
  key.created_at = absl::FromUnixMicros(row[offset + 4].as<int64_t>());
  if (!row[offset + 5].is_null()) {
    key.revoked_at = absl::FromUnixMicros(row[offset + 5].as<int64_t>());
  }
  return key;
}

std::string Fingerprint(const std::string& material) {
  return crypto::ToHex(crypto::Sha256(material)).substr(0, 8);
}

// Reads the keys of `publishers` (by name) into them, oldest first.
template <typename Transaction>
void LoadKeys(Transaction& transaction, std::vector<PublisherRecord>& publishers) {
  if (publishers.empty()) {
    return;
  }
  std::map<std::string, PublisherRecord*> by_name;
  std::string names = "{";
  for (PublisherRecord& publisher : publishers) {
    by_name[publisher.settings.name] = &publisher;
  }
  // Names are [A-Za-z0-9._:-] (checked before they reach the store), but quote them anyway.
  bool first = true;
  for (const auto& [name, unused] : by_name) {
    absl::StrAppend(&names, first ? "" : ",", "\"", name, "\"");
    first = false;
  }
  names += "}";
  const pqxx::result rows = transaction.exec_params(
      absl::StrCat("SELECT publisher, ", kKeyColumns,
                   " FROM publisher_keys WHERE publisher = ANY($1::text[]) "
                   "ORDER BY created_at, id"),
      names);
  for (const pqxx::row& row : rows) {
    auto it = by_name.find(row[0].as<std::string>());
    if (it != by_name.end()) {
      it->second->keys.push_back(KeyFromRow(row, 1));
    }
  }
}

}  // namespace

absl::StatusOr<std::optional<PublisherRecord>> PgPublisherStore::GetPublisher(
    const std::string& name) {
  std::optional<PublisherRecord> result;
  absl::Status status = pool_.Run("get_publisher", [&](pqxx::connection& connection) {
    result.reset();
    pqxx::read_transaction transaction(connection);
    const pqxx::result rows = transaction.exec_params(
        absl::StrCat("SELECT ", kPublisherColumns, " FROM publishers WHERE name = $1"), name);
    if (rows.empty()) {
      return;
    }
    std::vector<PublisherRecord> one = {PublisherFromRow(rows[0])};
    LoadKeys(transaction, one);
    result = std::move(one.front());
  });
  if (!status.ok()) {
    return status;
  }
  return result;
}

absl::StatusOr<AddPublisherResult> PgPublisherStore::AddPublisher(
    const PublisherSettings& settings) {
  AddPublisherResult result;
  absl::Status status = pool_.Run("add_publisher", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const pqxx::row row = transaction.exec_params1(
        kAddPublisher, settings.name, settings.verified, settings.require_signature,
        settings.retention_seconds, settings.keep_drops_seconds, settings.require_c2pa_for_media,
        settings.c2pa_trust);
    std::vector<PublisherRecord> one = {PublisherFromRow(row)};
    LoadKeys(transaction, one);
    result.publisher = std::move(one.front());
    result.created = row[9].as<bool>();
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  return result;
}

absl::StatusOr<std::vector<PublisherRecord>> PgPublisherStore::ListPublishers(
    const std::string& after, int limit) {
  std::vector<PublisherRecord> publishers;
  absl::Status status = pool_.Run("list_publishers", [&](pqxx::connection& connection) {
    publishers.clear();
    pqxx::read_transaction transaction(connection);
    const pqxx::result rows = transaction.exec_params(
        absl::StrCat("SELECT ", kPublisherColumns,
                     " FROM publishers WHERE name > $1 ORDER BY name LIMIT $2"),
        after, limit);
    for (const pqxx::row& row : rows) {
      publishers.push_back(PublisherFromRow(row));
    }
    LoadKeys(transaction, publishers);
  });
  if (!status.ok()) {
    return status;
  }
  return publishers;
}

absl::StatusOr<PublisherRecord> PgPublisherStore::SetEnabled(const std::string& name,
                                                             bool enabled) {
  std::optional<PublisherRecord> result;
  absl::Status status = pool_.Run("set_publisher_enabled", [&](pqxx::connection& connection) {
    result.reset();
    pqxx::work transaction(connection);
    const pqxx::result rows = transaction.exec_params(kSetEnabled, name, enabled);
    if (rows.empty()) {
      return;
    }
    std::vector<PublisherRecord> one = {PublisherFromRow(rows[0])};
    LoadKeys(transaction, one);
    result = std::move(one.front());
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (!result) {
    return absl::NotFoundError(absl::StrCat("no publisher is named ", name));
  }
  return *std::move(result);
}

absl::StatusOr<PublisherRecord> PgPublisherStore::UpdateSettings(
    const std::string& name, const PublisherSettingsChange& change) {
  std::optional<PublisherRecord> result;
  absl::Status status = pool_.Run("update_publisher", [&](pqxx::connection& connection) {
    result.reset();
    pqxx::work transaction(connection);
    const pqxx::result rows =
        transaction.exec_params(kUpdateSettings, name, change.keep_drops_seconds,
                                change.require_c2pa_for_media, change.c2pa_trust);
    if (rows.empty()) {
      return;
    }
    std::vector<PublisherRecord> one = {PublisherFromRow(rows[0])};
    LoadKeys(transaction, one);
    result = std::move(one.front());
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (!result.has_value()) {
    return absl::NotFoundError("no publisher has that name");
  }
  return *std::move(result);
}

absl::StatusOr<AddKeyResult> PgPublisherStore::AddKey(const std::string& publisher,
                                                      const std::string& algorithm,
                                                      const std::string& material) {
  std::optional<AddKeyResult> result;
  absl::Status status = pool_.Run("add_publisher_key", [&](pqxx::connection& connection) {
    result.reset();
    pqxx::work transaction(connection);
    if (transaction.exec_params1(kPublisherExists, publisher)[0].as<int64_t>() == 0) {
      return;
    }
    const pqxx::row row = transaction.exec_params1(
        kAddKey, publisher, algorithm, pqxx::binarystring(material.data(), material.size()),
        Fingerprint(material));
    result = AddKeyResult{KeyFromRow(row), row[6].as<bool>()};
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (!result) {
    return absl::NotFoundError(absl::StrCat("no publisher is named ", publisher));
  }
  return *std::move(result);
}

absl::StatusOr<PublisherKeyRecord> PgPublisherStore::RevokeKey(const std::string& publisher,
                                                               const std::string& key_id) {
  if (!IsUuid(key_id)) {
    return absl::NotFoundError("the publisher has no such key");
  }
  std::optional<PublisherKeyRecord> result;
  absl::Status status = pool_.Run("revoke_publisher_key", [&](pqxx::connection& connection) {
    result.reset();
    pqxx::work transaction(connection);
    const pqxx::result rows = transaction.exec_params(kRevokeKey, publisher, key_id);
    if (rows.empty()) {
      return;
    }
    result = KeyFromRow(rows[0]);
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (!result) {
    return absl::NotFoundError("the publisher has no such key");
  }
  return *std::move(result);
}

}  // namespace portcullis::verifier::store
