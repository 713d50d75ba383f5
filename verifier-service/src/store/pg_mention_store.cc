#include "verifier-service/src/store/pg_mention_store.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pqxx/array"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/mention_page_token.h"
#include "verifier-service/src/store/mention_row_sql.h"
#include "verifier-service/src/store/public_mentions_sql.h"
#include "verifier-service/src/store/site_binding_sql.h"
#include "verifier-service/src/store/source_block.h"

namespace portcullis::verifier::store {
namespace {

// Stands in for "no cursor" where a uuid parameter must still parse.
constexpr char kNilUuid[] = "00000000-0000-0000-0000-000000000000";

// The submission rules (MentionStore::Submit) as one family of statements over whole batches:
// every parameter is an array with one element per distinct pair of the batch, in the batch's
// order (pairs sorted by their hashes, so that concurrent batches lock rows in one order). Hashes
// travel as hex text and are decoded once per element. A pair is looked up by source_hash through
// the unique index, the target hash only filtered (`IS TRUE` keeps it out of the index
// conditions): otherwise a generic plan may pick mentions_target_recent_idx when statistics are
// stale or even, and read every mention of a popular target per pair.

// The stored row of pair `i` (m) and its job (j), each looked up by its index once per pair:
// LATERAL keeps the generic plan from hashing the whole mentions table per batch (seen: a
// sequential scan of mentions under MultiExecHash at the top of the profile).
#define PORTCULLIS_PAIR_AND_JOB(join, lock)                                                  \
  join " LATERAL (SELECT m.id, m.state, m.target_domain, m.updated_at FROM mentions m "      \
  "  WHERE m.source_hash = decode(i.shash, 'hex') "                                          \
  "    AND (m.target_hash = decode(i.thash, 'hex')) IS TRUE " lock ") m ON true "            \
  "LEFT JOIN LATERAL (SELECT j.mention_id, j.lease_owner FROM verification_jobs j "          \
  "  WHERE j.mention_id = m.id) j ON true "

// What the batch's pairs are, read without locking anything: whether the target is served
// (NULL: unknown site), whether the source is blocked for the target's site (a global entry or
// one of the site's; DOMAIN entries by the source host and its parent domains, a text[] literal
// per pair in $6; PREFIX entries by the normalized source), and the stored pair if any, with its
// job. Parameters: $1 target domains, $2 normalized targets, $3 normalized sources, $4 source
// hashes, $5 target hashes, $6 block keys, $7 failure retention (µs).
// Columns: n, served, blocked, id, state, target domain missing, has job, job running,
// failure retention over, erased.
// Blocks and erasures are each looked at per pair only when the table has a row at all (an
// uncorrelated InitPlan, read once per batch; AND stops at false): most installations have none
// of one or both, and the two per-pair lookups were a third of the statement (issue 21).
// Erased (issue 17): whether a tombstone (erasure_store.h) of the pair's source hash or of its
// source host (the first block key) is there for the target's site or for every site. It is one
// more index lookup inside this statement (erasures' unique index leads with key_hash; the salt
// is an InitPlan read once per batch), not a round trip per item. The salt is read `WHERE
// singleton`, by its primary key: on the writers' connections (enable_seqscan off) a bare read
// of the table was costed as a disabled sequential scan, which pushed the plan over JIT's
// threshold and cost ~0.5 s of compilation per execution.
constexpr PgStatement kResolveBatch{
    "mention_batch_resolve",
    "SELECT i.n, "
    "  CASE WHEN s.id IS NULL THEN NULL ELSE "
    "    EXISTS (SELECT 1 FROM targets t WHERE t.url = i.ntarget AND t.kind = 'EXACT' "
    "              AND t.site_id = s.id) "
    "    OR EXISTS (SELECT 1 FROM targets t WHERE t.site_id = s.id AND t.kind = 'PREFIX' "
    "              AND starts_with(i.ntarget, t.url)) END, "
    "  (SELECT EXISTS (SELECT 1 FROM source_blocks)) AND EXISTS (SELECT 1 FROM source_blocks b "
    "    WHERE (b.site_id IS NULL OR b.site_id = s.id) "
    "      AND ((b.kind = 'DOMAIN' AND b.value = ANY (i.keys::text[])) "
    "        OR (b.kind = 'PREFIX' AND starts_with(i.nsource, b.value)))), "
    "  m.id::text, m.state, m.target_domain IS NULL, j.mention_id IS NOT NULL, "
    "  j.lease_owner IS NOT NULL, "
    "  m.updated_at <= now() - $7::bigint * interval '1 microsecond', "
    "  (SELECT EXISTS (SELECT 1 FROM erasures)) AND EXISTS (SELECT 1 FROM erasures e "
    "    WHERE e.key_hash IN (sha256((SELECT salt FROM erasure_salt WHERE singleton) || decode(i.shash, 'hex')), "
    "        sha256((SELECT salt FROM erasure_salt WHERE singleton) "
    "               || convert_to(coalesce((i.keys::text[])[1], ''), 'UTF8'))) "
    "      AND e.site_domain IN ('', i.domain)) "
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) "
    "  WITH ORDINALITY AS i(domain, ntarget, nsource, shash, thash, keys, n) "
    "LEFT JOIN sites s ON s.domain = i.domain "
    PORTCULLIS_PAIR_AND_JOB("LEFT JOIN", "")};

// The stored pairs whose lifecycle the batch changes, locked (in the batch's order) until commit,
// so that concurrent submissions of one pair decide one after another. $1 source hashes, $2
// target hashes, $3 failure retention (µs). Columns: n, id, state, target domain missing, has
// job, job running, failure retention over.
constexpr PgStatement kLockBatch{
    "mention_batch_lock",
    "SELECT i.n, m.id::text, m.state, m.target_domain IS NULL, j.mention_id IS NOT NULL, "
    "  j.lease_owner IS NOT NULL, "
    "  m.updated_at <= now() - $3::bigint * interval '1 microsecond' "
    "FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS i(shash, thash, n) "
    PORTCULLIS_PAIR_AND_JOB("JOIN", "FOR UPDATE") "ORDER BY i.n"};

#undef PORTCULLIS_PAIR_AND_JOB

// New pairs with their first jobs. The ids are made by the caller (time-ordered, so that new rows
// land at the right edge of the primary key's index). A pair inserted meanwhile by another
// transaction is skipped (its id is not returned) and decided under its lock instead.
// $1 ids, $2 sources, $3 targets, $4 source hashes, $5 target hashes, $6 target domains ('' for
// none), $7 source hosts, $8 normalized sources.
constexpr PgStatement kInsertBatch{
    "mention_batch_insert",
    "WITH ins AS ("
    "  INSERT INTO mentions (id, source, target, source_hash, target_hash, target_domain, "
    "    source_host, source_normalized) "
    "  SELECT i.id, i.source, i.target, decode(i.shash, 'hex'), decode(i.thash, 'hex'), "
    "    nullif(i.domain, ''), i.host, i.nsource "
    "  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], "
    "    $7::text[], $8::text[]) AS i(id, source, target, shash, thash, domain, host, nsource) "
    "  ON CONFLICT (source_hash, target_hash) DO NOTHING "
    "  RETURNING id), "
    "job AS (INSERT INTO verification_jobs (mention_id, kind) SELECT id, 'VERIFY' FROM ins) "
    "SELECT id::text FROM ins"};

// Blocked sources: the pairs are FAILED `blocked` (updated_at moves only when that is news) and
// lose their jobs, so nothing fetches them (a running job loses its lease: its worker's Finish
// finds the job gone and drops its outcome). $1 sources, $2 targets, $3 source hashes, $4 target
// hashes, $5 target domains. Columns: source hash, target hash (hex), id, created.
constexpr PgStatement kBlockBatch{
    "mention_batch_block",
    "WITH up AS ("
    "  INSERT INTO mentions (source, target, source_hash, target_hash, target_domain, state, "
    "    reason) "
    "  SELECT i.source, i.target, decode(i.shash, 'hex'), decode(i.thash, 'hex'), "
    "    nullif(i.domain, ''), 'FAILED', 'blocked' "
    "  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) "
    "    AS i(source, target, shash, thash, domain) "
    "  ON CONFLICT (source_hash, target_hash) DO UPDATE SET state = 'FAILED', "
    "    reason = 'blocked', links_to_target_host = '{}', "
    "    updated_at = CASE WHEN mentions.state = 'FAILED' AND mentions.reason = 'blocked' "
    "      THEN mentions.updated_at ELSE now() END "
    "  RETURNING id, source_hash, target_hash, (xmax = 0) AS created), "
    "gone AS (DELETE FROM verification_jobs j USING up WHERE j.mention_id = up.id) "
    "SELECT encode(source_hash, 'hex'), encode(target_hash, 'hex'), id::text, created FROM up"};

// Erased sources (issue 17): as kBlockBatch with the reason `erased`, and whatever the pair
// held of its source's content and author is cleared (a re-send stores nothing of the person).
constexpr PgStatement kEraseBatch{
    "mention_batch_erased",
    "WITH up AS ("
    "  INSERT INTO mentions (source, target, source_hash, target_hash, target_domain, state, "
    "    reason) "
    "  SELECT i.source, i.target, decode(i.shash, 'hex'), decode(i.thash, 'hex'), "
    "    nullif(i.domain, ''), 'FAILED', 'erased' "
    "  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) "
    "    AS i(source, target, shash, thash, domain) "
    "  ON CONFLICT (source_hash, target_hash) DO UPDATE SET state = 'FAILED', "
    "    reason = 'erased', links_to_target_host = '{}', type = NULL, rsvp = NULL, "
    "    author_name = NULL, author_url = NULL, author_photo = NULL, author_note = NULL, "
    "    entry_name = NULL, published = NULL, url = NULL, content_text = NULL, "
    "    content_html = NULL, content_truncated = false, verified_at = NULL, "
    "    updated_at = CASE WHEN mentions.state = 'FAILED' AND mentions.reason = 'erased' "
    "      THEN mentions.updated_at ELSE now() END "
    "  RETURNING id, source_hash, target_hash, (xmax = 0) AS created), "
    "gone AS (DELETE FROM verification_jobs j USING up WHERE j.mention_id = up.id) "
    "SELECT encode(source_hash, 'hex'), encode(target_hash, 'hex'), id::text, created FROM up"};

// Mentions stored before target_domain existed get it. $1 ids, $2 target domains.
constexpr PgStatement kSetDomainBatch{
    "mention_batch_set_domain",
    "UPDATE mentions m SET target_domain = u.domain "
    "FROM unnest($1::uuid[], $2::text[]) AS u(id, domain) "
    "WHERE m.id = u.id AND m.target_domain IS NULL"};

// FAILED mentions past the failure retention start again. $1 ids, $2 source hosts.
constexpr PgStatement kRestartBatch{
    "mention_batch_restart",
    "UPDATE mentions m SET state = 'PENDING', reason = NULL, links_to_target_host = '{}', "
    "  updated_at = now(), source_host = u.host "
    "FROM unnest($1::uuid[], $2::text[]) AS u(id, host) WHERE m.id = u.id"};

// Jobs for existing mentions ($1 ids, $2 kinds): a mention without one gets it; one whose job is
// running gets one more run when it finishes; one whose job is queued keeps that one (not
// returned). Returns the ids of the mentions queued.
constexpr PgStatement kQueueBatch{
    "mention_batch_queue",
    "INSERT INTO verification_jobs (mention_id, kind) "
    "SELECT * FROM unnest($1::uuid[], $2::text[]) "
    "ON CONFLICT (mention_id) DO UPDATE SET rerun = true "
    "WHERE verification_jobs.lease_owner IS NOT NULL "
    "RETURNING mention_id::text"};

// The admission counts (AdmissionCounters), each counted only up to its limit.
constexpr PgStatement kCountQueue{
    "mention_batch_count_queue",
    "SELECT count(*) FROM (SELECT 1 FROM verification_jobs LIMIT $1) q"};
constexpr PgStatement kCountPendingOfHosts{
    "mention_batch_count_pending_of_hosts",
    "SELECT h, (SELECT count(*) FROM (SELECT 1 FROM mentions WHERE source_host = h "
    "  AND state = 'PENDING' LIMIT $2) q) FROM unnest($1::text[]) AS h"};

// Wakes the workers (LISTEN portcullis_verification_jobs), once per batch that queued anything,
// in its own transaction after the batch committed: a transaction that notifies holds
// PostgreSQL's notification lock from before its commit until after its WAL flush, so notifying
// inside the batch would serialize the commits of concurrent batches.
constexpr PgStatement kNotify{"mention_batch_notify",
                              "SELECT pg_notify('portcullis_verification_jobs', '')"};

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
// $6 cursor id, $7 limit, $8 the caller's site binding, $9 review state or NULL, $10 whether
// only what the public sees (public_mentions_sql.h).
// The binding is checked once per statement, not per row: by the domain asked for (every row has
// it), or by the target's site. A per-row `m.target_domain = ANY ($8)` made the planner trade the
// ordered index scan for reading and sorting every mention of the site; this way a bound caller's
// page costs what an unbound one's does, and outside the binding no mention row is read at all.
// The cursor's `updated_at <=` repeats what the OR after it implies: the OR is only a Filter, so
// page N read every row before it (786 ms 100,000 rows deep), while the bound starts the index
// scan at the cursor (2.5 ms at the same depth).
constexpr char kListWhere[] =
    "WHERE ($1::text IS NULL OR m.target_domain = $1) "
    "  AND ($2::text IS NULL OR m.target_hash = decode($2, 'hex')) "
    "  AND ($3::text IS NULL OR m.state = $3) "
    "  AND ($4::text IS NULL OR m.type = $4) "
    "  AND ($9::text IS NULL OR m.review = $9) "
    "  AND (NOT $10::boolean OR " PORTCULLIS_MENTION_SHOWN ") "
    "  AND ($8::text[] = '{}' OR CASE WHEN $1::text IS NOT NULL THEN $1::text = ANY ($8::text[]) "
    "       ELSE " PORTCULLIS_TARGET_SITE("$2") " = ANY ($8::text[]) END) "
    "  AND ($5::bigint IS NULL "
    "       OR m.updated_at <= timestamptz 'epoch' + $5::bigint * interval '1 microsecond') "
    "  AND ($5::bigint IS NULL "
    "       OR m.updated_at < timestamptz 'epoch' + $5::bigint * interval '1 microsecond' "
    "       OR (m.updated_at = timestamptz 'epoch' + $5::bigint * interval '1 microsecond' "
    "           AND m.id > $6::uuid)) "
    "ORDER BY m.updated_at DESC, m.id "
    "LIMIT $7";

#undef PORTCULLIS_TARGET_SITE

// A nullable text parameter.
std::optional<std::string> NullIfEmpty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// As a query parameter: NULL when unset (libpqxx 6 has no std::optional parameters).
const char* OrNull(const std::optional<std::string>& value) {
  return value ? value->c_str() : nullptr;
}

// A time-ordered UUID (version 7: milliseconds since the epoch, then random bits), so that new
// mentions are appended to the primary key's index instead of landing on a random page of it.
std::string NewTimeOrderedUuid() {
  thread_local absl::BitGen random;
  const uint64_t millis = static_cast<uint64_t>(absl::ToUnixMillis(absl::Now()));
  const uint64_t high = (millis << 16) | 0x7000 | absl::Uniform<uint64_t>(random, 0, 0x1000);
  const uint64_t low = 0x8000000000000000ULL | (absl::Uniform<uint64_t>(random) >> 2);
  const std::string hex = absl::StrFormat("%016x%016x", high, low);
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20, 12));
}

