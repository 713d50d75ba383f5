#include "verifier-service/src/store/pg_public_mention_store.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/mention_row_sql.h"
#include "verifier-service/src/store/public_mentions_sql.h"
#include "verifier-service/src/store/site_binding_sql.h"
#include "verifier-service/src/store/source_block.h"

namespace portcullis::verifier::store {
namespace {

// The rows a public read may return (public_mentions_sql.h).
constexpr char kPublicAnd[] = "AND " PORTCULLIS_MENTION_SHOWN " ";

// Hex SHA-256 digests as a text[] parameter.
std::string HashArray(absl::Span<const crypto::Sha256Digest> hashes) {
  std::vector<std::string> hex;
  hex.reserve(hashes.size());
  for (const crypto::Sha256Digest& hash : hashes) {
    hex.push_back(crypto::ToHex(hash));
  }
  return TextArrayLiteral(hex);
}

std::optional<std::string> MicrosOrNull(const std::optional<absl::Time>& time) {
  if (!time) {
    return std::nullopt;
  }
  return absl::StrCat(absl::ToUnixMicros(*time));
}

const char* OrNullText(const std::optional<std::string>& value) {
  return value ? value->c_str() : nullptr;
}

// The rows of a kSelectMention statement, states parsed.
absl::StatusOr<std::vector<StoredMention>> ReadRows(const pqxx::result& rows) {
  std::vector<StoredMention> mentions;
  mentions.reserve(rows.size());
  for (const pqxx::row& row : rows) {
    std::string state;
    StoredMention mention = ReadMentionRow(row, &state);
    const std::optional<MentionState> parsed = ParseState(state);
    if (!parsed) {
      return UnknownState(state);
    }
    mention.state = *parsed;
    mentions.push_back(std::move(mention));
  }
  return mentions;
}

// The changes after ($2 xid, $3 seq) of site $1, settled ones only (written by transactions that
// ended before every running one began), in feed order, at most $4: live rows (with whether the
// public sees them) and tombstones. Columns: wm_id, gone, visible, change_xid, change_seq.
constexpr PgStatement kListChanges{
    "public_mentions_changes",
    "SELECT c.wm_id, c.gone, c.visible, c.change_xid::text, c.change_seq FROM ("
    "  (SELECT m.wm_id, false AS gone, " PORTCULLIS_MENTION_SHOWN " AS visible, "
    "     m.change_xid, m.change_seq FROM mentions m " PORTCULLIS_MENTION_SITE_JOIN
    "   WHERE m.target_domain = $1 AND (m.change_xid, m.change_seq) > ($2::xid8, $3::bigint) "
    "     AND m.change_xid < pg_snapshot_xmin(pg_current_snapshot()) "
    "   ORDER BY m.change_xid, m.change_seq LIMIT $4) "
    "  UNION ALL "
    "  (SELECT t.wm_id, true, false, t.change_xid, t.change_seq FROM mention_tombstones t "
    "   WHERE t.target_domain = $1 AND (t.change_xid, t.change_seq) > ($2::xid8, $3::bigint) "
    "     AND t.change_xid < pg_snapshot_xmin(pg_current_snapshot()) "
    "   ORDER BY t.change_xid, t.change_seq LIMIT $4)) c "
    "ORDER BY c.change_xid, c.change_seq LIMIT $4"};

// Whether a target of site $1 with normalized URL $2 is served (as MentionStore::Submit decides).
constexpr PgStatement kImportServed{
    "public_mentions_import_served",
    "SELECT EXISTS (SELECT 1 FROM sites s WHERE s.domain = $1 AND ("
    "  EXISTS (SELECT 1 FROM targets t WHERE t.site_id = s.id AND t.kind = 'EXACT' "
    "            AND t.url = $2) "
    "  OR EXISTS (SELECT 1 FROM targets t WHERE t.site_id = s.id AND t.kind = 'PREFIX' "
    "            AND starts_with($2, t.url))))"};

// A new pair as imported; nothing when the pair is stored already. Returns the new id.
constexpr PgStatement kImportInsert{
    "public_mentions_import_insert",
    "INSERT INTO mentions (source, target, source_hash, target_hash, target_domain, source_host, "
    "  state, reason, type, rsvp, author_name, author_url, author_photo, author_note, "
    "  entry_name, published, url, content_text, content_html, content_truncated, verified_at, "
    "  created_at, updated_at) "
    "VALUES ($1, $2, decode($3, 'hex'), decode($4, 'hex'), $5, nullif($6, ''), $7, $8, $9, "
    "  nullif($10, ''), nullif($11, ''), nullif($12, ''), nullif($13, ''), nullif($14, ''), "
    "  nullif($15, ''), nullif($16, ''), nullif($17, ''), nullif($18, ''), nullif($19, ''), "
    "  $20, timestamptz 'epoch' + $21::bigint * interval '1 microsecond', "
    "  timestamptz 'epoch' + $22::bigint * interval '1 microsecond', "
    "  timestamptz 'epoch' + $23::bigint * interval '1 microsecond') "
    "ON CONFLICT (source_hash, target_hash) DO NOTHING RETURNING id::text"};

constexpr PgStatement kImportQueue{
    "public_mentions_import_queue",
    "INSERT INTO verification_jobs (mention_id, kind) VALUES ($1::uuid, 'VERIFY') "
    "ON CONFLICT (mention_id) DO NOTHING"};

constexpr PgStatement kImportNotify{"public_mentions_import_notify",
                                    "SELECT pg_notify('portcullis_verification_jobs', '')"};

// ListPublic's statement for a query's shape (constant fragments only): by domain or by
// targets, and the order, so that each runs on its index (mentions_*_received_idx for the
// received order) instead of one generic plan for all of them. Each shape is a prepared statement
// (the read path's profile: PostgreSQL was 71% of a /api/mentions.jf2 request's CPU, most of
// it parsing and planning the same text on every request). $1 domain or target hashes, $2 types
// (NULL: any), $3 since (Unix µs, NULL: any), $4 since_id, $5 the caller's site binding,
// $6 limit, $7 offset.
const PgStatement& ListStatement(bool by_domain, bool by_update, bool ascending) {
  struct Shape {
    std::string name;
    std::string sql;
    PgStatement statement;
  };
  static const std::array<Shape, 8>* const shapes = [] {
    auto* built = new std::array<Shape, 8>();
    for (int i = 0; i < 8; ++i) {
      const bool domain = (i & 4) != 0;
      const char* dir = (i & 1) != 0 ? "ASC" : "DESC";
      const std::string order = (i & 2) != 0
                                    ? absl::StrCat("m.updated_at ", dir, ", m.wm_id ", dir)
                                    : absl::StrCat("m.wm_id ", dir);
      Shape& shape = (*built)[i];
      shape.name = absl::StrCat("public_mentions_list_", i);
      shape.sql = absl::StrCat(
          kSelectMention,
          domain ? "WHERE m.target_domain = $1 "
                 : "WHERE m.target_hash IN (SELECT decode(h, 'hex') FROM unnest($1::text[]) h) ",
          kPublicAnd,
          "AND ($2::text[] IS NULL OR m.type = ANY ($2::text[])) "
          "AND ($3::bigint IS NULL "
          "     OR m.created_at >= timestamptz 'epoch' + $3::bigint * interval '1 microsecond') "
          "AND m.wm_id > $4 AND " PORTCULLIS_SITE_VISIBLE("m.target_domain", "$5") " ORDER BY ",
          order, " LIMIT $6 OFFSET $7");
      shape.statement = {shape.name.c_str(), shape.sql.c_str()};
    }
    return built;
  }();
  return (*shapes)[(by_domain ? 4 : 0) + (by_update ? 2 : 0) + (ascending ? 1 : 0)].statement;
}
}  // namespace

std::string EncodeChangeCursor(const ChangeCursor& cursor) {
  return absl::StrCat(cursor.xid, ".", cursor.seq);
}

absl::StatusOr<ChangeCursor> DecodeChangeCursor(absl::string_view text) {
  ChangeCursor cursor;
  if (text.empty()) {
    return cursor;
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (text.size() > 41 || parts.size() != 2 || !absl::SimpleAtoi(parts[0], &cursor.xid) ||
      !absl::SimpleAtoi(parts[1], &cursor.seq) || cursor.seq < 0 ||
      cursor.xid > static_cast<uint64_t>(INT64_MAX)) {
    return absl::InvalidArgumentError("the cursor is not one this feed made");
  }
  return cursor;
}

absl::StatusOr<std::vector<StoredMention>> PgPublicMentionStore::ListPublic(
    const PublicMentionQuery& query, const SiteBinding& visible_sites) {
  if (query.domain.empty() == query.target_hashes.empty()) {
    return absl::InvalidArgumentError("exactly one of domain and targets is required");
  }
  if (static_cast<int>(query.target_hashes.size()) > kMaxPublicTargets) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxPublicTargets, " targets"));
  }
  if (query.page_size < 1 || query.page_size > kMaxPublicPageSize || query.page < 0 ||
      static_cast<int64_t>(query.page) * query.page_size > kMaxPublicOffset) {
    return absl::InvalidArgumentError("page or page size out of range");
  }
  if (!query.domain.empty() && !SiteVisible(visible_sites, query.domain)) {
    return SiteNotVisible(query.domain);
  }
  const PgStatement& statement =
      ListStatement(!query.domain.empty(), query.by_update, query.ascending);
  const std::string first =
      query.domain.empty() ? HashArray(query.target_hashes) : query.domain;
  const std::optional<std::string> types =
      query.types.empty() ? std::nullopt : std::optional<std::string>(TextArrayLiteral(query.types));
  const std::optional<std::string> since = MicrosOrNull(query.since);
  absl::StatusOr<std::vector<StoredMention>> mentions;
  const absl::Status status = pool_.Run("list_public_mentions", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    mentions = ReadRows(ExecPrepared(
        transaction, statement, first, OrNullText(types), OrNullText(since), query.since_id,
        SiteBindingParameter(visible_sites), query.page_size,
        static_cast<int64_t>(query.page) * query.page_size));
  });
  if (!status.ok()) {
    return status;
  }
  return mentions;
}

