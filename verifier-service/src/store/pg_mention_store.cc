#include "verifier-service/src/store/pg_mention_store.h"

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pqxx/array"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/mention_page_token.h"
#include "verifier-service/src/store/site_binding_sql.h"
#include "verifier-service/src/store/source_block.h"

namespace portcullis::verifier::store {
namespace {

// Stands in for "no cursor" where a uuid parameter must still parse.
constexpr char kNilUuid[] = "00000000-0000-0000-0000-000000000000";

// One statement, so a repeat of the same pair can never create a second row: the unique
// constraint decides. The no-op DO UPDATE makes RETURNING answer for an existing row too;
// `xmax = 0` holds only for a row this statement inserted.
// Either way the row stays locked until commit, so concurrent repeats of one pair take their
// lifecycle decisions one after another. The last column says whether a FAILED decision is older
// than the failure retention ($5, microseconds).
constexpr PgStatement kUpsertPending{
    "mention_submit_upsert_pending",
    "INSERT INTO mentions (source, target, source_hash, target_hash, target_domain) "
    "VALUES ($1, $2, decode($3, 'hex'), decode($4, 'hex'), $6) "
    "ON CONFLICT (source_hash, target_hash) DO UPDATE SET state = mentions.state, "
    "  target_domain = coalesce(mentions.target_domain, EXCLUDED.target_domain) "
    "RETURNING id::text, state, (xmax = 0) AS created, "
    "          updated_at <= now() - $5::bigint * interval '1 microsecond' AS retention_over"};

// The first job of a new mention.
constexpr PgStatement kQueueVerify{
    "mention_submit_queue_verify",
    "INSERT INTO verification_jobs (mention_id, kind) VALUES ($1::uuid, 'VERIFY') "
    "ON CONFLICT (mention_id) DO NOTHING"};

// A VERIFIED mention submitted again: one re-verification. A job already queued is that one; a
// job running now gets one more run when it finishes (the sender may have changed the source
// after that job fetched it).
constexpr PgStatement kQueueReverify{
    "mention_submit_queue_reverify",
    "INSERT INTO verification_jobs (mention_id, kind) VALUES ($1::uuid, 'REVERIFY') "
    "ON CONFLICT (mention_id) DO UPDATE SET rerun = true "
    "WHERE verification_jobs.lease_owner IS NOT NULL"};

// A FAILED mention past the failure retention starts again.
constexpr PgStatement kRestart{
    "mention_submit_restart",
    "UPDATE mentions SET state = 'PENDING', reason = NULL, links_to_target_host = '{}', "
    "  updated_at = now() "
    "WHERE id = $1::uuid"};

// Wakes the workers (LISTEN portcullis_verification_jobs). Sent in its own transaction after the
// submission committed (see WakeWorkers): a transaction that notifies holds PostgreSQL's
// notification lock from before its commit until after its WAL flush, so notifying inside every
// submission serialized all their commits, one flush each.
constexpr PgStatement kNotify{"mention_submit_notify",
                              "SELECT pg_notify('portcullis_verification_jobs', '')"};

// No row: the host is not a served site. Otherwise whether a target rule matches: an EXACT rule
// through the unique (url, kind) index, PREFIX rules of the site through (site_id, kind).
constexpr PgStatement kMatchTarget{
    "mention_submit_match_target",
    "SELECT EXISTS (SELECT 1 FROM targets t WHERE t.url = $2 AND t.kind = 'EXACT' "
    "                 AND t.site_id = s.id) "
    "    OR EXISTS (SELECT 1 FROM targets t WHERE t.site_id = s.id AND t.kind = 'PREFIX' "
    "                 AND starts_with($2, t.url)) "
    "FROM sites s WHERE s.domain = $1"};

// Whether the source is blocked for the target's site ($1 domain): a global entry or one of the
// site's, DOMAIN entries by the source host and its parent domains ($2, a text[] literal),
// PREFIX entries by the normalized source ($3).
constexpr PgStatement kSourceBlocked{
    "mention_submit_source_blocked",
    "SELECT EXISTS (SELECT 1 FROM source_blocks b "
    "  WHERE (b.site_id IS NULL OR b.site_id = (SELECT id FROM sites WHERE domain = $1)) "
    "    AND ((b.kind = 'DOMAIN' AND b.value = ANY ($2::text[])) "
    "      OR (b.kind = 'PREFIX' AND starts_with($3, b.value))))"};

// A blocked source: the pair is FAILED `blocked` (updated_at moves only when that is news).
constexpr PgStatement kUpsertBlocked{
    "mention_submit_upsert_blocked",
    "INSERT INTO mentions (source, target, source_hash, target_hash, target_domain, state, "
    "  reason) "
    "VALUES ($1, $2, decode($3, 'hex'), decode($4, 'hex'), $5, 'FAILED', 'blocked') "
    "ON CONFLICT (source_hash, target_hash) DO UPDATE SET state = 'FAILED', reason = 'blocked', "
    "  links_to_target_host = '{}', "
    "  updated_at = CASE WHEN mentions.state = 'FAILED' AND mentions.reason = 'blocked' "
    "    THEN mentions.updated_at ELSE now() END "
    "RETURNING id::text, (xmax = 0) AS created"};

// The admission limits (SubmitLimits), each counted only up to its limit.
constexpr PgStatement kCountQueue{
    "mention_submit_count_queue",
    "SELECT count(*) FROM (SELECT 1 FROM verification_jobs LIMIT $1) q"};
constexpr PgStatement kCountPendingOfHost{
    "mention_submit_count_pending_of_host",
    "SELECT count(*) FROM (SELECT 1 FROM mentions WHERE source_host = $1 AND state = 'PENDING' "
    "  LIMIT $2) q"};
constexpr PgStatement kSetSourceHost{"mention_submit_set_source_host",
                                     "UPDATE mentions SET source_host = $2 WHERE id = $1::uuid "
                                     "  AND source_host IS DISTINCT FROM $2"};

// Nothing fetches a blocked source: a queued job goes, and a running one loses its lease (its
// worker's Finish then finds the job gone and its outcome is dropped).
constexpr PgStatement kDropJob{"mention_submit_drop_job",
                               "DELETE FROM verification_jobs WHERE mention_id = $1::uuid"};

// The common submissions in one statement and one round trip, committed on its own (autocommit):
// a new pair of a served target whose source is not blocked is inserted with its job (when the
// admission limits allow it), and everything else is only read. The answer says which case it
// was; cases this statement does not finish (a blocked source, a mention that is not PENDING with
// a job, a concurrent insert of the same pair) go through the full transaction below, which
// decides them under the row lock as before.
// A repeat of a PENDING pair that has its job changes nothing in the full path either (the job
// insert conflicts, the upsert rewrites the row unchanged), so it is answered from this read
// alone: no write, no row lock, no commit to wait for.
// Parameters: $1 target domain, $2 normalized target, $3 the source's domain block keys (text[]
// literal), $4 normalized source, $5 source, $6 target, $7 source hash, $8 target hash (bytea
// in hex input form, `\x...`, so that they are plain parameters of the generic plan, not a
// decode() evaluated per row),
// $9 target domain or NULL, $10 source host, $11 max queue length, $12 max PENDING per source
// host (0: no limit).
// The pair is looked up by source_hash through the unique index, the target hash only filtered
// (`IS TRUE` keeps it out of the index conditions): otherwise the generic plan of the prepared
// statement may pick mentions_target_recent_idx when its statistics are stale or even, and read
// every mention of a popular target per submission (seen: a per-row decode() at the top of the
// PostgreSQL profile, growing with the table).
// Columns: served (NULL: unknown site), blocked, inserted id, existing id, existing state,
// existing settled (a PENDING row with its job and its target domain: nothing to do), queue full,
// host full, queued (1 when a job was queued).
constexpr PgStatement kSubmitFast{
    "mention_submit_fast",
    "WITH site AS ("
    "  SELECT s.id, EXISTS (SELECT 1 FROM targets t WHERE t.url = $2::text AND t.kind = 'EXACT' "
    "                         AND t.site_id = s.id) "
    "            OR EXISTS (SELECT 1 FROM targets t WHERE t.site_id = s.id AND t.kind = 'PREFIX' "
    "                         AND starts_with($2::text, t.url)) AS served "
    "  FROM sites s WHERE s.domain = $1::text), "
    "blocked AS ("
    "  SELECT EXISTS (SELECT 1 FROM source_blocks b "
    "    WHERE (b.site_id IS NULL OR b.site_id = (SELECT id FROM site)) "
    "      AND ((b.kind = 'DOMAIN' AND b.value = ANY ($3::text[])) "
    "        OR (b.kind = 'PREFIX' AND starts_with($4::text, b.value)))) AS blocked), "
    "existing AS ("
    "  SELECT m.id, m.state, "
    "         m.state = 'PENDING' AND (m.target_domain IS NOT NULL OR $9::text IS NULL) "
    "         AND EXISTS (SELECT 1 FROM verification_jobs j WHERE j.mention_id = m.id) AS settled "
    "  FROM mentions m "
    "  WHERE m.source_hash = $7::bytea AND (m.target_hash = $8::bytea) IS TRUE), "
    "limits AS ("
    "  SELECT CASE WHEN $11::bigint > 0 AND NOT EXISTS (SELECT 1 FROM existing) "
    "    THEN (SELECT count(*) FROM (SELECT 1 FROM verification_jobs LIMIT $11::bigint) q) "
    "         >= $11::bigint ELSE false END AS queue_full, "
    "  CASE WHEN $12::bigint > 0 AND NOT EXISTS (SELECT 1 FROM existing) "
    "    THEN (SELECT count(*) FROM (SELECT 1 FROM mentions WHERE source_host = $10::text "
    "            AND state = 'PENDING' LIMIT $12::bigint) q) >= $12::bigint "
    "    ELSE false END AS host_full), "
    "ins AS ("
    "  INSERT INTO mentions (source, target, source_hash, target_hash, target_domain, "
    "    source_host) "
    "  SELECT $5::text, $6::text, $7::bytea, $8::bytea, $9::text, "
    "    $10::text "
    "  FROM site, blocked, limits "
    "  WHERE site.served AND NOT blocked.blocked AND NOT limits.queue_full "
    "    AND NOT limits.host_full AND NOT EXISTS (SELECT 1 FROM existing) "
    "  ON CONFLICT (source_hash, target_hash) DO NOTHING "
    "  RETURNING id), "
    "job AS ("
    "  INSERT INTO verification_jobs (mention_id, kind) SELECT id, 'VERIFY' FROM ins "
    "  RETURNING mention_id) "
    "SELECT (SELECT served FROM site), (SELECT blocked FROM blocked), "
    "  (SELECT id::text FROM ins), (SELECT id::text FROM existing), "
    "  (SELECT state FROM existing), coalesce((SELECT settled FROM existing), false), "
    "  limits.queue_full, limits.host_full, "
    "  (SELECT count(*) FROM job) "
    "FROM limits"};

// Every column of a StoredMention, in the order ReadMention reads them. The job (when one is
// queued or running) counts the current cycle's attempts; a re-run job that has not been claimed
// yet has none, so the last cycle's count shows.
constexpr char kSelectMention[] =
    "SELECT m.id::text, m.source, m.target, m.state, coalesce(m.reason, ''), "
    "(extract(epoch FROM m.created_at) * 1000000)::bigint, "
    "(extract(epoch FROM m.updated_at) * 1000000)::bigint, "
    "coalesce(m.type, ''), coalesce(m.rsvp, ''), coalesce(m.author_name, ''), "
    "coalesce(m.author_url, ''), coalesce(m.author_photo, ''), coalesce(m.author_note, ''), "
    "coalesce(m.entry_name, ''), coalesce(m.published, ''), coalesce(m.url, ''), "
    "coalesce(m.content_text, ''), coalesce(m.content_html, ''), m.content_truncated, "
    "(extract(epoch FROM m.verified_at) * 1000000)::bigint, m.links_to_target_host, "
    "CASE WHEN j.attempts > 0 THEN j.attempts ELSE m.attempts END "
    "FROM mentions m LEFT JOIN verification_jobs j ON j.mention_id = m.id ";

// Reads the mention only when its site is in the caller's binding ($2; see site_binding_sql.h).
constexpr char kGetWhere[] =
    "WHERE m.id = $1::uuid AND " PORTCULLIS_SITE_VISIBLE("m.target_domain", "$2");

// When Get found nothing for a bound caller: whether the mention exists at all (then it is
// another site's). Nothing of it but that answer is read.
constexpr char kMentionExists[] = "SELECT EXISTS (SELECT 1 FROM mentions WHERE id = $1::uuid)";

// The site of the target with hash `hash` (hex): a target is on one site (its host is part of what
// is hashed), so the site of any one of its mentions is the site of all; '' when none has one.
#define PORTCULLIS_TARGET_SITE(hash)                                                  \
  "coalesce((SELECT t.target_domain FROM mentions t WHERE t.target_hash = decode(" hash \
  ", 'hex') AND t.target_domain IS NOT NULL LIMIT 1), '')"

// When a page by target came back empty for a bound caller: whether the target has mentions, of a
// site outside the binding ($2).
constexpr char kTargetElsewhere[] =
    "SELECT EXISTS (SELECT 1 FROM mentions WHERE target_hash = decode($1, 'hex')) "
    "  AND NOT " PORTCULLIS_TARGET_SITE("$1") " = ANY ($2::text[])";

// Keyset paging over (updated_at DESC, id ASC), served by the *_listing_idx / *_recent_idx
// indexes of migrations/0004_mention_content.sql. Parameters: $1 domain or NULL, $2 target hash
// (hex) or NULL, $3 state or NULL, $4 type or NULL, $5 cursor time (µs since the epoch) or NULL,
// $6 cursor id, $7 limit, $8 the caller's site binding.
// The binding is checked once per statement, not per row: by the domain asked for (every row has
// it), or by the target's site. A per-row `m.target_domain = ANY ($8)` made the planner trade the
// ordered index scan for reading and sorting every mention of the site; this way a bound caller's
// page costs what an unbound one's does, and outside the binding no mention row is read at all.
constexpr char kListWhere[] =
    "WHERE ($1::text IS NULL OR m.target_domain = $1) "
    "  AND ($2::text IS NULL OR m.target_hash = decode($2, 'hex')) "
    "  AND ($3::text IS NULL OR m.state = $3) "
    "  AND ($4::text IS NULL OR m.type = $4) "
    "  AND ($8::text[] = '{}' OR CASE WHEN $1::text IS NOT NULL THEN $1::text = ANY ($8::text[]) "
    "       ELSE " PORTCULLIS_TARGET_SITE("$2") " = ANY ($8::text[]) END) "
    "  AND ($5::bigint IS NULL "
    "       OR m.updated_at < timestamptz 'epoch' + $5::bigint * interval '1 microsecond' "
    "       OR (m.updated_at = timestamptz 'epoch' + $5::bigint * interval '1 microsecond' "
    "           AND m.id > $6::uuid)) "
    "ORDER BY m.updated_at DESC, m.id "
    "LIMIT $7";

#undef PORTCULLIS_TARGET_SITE

std::optional<MentionState> ParseState(absl::string_view text) {
  if (text == "PENDING") {
    return MentionState::kPending;
  }
  if (text == "VERIFIED") {
    return MentionState::kVerified;
  }
  if (text == "FAILED") {
    return MentionState::kFailed;
  }
  return std::nullopt;
}

absl::Status UnknownState(absl::string_view text) {
  return absl::InternalError(absl::StrCat("mention has unknown state '", text, "'"));
}

const char* StateName(MentionState state) {
  switch (state) {
    case MentionState::kPending:
      return "PENDING";
    case MentionState::kVerified:
      return "VERIFIED";
    case MentionState::kFailed:
      return "FAILED";
  }
  return "PENDING";
}

std::vector<std::string> ReadTextArray(const pqxx::field& field) {
  std::vector<std::string> values;
  pqxx::array_parser parser = field.as_array();
  for (auto [juncture, value] = parser.get_next(); juncture != pqxx::array_parser::done;
       std::tie(juncture, value) = parser.get_next()) {
    if (juncture == pqxx::array_parser::string_value) {
      values.push_back(std::move(value));
    }
  }
  return values;
}

// One row of kSelectMention; the state is parsed by the caller (it may be unknown).
StoredMention ReadMention(const pqxx::row& row, std::string* state) {
  StoredMention mention;
  mention.mention_id = row[0].as<std::string>();
  mention.source = row[1].as<std::string>();
  mention.target = row[2].as<std::string>();
  *state = row[3].as<std::string>();
  mention.reason = row[4].as<std::string>();
  mention.created_at = absl::FromUnixMicros(row[5].as<int64_t>());
  mention.updated_at = absl::FromUnixMicros(row[6].as<int64_t>());
  MentionContent& content = mention.content;
  content.type = row[7].as<std::string>();
  content.rsvp = row[8].as<std::string>();
  content.author_name = row[9].as<std::string>();
  content.author_url = row[10].as<std::string>();
  content.author_photo = row[11].as<std::string>();
  content.author_note = row[12].as<std::string>();
  content.name = row[13].as<std::string>();
  content.published = row[14].as<std::string>();
  content.url = row[15].as<std::string>();
  content.content_text = row[16].as<std::string>();
  content.content_html = row[17].as<std::string>();
  content.content_truncated = row[18].as<bool>();
  if (!row[19].is_null()) {
    mention.verified_at = absl::FromUnixMicros(row[19].as<int64_t>());
  }
  mention.links_to_target_host = ReadTextArray(row[20]);
  mention.attempts = row[21].as<int>();
  return mention;
}

// A nullable text parameter.
std::optional<std::string> NullIfEmpty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// As a query parameter: NULL when unset (libpqxx 6 has no std::optional parameters).
const char* OrNull(const std::optional<std::string>& value) {
  return value ? value->c_str() : nullptr;
}

}  // namespace

void PgMentionStore::WakeWorkers() {
  // One caller at a time sends notifications while commits keep asking for one (at most
  // kMaxRounds, so no caller's answer waits on a stream of others); the others only ask.
  // Concurrent submissions thus share one notification, each sent after the commits that asked
  // for it. A request left when the sender stops goes with the next submission's; without one,
  // the workers' poll (--worker_poll_interval) finds the job.
  constexpr int kMaxRounds = 4;
  wake_requested_.store(true);
  for (int round = 0; round < kMaxRounds && wake_requested_.load() && !waking_.exchange(true);) {
    for (; round < kMaxRounds && wake_requested_.exchange(false); ++round) {
      const absl::Status status = pool_.Run("wake_workers", [](pqxx::connection& connection) {
        pqxx::nontransaction autocommit(connection);
        ExecPrepared(autocommit, kNotify);
      });
      if (!status.ok()) {
        round = kMaxRounds;  // The jobs are committed; the workers' poll finds them.
        break;
      }
    }
    waking_.store(false);
  }
}

absl::StatusOr<SubmitResult> PgMentionStore::Submit(const NewMention& mention) {
  SubmitResult result;
  std::string state;
  absl::Status refusal;
  const std::string& normalized_source =
      mention.normalized_source.empty() ? mention.source : mention.normalized_source;
  const std::string source_host = HostOfSerializedUrl(normalized_source);
  const std::string block_keys = TextArrayLiteral(DomainBlockKeys(source_host));
  const std::string source_hash = crypto::ToHex(mention.source_hash);
  const std::string target_hash = crypto::ToHex(mention.target_hash);
  const std::optional<std::string> target_domain = NullIfEmpty(mention.target_domain);
  absl::Status status = pool_.Run("submit_mention", [&](pqxx::connection& connection) {
    result = SubmitResult();
    refusal = absl::OkStatus();
    // The one-statement path (kSubmitFast); it returns when its answer is the whole answer.
    {
      pqxx::nontransaction autocommit(connection);
      const pqxx::row row = ExecPrepared1(
          autocommit, kSubmitFast, mention.target_domain, mention.normalized_target, block_keys,
          normalized_source, mention.source, mention.target, absl::StrCat("\\x", source_hash),
          absl::StrCat("\\x", target_hash), OrNull(target_domain), source_host,
          limits_.max_queue_length, limits_.max_pending_per_source_host);
      if (row[0].is_null()) {
        result.target = TargetMatch::kUnknownSite;
        return;
      }
      if (!row[0].as<bool>()) {
        result.target = TargetMatch::kUnknownResource;
        return;
      }
      if (!row[1].as<bool>()) {  // Not blocked.
        if (!row[2].is_null()) {
          result.mention_id = row[2].as<std::string>();
          result.created = true;
          result.queued = row[8].as<int64_t>() > 0;
          state = "PENDING";
          return;
        }
        if (row[3].is_null()) {  // Nothing inserted and nothing there: a limit, or a race.
          if (row[6].as<bool>()) {
            refusal = absl::UnavailableError("verification queue full, retry later");
            return;
          }
          if (row[7].as<bool>()) {
            refusal = absl::ResourceExhaustedError(
                "too many mentions from this source host are waiting for verification, retry "
                "later");
            return;
          }
        } else if (row[5].as<bool>()) {  // PENDING with its job: nothing changes.
          result.mention_id = row[3].as<std::string>();
          state = row[4].as<std::string>();
          return;
        }
      }
    }
    pqxx::work transaction(connection);
    const pqxx::result match =
        ExecPrepared(transaction, kMatchTarget, mention.target_domain, mention.normalized_target);
    if (match.empty()) {
      result.target = TargetMatch::kUnknownSite;
      return;
    }
    if (!match[0][0].as<bool>()) {
      result.target = TargetMatch::kUnknownResource;
      return;
    }
    if (ExecPrepared1(transaction, kSourceBlocked, mention.target_domain, block_keys,
                      normalized_source)[0]
            .as<bool>()) {
      const pqxx::row blocked =
          ExecPrepared1(transaction, kUpsertBlocked, mention.source, mention.target, source_hash,
                        target_hash, OrNull(target_domain));
      result.mention_id = blocked[0].as<std::string>();
      result.created = blocked[1].as<bool>();
      state = "FAILED";
      ExecPrepared0(transaction, kDropJob, result.mention_id);
      transaction.commit();
      return;
    }
    const pqxx::row row = ExecPrepared1(
        transaction, kUpsertPending, mention.source, mention.target, source_hash, target_hash,
        absl::ToInt64Microseconds(failed_retention_), OrNull(target_domain));
    result.mention_id = row[0].as<std::string>();
    state = row[1].as<std::string>();
    result.created = row[2].as<bool>();
    const bool retention_over = row[3].as<bool>();
    // Admission limits, before anything new is queued: a refusal rolls the insert back.
    if (result.created || (state == "FAILED" && retention_over)) {
      if (limits_.max_queue_length > 0 &&
          ExecPrepared1(transaction, kCountQueue, limits_.max_queue_length)[0].as<int64_t>() >=
              limits_.max_queue_length) {
        refusal = absl::UnavailableError("verification queue full, retry later");
        return;
      }
      if (limits_.max_pending_per_source_host > 0 &&
          ExecPrepared1(transaction, kCountPendingOfHost, source_host,
                        limits_.max_pending_per_source_host)[0]
                  .as<int64_t>() >= limits_.max_pending_per_source_host) {
        refusal = absl::ResourceExhaustedError(
            "too many mentions from this source host are waiting for verification, retry later");
        return;
      }
      ExecPrepared0(transaction, kSetSourceHost, result.mention_id, source_host);
    }
    // The lifecycle (DESIGN.md, issue 3 §5), decided under the row lock.
    if (result.created || state == "PENDING") {
      // A PENDING mention already has its job; the insert only repairs one that lost it.
      result.queued =
          ExecPrepared(transaction, kQueueVerify, result.mention_id).affected_rows() == 1;
    } else if (state == "VERIFIED") {
      result.queued =
          ExecPrepared(transaction, kQueueReverify, result.mention_id).affected_rows() == 1;
    } else if (state == "FAILED" && retention_over) {
      ExecPrepared0(transaction, kRestart, result.mention_id);
      state = "PENDING";
      result.queued =
          ExecPrepared(transaction, kQueueVerify, result.mention_id).affected_rows() == 1;
    }
    transaction.commit();
  });
  if (status.ok() && result.queued) {
    WakeWorkers();
  }
  if (!status.ok()) {
    return status;
  }
  if (!refusal.ok()) {
    return refusal;
  }
  if (result.target != TargetMatch::kServed) {
    return result;
  }
  const std::optional<MentionState> parsed = ParseState(state);
  if (!parsed) {
    return UnknownState(state);
  }
  result.state = *parsed;
  return result;
}

absl::StatusOr<StoredMention> PgMentionStore::Get(absl::string_view mention_id,
                                                  const SiteBinding& visible_sites) {
  if (!IsUuid(mention_id)) {
    return absl::InvalidArgumentError("mention id is not a UUID");
  }
  bool found = false;
  bool elsewhere = false;
  StoredMention mention;
  std::string state;
  absl::Status status = pool_.Run("get_mention", [&](pqxx::connection& connection) {
    found = false;
    elsewhere = false;
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows =
        transaction.exec_params(absl::StrCat(kSelectMention, kGetWhere), std::string(mention_id),
                                SiteBindingParameter(visible_sites));
    if (rows.empty()) {
      if (!visible_sites.empty()) {
        elsewhere =
            transaction.exec_params1(kMentionExists, std::string(mention_id))[0].as<bool>();
      }
      return;
    }
    found = true;
    mention = ReadMention(rows[0], &state);
  });
  if (!status.ok()) {
    return status;
  }
  if (elsewhere) {
    return absl::PermissionDeniedError("the mention is of a site the token is not bound to");
  }
  if (!found) {
    return absl::NotFoundError("no mention has this id");
  }
  const std::optional<MentionState> parsed = ParseState(state);
  if (!parsed) {
    return UnknownState(state);
  }
  mention.state = *parsed;
  return mention;
}

absl::StatusOr<MentionPage> PgMentionStore::List(const MentionQuery& query,
                                                 const SiteBinding& visible_sites) {
  if (query.domain.empty() == !query.target_hash.has_value()) {
    return absl::InvalidArgumentError("exactly one of domain and target is required");
  }
  if (!query.domain.empty() && !SiteVisible(visible_sites, query.domain)) {
    return SiteNotVisible(query.domain);
  }
  if (query.page_size < 1 || query.page_size > kMaxMentionPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must be from 1 to ", kMaxMentionPageSize));
  }
  std::optional<MentionCursor> cursor;
  if (!query.page_token.empty()) {
    absl::StatusOr<MentionCursor> decoded = DecodeMentionPageToken(query.page_token);
    if (!decoded.ok()) {
      return decoded.status();
    }
    cursor = *std::move(decoded);
  }
  const std::optional<std::string> domain = NullIfEmpty(query.domain);
  const std::optional<std::string> target_hash =
      query.target_hash ? std::optional<std::string>(crypto::ToHex(*query.target_hash))
                        : std::nullopt;
  const std::optional<std::string> state =
      query.state ? std::optional<std::string>(StateName(*query.state)) : std::nullopt;
  const std::optional<std::string> type = NullIfEmpty(query.type);
  const std::optional<std::string> after_time =
      cursor ? std::optional<std::string>(absl::StrCat(absl::ToUnixMicros(cursor->updated_at)))
             : std::nullopt;
  const std::string after_id = cursor ? cursor->mention_id : std::string(kNilUuid);

  const std::string binding = SiteBindingParameter(visible_sites);

  MentionPage page;
  std::vector<std::string> states;
  bool elsewhere = false;
  absl::Status status = pool_.Run("list_mentions", [&](pqxx::connection& connection) {
    page = MentionPage();
    states.clear();
    elsewhere = false;
    pqxx::nontransaction transaction(connection);
    // One more than asked for tells whether there is a next page.
    const pqxx::result rows = transaction.exec_params(
        absl::StrCat(kSelectMention, kListWhere), OrNull(domain), OrNull(target_hash),
        OrNull(state), OrNull(type), OrNull(after_time), after_id, query.page_size + 1, binding);
    for (const pqxx::row& row : rows) {
      std::string row_state;
      page.mentions.push_back(ReadMention(row, &row_state));
      states.push_back(std::move(row_state));
    }
    if (rows.empty() && target_hash && !visible_sites.empty()) {
      elsewhere = transaction.exec_params1(kTargetElsewhere, *target_hash, binding)[0].as<bool>();
    }
  });
  if (!status.ok()) {
    return status;
  }
  if (elsewhere) {
    return absl::PermissionDeniedError("the target is of a site the token is not bound to");
  }
  for (size_t i = 0; i < page.mentions.size(); ++i) {
    const std::optional<MentionState> parsed = ParseState(states[i]);
    if (!parsed) {
      return UnknownState(states[i]);
    }
    page.mentions[i].state = *parsed;
  }
  if (static_cast<int>(page.mentions.size()) > query.page_size) {
    page.mentions.resize(query.page_size);
    const StoredMention& last = page.mentions.back();
    page.next_page_token = EncodeMentionPageToken({last.updated_at, last.mention_id});
  }
  return page;
}

absl::Status PgMentionStore::Ping() {
  return pool_.Run("ping", [](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    transaction.exec1("SELECT 1");
  });
}

}  // namespace portcullis::verifier::store