// A stored pair as kResolveBatch and kLockBatch read it, from column `first` on.
struct StoredPair {
  std::string id;
  std::string state;
  bool domain_missing = false;
  bool has_job = false;
  bool job_running = false;
  bool retention_over = false;
};

StoredPair ReadStoredPair(const pqxx::row& row, int first) {
  return {row[first].as<std::string>(), row[first + 1].as<std::string>(),
          row[first + 2].as<bool>(),     row[first + 3].as<bool>(),
          row[first + 4].as<bool>(),     row[first + 5].as<bool>()};
}

// One distinct (source, target) pair of a batch, and what the batch decided for it.
struct BatchPair {
  const NewMention* mention = nullptr;
  std::string normalized_source;
  std::string source_host;
  std::string source_hash;  // Hex.
  std::string target_hash;  // Hex.
  std::vector<size_t> callers;  // Positions in the batch; the first is answered as the submitter.
  bool decided = false;
  absl::Status refusal;  // An admission limit.
  SubmitResult result;
  std::string state;  // The mention's state after the batch.
};

// Whether submitting the stored pair again changes anything (MentionStore::Submit's lifecycle);
// when not, the unlocked read is the whole answer.
bool SubmissionChanges(const StoredPair& stored, bool has_domain) {
  if (stored.domain_missing && has_domain) {
    return true;
  }
  if (stored.state == "PENDING") {
    return !stored.has_job || stored.job_running;
  }
  if (stored.state == "FAILED") {
    return stored.retention_over;
  }
  return stored.state == "VERIFIED";
}