absl::StatusOr<PublicMentionCounts> PgPublicMentionStore::CountPublic(
    absl::Span<const crypto::Sha256Digest> target_hashes, const SiteBinding& visible_sites) {
  if (target_hashes.empty() || static_cast<int>(target_hashes.size()) > kMaxPublicTargets) {
    return absl::InvalidArgumentError(absl::StrCat("1 to ", kMaxPublicTargets, " targets"));
  }
  static constexpr PgStatement kCount{
      "public_mentions_count",
      "SELECT coalesce(m.type, 'mention'), count(*) FROM mentions m " PORTCULLIS_MENTION_SITE_JOIN
      "WHERE m.target_hash IN (SELECT decode(h, 'hex') FROM unnest($1::text[]) h) "
      "AND " PORTCULLIS_MENTION_SHOWN " "
      "AND " PORTCULLIS_SITE_VISIBLE("m.target_domain", "$2") " GROUP BY 1"};
  PublicMentionCounts counts;
  const absl::Status status = pool_.Run("count_public_mentions", [&](pqxx::connection& connection) {
    counts = PublicMentionCounts();
    pqxx::nontransaction transaction(connection);
    for (const pqxx::row& row : ExecPrepared(transaction, kCount, HashArray(target_hashes),
                                             SiteBindingParameter(visible_sites))) {
      const std::string type = row[0].as<std::string>();
      const int64_t n = row[1].as<int64_t>();
      counts.total += n;
      if (type == "reply") {
        counts.reply += n;
      } else if (type == "like") {
        counts.like += n;
      } else if (type == "repost") {
        counts.repost += n;
      } else if (type == "bookmark") {
        counts.bookmark += n;
      } else if (type == "rsvp") {
        counts.rsvp += n;
      } else {
        counts.mention += n;
      }
    }
  });
  if (!status.ok()) {
    return status;
  }
  return counts;
}

