#include "verifier-service/src/store/pg_erasure_store.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/site_binding_sql.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {
namespace {

// The columns of a matched mention: id, source, target, site, source hash (hex).
#define PORTCULLIS_ERASE_COLUMNS                                           \
  "SELECT m.id::text, m.source, m.target, coalesce(m.target_domain, ''), " \
  "encode(m.source_hash, 'hex') FROM mentions m "

// The mentions of one key within the binding ($2), locked until the erasure commits, oldest
// first. A source host is the stored source_host, or for rows stored before it existed the host
// of the stored source. Erasure is rare and by an operator: the author and host forms read the
// mentions table without an index of their own (no write pays for one).
constexpr PgStatement kEraseByAuthor{
    "erasure_match_author",
    PORTCULLIS_ERASE_COLUMNS "WHERE m.author_url = $1 AND " PORTCULLIS_SITE_VISIBLE(
        "m.target_domain", "$2") " ORDER BY m.created_at, m.id FOR UPDATE"};
constexpr PgStatement kEraseByHost{
    "erasure_match_host", PORTCULLIS_ERASE_COLUMNS
    "WHERE (m.source_host = $1 OR (m.source_host IS NULL AND lower(substring(m.source FROM "
    "  '^[A-Za-z][A-Za-z0-9+.-]*://(\\[[^]]*\\]|[^/?#:]*)')) = $1)) AND " PORTCULLIS_SITE_VISIBLE(
        "m.target_domain", "$2") " ORDER BY m.created_at, m.id FOR UPDATE"};
// One mention: read whatever its site, so that outside the binding is PERMISSION_DENIED, not
// NOT_FOUND (as GetMention answers); nothing of it leaves this store then.
constexpr PgStatement kEraseById{"erasure_match_id",
                                 PORTCULLIS_ERASE_COLUMNS "WHERE m.id = $1::uuid FOR UPDATE"};

// The salted hash of the request ($1: kind and key as text) names the rows it writes.
#define PORTCULLIS_SALTED(bytes) "sha256((SELECT salt FROM erasure_salt WHERE singleton) || " bytes ")"

// Tombstones and the delete, in one statement: SOURCE rows for the erased mentions' source
// hashes ($2 hex, each for the site in $3: '' for every site), HOST rows for $5 (a host, '' for
// none) on each site of $4, then the mentions ($6). Columns: tombstones written, mentions deleted.
constexpr PgStatement kEraseApply{
    "erasure_apply",
    "WITH src AS (INSERT INTO erasures (kind, key_hash, site_domain, request_hash) "
    "  SELECT DISTINCT 'SOURCE', " PORTCULLIS_SALTED("decode(u.h, 'hex')") ", u.site, "
    "    " PORTCULLIS_SALTED("convert_to($1, 'UTF8')") " "
    "  FROM unnest($2::text[], $3::text[]) AS u(h, site) "
    "  ON CONFLICT DO NOTHING RETURNING 1), "
    "host AS (INSERT INTO erasures (kind, key_hash, site_domain, request_hash) "
    "  SELECT DISTINCT 'HOST', " PORTCULLIS_SALTED("convert_to($5, 'UTF8')") ", s, "
    "    " PORTCULLIS_SALTED("convert_to($1, 'UTF8')") " "
    "  FROM unnest($4::text[]) AS s WHERE $5 <> '' "
    "  ON CONFLICT DO NOTHING RETURNING 1), "
    "gone AS (DELETE FROM mentions WHERE id = ANY ($6::uuid[]) RETURNING 1) "
    "SELECT (SELECT count(*) FROM src) + (SELECT count(*) FROM host), (SELECT count(*) FROM gone)"};

// The rows of one request ($1), of the binding's sites only ($2; '' rows need an unbound caller),
// and the FAILED `erased` pairs those rows made of re-sends (they hold nothing but the two URLs):
// a re-send after the undo is a new mention, verified as usual. The pairs are found among the
// FAILED ones (their partial index), rare operator work. Column: tombstones removed.
constexpr PgStatement kEraseUndo{
    "erasure_undo",
    "WITH t AS (DELETE FROM erasures WHERE request_hash = "
    PORTCULLIS_SALTED("convert_to($1, 'UTF8')") " AND "
    PORTCULLIS_SITE_VISIBLE("site_domain", "$2") " RETURNING key_hash, site_domain), "
    "m AS (DELETE FROM mentions m WHERE m.state = 'FAILED' AND m.reason = 'erased' "
    "  AND EXISTS (SELECT 1 FROM t WHERE (t.site_domain = '' OR t.site_domain = m.target_domain) "
    "    AND t.key_hash IN (" PORTCULLIS_SALTED("m.source_hash") ", "
    "      " PORTCULLIS_SALTED("convert_to(coalesce(m.source_host, ''), 'UTF8')") ")) "
    "  RETURNING 1) "
    "SELECT count(*) FROM t"};

#undef PORTCULLIS_SALTED
#undef PORTCULLIS_ERASE_COLUMNS

// What names an erasure request in its tombstones.
std::string ErasureRequestText(const ErasureKey& key) {
  switch (key.kind) {
    case ErasureKind::kAuthorUrl:
      return absl::StrCat("AUTHOR:", key.value);
    case ErasureKind::kSourceHost:
      return absl::StrCat("HOST:", key.value);
    case ErasureKind::kMention:
      return absl::StrCat("MENTION:", key.value);
  }
  return "";
}

}  // namespace