// The statements' array parameters, one element per pair of `pairs` (chosen by `indices`).
template <typename Field>
std::string ArrayOf(const std::vector<BatchPair>& pairs, const std::vector<size_t>& indices,
                    Field field) {
  std::vector<std::string> values;
  values.reserve(indices.size());
  for (const size_t i : indices) {
    values.push_back(field(pairs[i]));
  }
  return TextArrayLiteral(values);
}

std::string SourceHashOf(const BatchPair& pair) { return pair.source_hash; }
std::string TargetHashOf(const BatchPair& pair) { return pair.target_hash; }
std::string DomainOf(const BatchPair& pair) { return pair.mention->target_domain; }
std::string HostOf(const BatchPair& pair) { return pair.source_host; }

bool ChangeLocked(pqxx::work& transaction, std::vector<BatchPair>& pairs,
                  const std::vector<size_t>& indices, int64_t retention,
                  AdmissionCounters::Batch& admissions, std::vector<size_t>* vanished);

// Decides every pair of the batch in one transaction, committed before it returns; true when a
// job was queued.
bool DecideBatch(pqxx::connection& connection, std::vector<BatchPair>& pairs,
                 absl::Duration failed_retention, AdmissionCounters& counters,
                 AdmissionCounters::Batch& admissions) {
  const int64_t retention = absl::ToInt64Microseconds(failed_retention);
  const SubmitLimits& limits = counters.limits();
  pqxx::work transaction(connection);

  std::vector<size_t> all(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    all[i] = i;
  }
  // The admission counts this batch decides against, read when they are older than allowed.
  const absl::Time now = absl::Now();
  if (limits.max_queue_length > 0 && counters.ClaimQueueRefresh(now)) {
    counters.SetQueueLength(
        ExecPrepared1(transaction, kCountQueue, limits.max_queue_length)[0].as<int64_t>(), now);
  }
  if (limits.max_pending_per_source_host > 0) {
    std::vector<std::string> stale;
    for (const BatchPair& pair : pairs) {
      if (counters.HostStale(pair.source_host, now) &&
          std::find(stale.begin(), stale.end(), pair.source_host) == stale.end()) {
        stale.push_back(pair.source_host);
      }
    }
    if (!stale.empty()) {
      for (const pqxx::row& row : ExecPrepared(transaction, kCountPendingOfHosts,
                                               TextArrayLiteral(stale),
                                               limits.max_pending_per_source_host)) {
        counters.SetPendingOfHost(row[0].as<std::string>(), row[1].as<int64_t>(), now);
      }
    }
  }

  // 1. What each pair is, unlocked; most submissions are decided here.
  std::vector<size_t> blocked, erased, fresh, changing;
  const pqxx::result resolved = ExecPrepared(
      transaction, kResolveBatch, ArrayOf(pairs, all, DomainOf),
      ArrayOf(pairs, all, [](const BatchPair& p) { return p.mention->normalized_target; }),
      ArrayOf(pairs, all, [](const BatchPair& p) { return p.normalized_source; }),
      ArrayOf(pairs, all, SourceHashOf), ArrayOf(pairs, all, TargetHashOf),
      ArrayOf(pairs, all,
              [](const BatchPair& p) { return TextArrayLiteral(DomainBlockKeys(p.source_host)); }),
      retention);
  for (const pqxx::row& row : resolved) {
    const size_t i = row[0].as<size_t>() - 1;
    BatchPair& pair = pairs[i];
    if (row[1].is_null() || !row[1].as<bool>()) {
      pair.result.target =
          row[1].is_null() ? TargetMatch::kUnknownSite : TargetMatch::kUnknownResource;
      pair.decided = true;
    } else if (row[2].as<bool>()) {
      blocked.push_back(i);
    } else if (row[9].as<bool>()) {
      erased.push_back(i);
    } else if (row[3].is_null()) {
      fresh.push_back(i);
    } else {
      const StoredPair stored = ReadStoredPair(row, 3);
      if (SubmissionChanges(stored, !pair.mention->target_domain.empty())) {
        changing.push_back(i);
      } else {
        pair.result.mention_id = stored.id;
        pair.state = stored.state;
        pair.decided = true;
      }
    }
  }

  // 2. Blocked sources, then erased ones: FAILED without a job (one statement each, run only
  // when the batch has such pairs).
  for (const auto& [failing, statement] :
       {std::pair<const std::vector<size_t>*, const PgStatement*>{&blocked, &kBlockBatch},
        {&erased, &kEraseBatch}}) {
    if (failing->empty()) {
      continue;
    }
    std::map<std::pair<std::string, std::string>, size_t> by_key;
    for (const size_t i : *failing) {
      by_key[{pairs[i].source_hash, pairs[i].target_hash}] = i;
    }
    for (const pqxx::row& row : ExecPrepared(
             transaction, *statement,
             ArrayOf(pairs, *failing, [](const BatchPair& p) { return p.mention->source; }),
             ArrayOf(pairs, *failing, [](const BatchPair& p) { return p.mention->target; }),
             ArrayOf(pairs, *failing, SourceHashOf), ArrayOf(pairs, *failing, TargetHashOf),
             ArrayOf(pairs, *failing, DomainOf))) {
      BatchPair& pair = pairs[by_key.at({row[0].as<std::string>(), row[1].as<std::string>()})];
      pair.result.mention_id = row[2].as<std::string>();
      pair.result.created = row[3].as<bool>();
      pair.state = "FAILED";
      pair.decided = true;
    }
  }

  // 3. Stored pairs that change, under their locks; then new pairs. A new pair another
  // transaction inserted meanwhile is locked and decided in a second round; one that vanished
  // between the read and its lock is inserted.
  bool queued = false;
  for (int round = 0; round < 2 && (!changing.empty() || !fresh.empty()); ++round) {
    std::vector<size_t> vanished;
    if (!changing.empty()) {
      queued |= ChangeLocked(transaction, pairs, changing, retention, admissions, &vanished);
    }
    for (const size_t i : fresh) {
      if (absl::Status admitted = admissions.Admit(pairs[i].source_host); !admitted.ok()) {
        pairs[i].refusal = std::move(admitted);
        pairs[i].decided = true;
      }
    }
    std::erase_if(fresh, [&](size_t i) { return pairs[i].decided; });
    changing.clear();
    if (!fresh.empty()) {
      std::vector<std::string> ids;
      for (const size_t i : fresh) {
        pairs[i].result.mention_id = NewTimeOrderedUuid();
        ids.push_back(pairs[i].result.mention_id);
      }
      std::set<std::string> inserted;
      for (const pqxx::row& row : ExecPrepared(
               transaction, kInsertBatch, TextArrayLiteral(ids),
               ArrayOf(pairs, fresh, [](const BatchPair& p) { return p.mention->source; }),
               ArrayOf(pairs, fresh, [](const BatchPair& p) { return p.mention->target; }),
               ArrayOf(pairs, fresh, SourceHashOf), ArrayOf(pairs, fresh, TargetHashOf),
               ArrayOf(pairs, fresh, DomainOf), ArrayOf(pairs, fresh, HostOf),
               ArrayOf(pairs, fresh, [](const BatchPair& p) { return p.normalized_source; }))) {
        inserted.insert(row[0].as<std::string>());
      }
      for (const size_t i : fresh) {
        BatchPair& pair = pairs[i];
        if (inserted.count(pair.result.mention_id) > 0) {
          pair.result.created = true;
          pair.result.queued = true;
          pair.state = "PENDING";
          pair.decided = true;
          queued = true;
        } else {
          pair.result.mention_id.clear();
          changing.push_back(i);
        }
      }
    }
    fresh = std::move(vanished);
  }
  transaction.commit();
  return queued;
}