absl::StatusOr<MentionChangePage> PgPublicMentionStore::ListChanges(
    absl::string_view domain, absl::string_view cursor, int limit,
    const SiteBinding& visible_sites) {
  if (limit < 1 || limit > kMaxChangesPerPage) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be from 1 to ", kMaxChangesPerPage));
  }
  if (!SiteVisible(visible_sites, domain)) {
    return SiteNotVisible(domain);
  }
  absl::StatusOr<ChangeCursor> after = DecodeChangeCursor(cursor);
  if (!after.ok()) {
    return after.status();
  }
  const std::string rows_sql = absl::StrCat(kSelectMention, "WHERE m.wm_id = ANY ($1::bigint[])");
  MentionChangePage page;
  absl::Status read_status = absl::OkStatus();
  const absl::Status status = pool_.Run("list_mention_changes", [&](pqxx::connection& connection) {
    page = MentionChangePage();
    read_status = absl::OkStatus();
    // One snapshot for the positions and the rows they name.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> transaction(connection);
    ChangeCursor last = *after;
    std::vector<std::string> visible_ids;
    for (const pqxx::row& row :
         ExecPrepared(transaction, kListChanges, std::string(domain),
                      absl::StrCat(after->xid), after->seq, limit)) {
      MentionChange& change = page.changes.emplace_back();
      change.wm_id = row[0].as<int64_t>();
      change.mention.wm_id = change.wm_id;
      change.deleted = row[1].as<bool>() || !row[2].as<bool>();
      if (!change.deleted) {
        visible_ids.push_back(absl::StrCat(change.wm_id));
      }
      last.xid = row[3].as<uint64_t>();
      last.seq = row[4].as<int64_t>();
    }
    if (!visible_ids.empty()) {
      absl::StatusOr<std::vector<StoredMention>> mentions =
          ReadRows(transaction.exec_params(rows_sql, TextArrayLiteral(visible_ids)));
      if (!mentions.ok()) {
        read_status = mentions.status();
        return;
      }
      std::map<int64_t, StoredMention*> by_id;
      for (StoredMention& mention : *mentions) {
        by_id[mention.wm_id] = &mention;
      }
      for (MentionChange& change : page.changes) {
        if (change.deleted) {
          continue;
        }
        auto it = by_id.find(change.wm_id);
        if (it == by_id.end()) {  // Cannot happen within one snapshot; deleted if it did.
          change.deleted = true;
        } else {
          change.mention = std::move(*it->second);
        }
      }
    }
    transaction.commit();
    page.next_cursor = EncodeChangeCursor(last);
  });
  if (!status.ok()) {
    return status;
  }
  if (!read_status.ok()) {
    return read_status;
  }
  return page;
}

