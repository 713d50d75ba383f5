#include "verifier-service/src/store/pg_blocklist_store.h"

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/site_binding_sql.h"

namespace portcullis::verifier::store {
namespace {

// Only a site inside the caller's binding ($2; see site_binding_sql.h) has an id here, so a
// bound caller can neither read nor change another site's entries.
constexpr char kSiteId[] =
    "SELECT id::text FROM sites WHERE domain = $1 AND " PORTCULLIS_SITE_VISIBLE("domain", "$2");

// $1 site id or NULL (global). The partial unique indexes make a repeat a no-op.
constexpr char kInsert[] =
    "INSERT INTO source_blocks (site_id, kind, value) VALUES ($1::uuid, $2, $3) "
    "ON CONFLICT DO NOTHING";

constexpr char kList[] =
    "SELECT kind, value, (extract(epoch FROM created_at) * 1000000)::bigint "
    "FROM source_blocks "
    "WHERE site_id IS NOT DISTINCT FROM $1::uuid AND (kind, value) > ($2, $3) "
    "ORDER BY kind, value LIMIT $4";

constexpr char kDelete[] =
    "DELETE FROM source_blocks "
    "WHERE site_id IS NOT DISTINCT FROM $1::uuid AND kind = $2 AND value = $3";

// The mentions an entry covers are a change of the change feed (migrations/0009_mention_feed.sql:
// any UPDATE of a row bumps its position), so that what the public sees of them can follow the
// entry whenever the public predicate (public_mentions_sql.h) reads blocks: a block is a removal
// there, an unblock a re-appearance. Same transaction as the entry. $1 site id or NULL (every
// site), $2 kind, $3 value. A DOMAIN entry covers its host and subdomains (source_host, the
// normalized source's host), a PREFIX entry sources starting with it.
constexpr char kTouchCovered[] =
    "UPDATE mentions m SET change_seq = m.change_seq "
    "WHERE ($1::uuid IS NULL OR m.target_domain = (SELECT domain FROM sites WHERE id = $1::uuid)) "
    "  AND CASE WHEN $2 = 'DOMAIN' THEN (m.source_host = $3 "
    "                                   OR right(m.source_host, length($3) + 1) = '.' || $3) "
    "           ELSE starts_with(m.source, $3) END";

const char* OrNull(const std::optional<std::string>& value) {
  return value ? value->c_str() : nullptr;
}

// The site's id, nullopt for the global scope; sets *missing when the site is not served (or is
// outside the binding).
std::optional<std::string> SiteId(pqxx::transaction_base& transaction, const std::string& site,
                                  const SiteBinding& visible_sites, bool* missing) {
  *missing = false;
  if (site.empty()) {
    return std::nullopt;
  }
  const pqxx::result rows =
      transaction.exec_params(kSiteId, site, SiteBindingParameter(visible_sites));
  if (rows.empty()) {
    *missing = true;
    return std::nullopt;
  }
  return rows[0][0].as<std::string>();
}

absl::Status NoSuchSite() { return absl::NotFoundError("no served site has this domain"); }

// PERMISSION_DENIED when a caller bound to `visible_sites` may not touch the entries of `site`
// (the global ones when empty): decided before any SQL, whether or not the site is served.
absl::Status CheckScope(const std::string& site, const SiteBinding& visible_sites) {
  if (visible_sites.empty()) {
    return absl::OkStatus();
  }
  if (site.empty()) {
    return GlobalNotVisible();
  }
  return SiteVisible(visible_sites, site) ? absl::OkStatus() : SiteNotVisible(site);
}

}  // namespace

absl::StatusOr<bool> PgBlocklistStore::AddBlock(const BlockEntry& entry,
                                                const SiteBinding& visible_sites) {
  if (absl::Status scope = CheckScope(entry.site, visible_sites); !scope.ok()) {
    return scope;
  }
  bool created = false;
  bool missing = false;
  absl::Status status = pool_.Run("add_block", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const std::optional<std::string> site_id =
        SiteId(transaction, entry.site, visible_sites, &missing);
    if (missing) {
      return;
    }
    created =
        transaction.exec_params(kInsert, OrNull(site_id), BlockKindName(entry.kind), entry.value)
            .affected_rows() == 1;
    if (created) {
      transaction.exec_params0(kTouchCovered, OrNull(site_id), BlockKindName(entry.kind),
                               entry.value);
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (missing) {
    return NoSuchSite();
  }
  return created;
}

absl::StatusOr<std::vector<BlockRecord>> PgBlocklistStore::ListBlocks(
    const std::string& site, const std::string& after_kind, const std::string& after_value,
    int limit, const SiteBinding& visible_sites) {
  if (absl::Status scope = CheckScope(site, visible_sites); !scope.ok()) {
    return scope;
  }
  if (limit < 1 || limit > kMaxBlockPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must be from 1 to ", kMaxBlockPageSize));
  }
  std::vector<BlockRecord> records;
  bool missing = false;
  absl::Status status = pool_.Run("list_blocks", [&](pqxx::connection& connection) {
    records.clear();
    pqxx::work transaction(connection);
    const std::optional<std::string> site_id = SiteId(transaction, site, visible_sites, &missing);
    if (missing) {
      return;
    }
    const pqxx::result rows =
        transaction.exec_params(kList, OrNull(site_id), after_kind, after_value, limit);
    for (const pqxx::row& row : rows) {
      BlockRecord record;
      record.entry.site = site;
      record.entry.kind =
          row[0].as<std::string>() == "PREFIX" ? BlockKind::kPrefix : BlockKind::kDomain;
      record.entry.value = row[1].as<std::string>();
      record.created_at = absl::FromUnixMicros(row[2].as<int64_t>());
      records.push_back(std::move(record));
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (missing) {
    return NoSuchSite();
  }
  return records;
}

absl::StatusOr<bool> PgBlocklistStore::RemoveBlock(const BlockEntry& entry,
                                                   const SiteBinding& visible_sites) {
  if (absl::Status scope = CheckScope(entry.site, visible_sites); !scope.ok()) {
    return scope;
  }
  bool removed = false;
  bool missing = false;
  absl::Status status = pool_.Run("remove_block", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    const std::optional<std::string> site_id =
        SiteId(transaction, entry.site, visible_sites, &missing);
    if (missing) {
      return;
    }
    removed =
        transaction.exec_params(kDelete, OrNull(site_id), BlockKindName(entry.kind), entry.value)
            .affected_rows() > 0;
    if (removed) {
      transaction.exec_params0(kTouchCovered, OrNull(site_id), BlockKindName(entry.kind),
                               entry.value);
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (missing) {
    return NoSuchSite();
  }
  return removed;
}

}  // namespace portcullis::verifier::store