// The stored pairs at `indices`, locked, and their lifecycle changes; those not found (removed
// since the unlocked read) are added to `vanished`. True when a job was queued.
bool ChangeLocked(pqxx::work& transaction, std::vector<BatchPair>& pairs,
                  const std::vector<size_t>& indices, int64_t retention,
                  AdmissionCounters::Batch& admissions, std::vector<size_t>* vanished) {
  std::vector<bool> found(indices.size(), false);
  std::vector<std::string> domain_ids, domains, restart_ids, restart_hosts, queue_ids, queue_kinds;
  std::map<std::string, size_t> by_id;
  for (const pqxx::row& row :
       ExecPrepared(transaction, kLockBatch, ArrayOf(pairs, indices, SourceHashOf),
                    ArrayOf(pairs, indices, TargetHashOf), retention)) {
    const size_t k = row[0].as<size_t>() - 1;
    found[k] = true;
    BatchPair& pair = pairs[indices[k]];
    const StoredPair stored = ReadStoredPair(row, 1);
    pair.result.mention_id = stored.id;
    pair.state = stored.state;
    pair.decided = true;
    by_id[stored.id] = indices[k];
    if (stored.domain_missing && !pair.mention->target_domain.empty()) {
      domain_ids.push_back(stored.id);
      domains.push_back(pair.mention->target_domain);
    }
    if (stored.state == "PENDING" && (!stored.has_job || stored.job_running)) {
      queue_ids.push_back(stored.id);
      queue_kinds.push_back(stored.has_job ? "REVERIFY" : "VERIFY");
    } else if (stored.state == "VERIFIED") {
      queue_ids.push_back(stored.id);
      queue_kinds.push_back("REVERIFY");
    } else if (stored.state == "FAILED" && stored.retention_over) {
      if (absl::Status admitted = admissions.Admit(pair.source_host); !admitted.ok()) {
        pair.refusal = std::move(admitted);
        continue;
      }
      restart_ids.push_back(stored.id);
      restart_hosts.push_back(pair.source_host);
      queue_ids.push_back(stored.id);
      queue_kinds.push_back("VERIFY");
      pair.state = "PENDING";
    }
  }
  for (size_t k = 0; k < indices.size(); ++k) {
    if (!found[k]) {
      vanished->push_back(indices[k]);
    }
  }
  if (!domain_ids.empty()) {
    ExecPrepared0(transaction, kSetDomainBatch, TextArrayLiteral(domain_ids),
                  TextArrayLiteral(domains));
  }
  if (!restart_ids.empty()) {
    ExecPrepared0(transaction, kRestartBatch, TextArrayLiteral(restart_ids),
                  TextArrayLiteral(restart_hosts));
  }
  bool queued = false;
  if (!queue_ids.empty()) {
    for (const pqxx::row& row : ExecPrepared(transaction, kQueueBatch, TextArrayLiteral(queue_ids),
                                             TextArrayLiteral(queue_kinds))) {
      pairs[by_id.at(row[0].as<std::string>())].result.queued = true;
      queued = true;
    }
  }
  return queued;
}

}  // namespace