absl::StatusOr<std::vector<StoredMention>> PgPublicMentionStore::Export(
    absl::string_view domain, int64_t after_wm_id, int limit, const SiteBinding& visible_sites) {
  if (limit < 1 || limit > kMaxExportPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be from 1 to ", kMaxExportPageSize));
  }
  if (!SiteVisible(visible_sites, domain)) {
    return SiteNotVisible(domain);
  }
  const std::string sql = absl::StrCat(kSelectMention,
                                       "WHERE m.target_domain = $1 AND m.wm_id > $2 "
                                       "ORDER BY m.wm_id LIMIT $3");
  absl::StatusOr<std::vector<StoredMention>> mentions;
  const absl::Status status = pool_.Run("export_mentions", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    mentions = ReadRows(transaction.exec_params(sql, std::string(domain), after_wm_id, limit));
  });
  if (!status.ok()) {
    return status;
  }
  return mentions;
}

absl::StatusOr<ImportResult> PgPublicMentionStore::Import(
    absl::Span<const ImportedMention> mentions, bool reverify, const SiteBinding& visible_sites) {
  if (mentions.empty() || static_cast<int>(mentions.size()) > kMaxImportBatch) {
    return absl::InvalidArgumentError(absl::StrCat("1 to ", kMaxImportBatch, " mentions"));
  }
  for (const ImportedMention& mention : mentions) {
    if (!SiteVisible(visible_sites, mention.pair.target_domain)) {
      return SiteNotVisible(mention.pair.target_domain);
    }
  }
  ImportResult result;
  bool queued = false;
  const absl::Status status = pool_.Run("import_mentions", [&](pqxx::connection& connection) {
    result = ImportResult();
    queued = false;
    pqxx::work transaction(connection);
    for (const ImportedMention& mention : mentions) {
      const NewMention& pair = mention.pair;
      if (!ExecPrepared1(transaction, kImportServed, pair.target_domain, pair.normalized_target)[0]
               .as<bool>()) {
        ++result.rejected;
        continue;
      }
      const bool pending = reverify || mention.state == MentionState::kPending;
      const MentionContent none{.type = ""};
      const MentionContent& content = pending ? none : mention.content;
      const std::string normalized_source =
          pair.normalized_source.empty() ? pair.source : pair.normalized_source;
      const std::optional<std::string> verified =
          pending ? std::nullopt : MicrosOrNull(mention.verified);
      const absl::Time updated = mention.updated.value_or(mention.received);
      const pqxx::result inserted = ExecPrepared(
          transaction, kImportInsert, pair.source, pair.target, crypto::ToHex(pair.source_hash),
          crypto::ToHex(pair.target_hash), pair.target_domain,
          HostOfSerializedUrl(normalized_source),
          pending ? "PENDING" : StateName(mention.state),
          (!pending && mention.state == MentionState::kFailed)
              ? (mention.reason.empty() ? "imported" : mention.reason.c_str())
              : nullptr,
          content.type.empty() ? nullptr : content.type.c_str(), content.rsvp,
          content.author_name, content.author_url, content.author_photo, content.author_note,
          content.name, content.published, content.url, content.content_text,
          content.content_html, content.content_truncated, OrNullText(verified),
          absl::ToUnixMicros(mention.received), absl::ToUnixMicros(updated));
      if (inserted.empty()) {
        ++result.unchanged;
        continue;
      }
      ++result.created;
      if (pending) {
        ExecPrepared0(transaction, kImportQueue, inserted[0][0].as<std::string>());
        queued = true;
      }
    }
    transaction.commit();
    if (queued) {
      pqxx::nontransaction autocommit(connection);
      ExecPrepared(autocommit, kImportNotify);
    }
  });
  if (!status.ok()) {
    return status;
  }
  return result;
}