absl::StatusOr<ErasureOutcome> PgErasureStore::Erase(const ErasureKey& key, bool dry_run,
                                                     const SiteBinding& sites) {
  if (key.kind == ErasureKind::kMention && !IsUuid(key.value)) {
    return absl::InvalidArgumentError("mention_id is not a UUID");
  }
  ErasureOutcome outcome;
  absl::Status refused;
  absl::Status status = pool_.Run("erase", [&](pqxx::connection& connection) {
    outcome = ErasureOutcome();
    refused = absl::OkStatus();
    pqxx::work transaction(connection);
    const std::string binding = SiteBindingParameter(sites);
    pqxx::result rows;
    switch (key.kind) {
      case ErasureKind::kAuthorUrl:
        rows = ExecPrepared(transaction, kEraseByAuthor, key.value, binding);
        break;
      case ErasureKind::kSourceHost:
        rows = ExecPrepared(transaction, kEraseByHost, key.value, binding);
        break;
      case ErasureKind::kMention:
        rows = ExecPrepared(transaction, kEraseById, key.value);
        if (rows.empty()) {
          refused = absl::NotFoundError("no such mention");
          return;
        }
        if (!SiteVisible(sites, rows[0][3].as<std::string>())) {
          refused = SiteNotVisible(rows[0][3].as<std::string>());
          return;
        }
        break;
    }
    std::vector<std::string> ids, source_hashes, tombstone_sites;
    for (const pqxx::row& row : rows) {
      ErasedMentionRecord record{row[0].as<std::string>(), row[1].as<std::string>(),
                                 row[2].as<std::string>(), row[3].as<std::string>()};
      ids.push_back(record.mention_id);
      source_hashes.push_back(row[4].as<std::string>());
      // One mention's tombstone is for its site; a key's, for every site unless the caller is
      // bound (then for the site each mention was on).
      tombstone_sites.push_back(key.kind == ErasureKind::kMention || !sites.empty() ? record.site
                                                                                    : "");
      if (static_cast<int>(outcome.listed.size()) < kMaxListedErasures) {
        outcome.listed.push_back(std::move(record));
      }
    }
    outcome.mentions = static_cast<int64_t>(ids.size());
    if (dry_run) {
      return;  // The transaction rolls back: the row locks go, nothing changed.
    }
    // A host's tombstone: for every site, or for each site of the binding.
    std::vector<std::string> host_sites;
    if (key.kind == ErasureKind::kSourceHost) {
      host_sites = sites.empty() ? std::vector<std::string>{""} : sites;
    }
    const pqxx::row applied = ExecPrepared1(
        transaction, kEraseApply, ErasureRequestText(key), TextArrayLiteral(source_hashes),
        TextArrayLiteral(tombstone_sites), TextArrayLiteral(host_sites),
        key.kind == ErasureKind::kSourceHost ? key.value : std::string(), TextArrayLiteral(ids));
    outcome.tombstones = applied[0].as<int64_t>();
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (!refused.ok()) {
    return refused;
  }
  return outcome;
}

absl::StatusOr<int64_t> PgErasureStore::Undo(const ErasureKey& key, const SiteBinding& sites) {
  int64_t removed = 0;
  absl::Status status = pool_.Run("erase_undo", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    removed = ExecPrepared1(transaction, kEraseUndo, ErasureRequestText(key),
                            SiteBindingParameter(sites))[0]
                  .as<int64_t>();
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  return removed;
}

}  // namespace portcullis::verifier::store