PgMentionStore::PgMentionStore(PgConnectionPool& pool, absl::Duration failed_retention)
    : pool_(pool),
      failed_retention_(failed_retention),
      admission_(std::make_unique<AdmissionCounters>(SubmitLimits())) {}

PgMentionStore::~PgMentionStore() = default;

void PgMentionStore::SetLimits(SubmitLimits limits) {
  admission_ = std::make_unique<AdmissionCounters>(limits);
}

absl::StatusOr<SubmitResult> PgMentionStore::Submit(const NewMention& mention) {
  std::vector<absl::StatusOr<SubmitResult>> results;
  const absl::Status status = pool_.Run("submit_mention", [&](pqxx::connection& connection) {
    results = SubmitBatch(connection, absl::MakeConstSpan(&mention, 1));
  });
  if (!status.ok()) {
    return status;
  }
  return std::move(results.front());
}

std::vector<absl::StatusOr<SubmitResult>> PgMentionStore::SubmitBatch(
    pqxx::connection& connection, absl::Span<const NewMention> batch) {
  // The distinct pairs, in the order of their hashes (the order rows are locked in).
  std::vector<BatchPair> pairs;
  {
    std::map<std::pair<std::string, std::string>, size_t> by_key;
    for (size_t i = 0; i < batch.size(); ++i) {
      const NewMention& mention = batch[i];
      auto [it, added] = by_key.try_emplace(
          {crypto::ToHex(mention.source_hash), crypto::ToHex(mention.target_hash)}, pairs.size());
      if (added) {
        BatchPair& pair = pairs.emplace_back();
        pair.mention = &mention;
        pair.normalized_source =
            mention.normalized_source.empty() ? mention.source : mention.normalized_source;
        pair.source_host = HostOfSerializedUrl(pair.normalized_source);
        pair.source_hash = it->first.first;
        pair.target_hash = it->first.second;
      }
      pairs[it->second].callers.push_back(i);
    }
    std::vector<BatchPair> sorted;
    sorted.reserve(pairs.size());
    for (const auto& [key, index] : by_key) {
      sorted.push_back(std::move(pairs[index]));
    }
    pairs = std::move(sorted);
  }

  // Concurrent batches that insert and lock overlapping pairs can deadlock across statements;
  // PostgreSQL then aborts one of them, which runs again (nothing of it was committed).
  constexpr int kDeadlockAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    for (BatchPair& pair : pairs) {
      pair.decided = false;
      pair.refusal = absl::OkStatus();
      pair.result = SubmitResult();
      pair.state.clear();
    }
    AdmissionCounters::Batch admissions = admission_->StartBatch();
    bool queued = false;
    try {
      queued = DecideBatch(connection, pairs, failed_retention_, *admission_, admissions);
    } catch (const pqxx::deadlock_detected&) {
      if (attempt == kDeadlockAttempts) {
        throw;
      }
      continue;
    }
    admission_->Commit(admissions);
    if (queued) {
      pqxx::nontransaction autocommit(connection);
      ExecPrepared(autocommit, kNotify);
    }
    break;
  }

  std::vector<absl::StatusOr<SubmitResult>> results(batch.size(), SubmitResult());
  for (const BatchPair& pair : pairs) {
    absl::StatusOr<SubmitResult> answer = pair.result;
    if (!pair.refusal.ok()) {
      answer = pair.refusal;
    } else if (!pair.decided) {  // Its row came and went under the batch twice.
      answer = absl::UnavailableError("mention changed concurrently, retry later");
    } else if (pair.result.target == TargetMatch::kServed) {
      const std::optional<MentionState> parsed = ParseState(pair.state);
      if (parsed) {
        answer->state = *parsed;
      } else {
        answer = UnknownState(pair.state);
      }
    }
    for (size_t k = 0; k < pair.callers.size(); ++k) {
      results[pair.callers[k]] = answer;
      if (k == 0 || !answer.ok()) {
        continue;
      }
      // The same pair again in one batch: as if submitted right after the first.
      results[pair.callers[k]]->created = false;
      results[pair.callers[k]]->queued = false;
    }
  }
  return results;
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
    mention = ReadMentionRow(rows[0], &state);
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
  const std::optional<std::string> review = NullIfEmpty(query.review);
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
        OrNull(state), OrNull(type), OrNull(after_time), after_id, query.page_size + 1, binding,
        OrNull(review), query.shown_only);
    for (const pqxx::row& row : rows) {
      std::string row_state;
      page.mentions.push_back(ReadMentionRow(row, &row_state));
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