absl::StatusOr<std::string> PgPublicMentionStore::FindProxiedPhoto(
    absl::string_view photo_hash, const SiteBinding& visible_sites) {
  // migrations/0015: the hash is kept by a trigger and indexed; the site must have the proxy on
  // and the mention must be one the public sees now.
  static constexpr PgStatement kFind{
      "public_mentions_find_proxied_photo",
      "SELECT m.author_photo FROM mentions m JOIN sites s ON s.domain = m.target_domain "
      "WHERE m.author_photo_hash = $1 AND m.author_photo IS NOT NULL AND s.avatar_proxy "
      "AND " PORTCULLIS_MENTION_SHOWN " "
      "AND " PORTCULLIS_SITE_VISIBLE("m.target_domain", "$2") " LIMIT 1"};
  std::optional<std::string> photo;
  const absl::Status status = pool_.Run("find_proxied_photo", [&](pqxx::connection& connection) {
    photo.reset();
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows = ExecPrepared(transaction, kFind, std::string(photo_hash),
                                           SiteBindingParameter(visible_sites));
    if (!rows.empty()) {
      photo = rows[0][0].as<std::string>();
    }
  });
  if (!status.ok()) {
    return status;
  }
  if (!photo.has_value()) {
    return absl::NotFoundError("no shown mention of a proxying site has this photo");
  }
  return *std::move(photo);
}

}  // namespace portcullis::verifier::store
