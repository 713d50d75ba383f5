#include "verifier-service/src/store/pg_token_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {
namespace {

#define PORTCULLIS_MICROS(column) "(extract(epoch FROM " column ") * 1000000)::bigint"

// Scopes and sites travel as comma-separated text (neither a scope name nor a host contains a
// comma), which keeps libpqxx 6.4 free of array parameters.
constexpr char kColumns[] =
    "id::text, name, array_to_string(scopes, ','), array_to_string(site_domains, ','), "
    PORTCULLIS_MICROS("created_at") ", " PORTCULLIS_MICROS("revoked_at");

constexpr char kListActive[] =
    "SELECT token_hash, id::text, name, array_to_string(scopes, ','), "
    "array_to_string(site_domains, ',') FROM api_tokens WHERE revoked_at IS NULL";

#undef PORTCULLIS_MICROS

TokenHolder HolderFrom(const pqxx::row& row, int first) {
  TokenHolder holder;
  holder.token_id = row[first].as<std::string>();
  holder.name = row[first + 1].as<std::string>();
  holder.scopes = absl::StrSplit(row[first + 2].as<std::string>(), ',', absl::SkipEmpty());
  holder.sites = absl::StrSplit(row[first + 3].as<std::string>(), ',', absl::SkipEmpty());
  return holder;
}

TokenRecord RecordFrom(const pqxx::row& row) {
  TokenRecord record;
  record.caller = HolderFrom(row, 0);
  record.created_at = absl::FromUnixMicros(row[4].as<int64_t>());
  if (!row[5].is_null()) record.revoked_at = absl::FromUnixMicros(row[5].as<int64_t>());
  return record;
}

}  // namespace

absl::StatusOr<std::vector<ActiveTokenRow>> PgTokenStore::ListActiveTokens() {
  std::vector<ActiveTokenRow> tokens;
  absl::Status status = pool_.Run("list_active_tokens", [&](pqxx::connection& connection) {
    pqxx::read_transaction transaction(connection);
    for (const pqxx::row& row : transaction.exec(kListActive)) {
      tokens.push_back({row[0].as<std::string>(), HolderFrom(row, 1)});
    }
  });
  if (!status.ok()) return status;
  return tokens;
}

absl::StatusOr<TokenRecord> PgTokenStore::CreateToken(const std::string& token_hash,
                                                      const TokenHolder& holder) {
  TokenRecord record;
  absl::Status status = pool_.Run("create_token", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    record = RecordFrom(transaction.exec_params1(
        absl::StrCat("INSERT INTO api_tokens (token_hash, name, scopes, site_domains) "
                     "VALUES ($1, $2, string_to_array($3, ','), "
                     "coalesce(string_to_array(nullif($4, ''), ','), '{}')) RETURNING ",
                     kColumns),
        token_hash, holder.name, absl::StrJoin(holder.scopes, ","),
        absl::StrJoin(holder.sites, ",")));
    transaction.commit();
  });
  if (!status.ok()) return status;
  return record;
}

absl::StatusOr<std::vector<TokenRecord>> PgTokenStore::ListTokens() {
  std::vector<TokenRecord> records;
  absl::Status status = pool_.Run("list_tokens", [&](pqxx::connection& connection) {
    pqxx::read_transaction transaction(connection);
    for (const pqxx::row& row : transaction.exec(
             absl::StrCat("SELECT ", kColumns, " FROM api_tokens ORDER BY created_at, id"))) {
      records.push_back(RecordFrom(row));
    }
  });
  if (!status.ok()) return status;
  return records;
}

absl::StatusOr<TokenRecord> PgTokenStore::RevokeToken(const std::string& token_id) {
  if (!IsUuid(token_id)) return absl::NotFoundError("no token has that id");
  std::optional<TokenRecord> record;
  absl::Status status = pool_.Run("revoke_token", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const pqxx::result rows = transaction.exec_params(
        absl::StrCat("UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) "
                     "WHERE id = $1::uuid RETURNING ",
                     kColumns),
        token_id);
    if (!rows.empty()) record = RecordFrom(rows[0]);
    transaction.commit();
  });
  if (!status.ok()) return status;
  if (!record.has_value()) return absl::NotFoundError("no token has that id");
  return *std::move(record);
}

}  // namespace portcullis::verifier::store
