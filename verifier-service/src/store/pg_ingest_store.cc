#include "verifier-service/src/store/pg_ingest_store.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "boost/json/array.hpp"
#include "boost/json/object.hpp"
#include "boost/json/parse.hpp"
#include "boost/json/serialize.hpp"
#include "pqxx/binarystring"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "common/status/status_macros.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {
namespace {

#define PORTCULLIS_MICROS(column) "(extract(epoch FROM " column ") * 1000000)::bigint"
// A bigint parameter of Unix microseconds as a timestamptz, exactly.
#define PORTCULLIS_TIME(param) "('epoch'::timestamptz + " param "::bigint * interval '1 microsecond')"

#define PORTCULLIS_DECISION_COLUMNS                                                         \
  "item_id, decision, reason, signature_valid, coalesce(dead_letter_id::text, ''), "         \
  PORTCULLIS_MICROS("decided_at") ", " PORTCULLIS_MICROS("expires_at") " "

// Every statement is prepared once per connection (PgStatement): parsing and planning were a
// large part of an ingest's database CPU.
constexpr PgStatement kFindDecision{
    "ingest_find_decision",
    "SELECT " PORTCULLIS_DECISION_COLUMNS
    "FROM ingest_decisions WHERE publisher = $1 AND content_hash = $2 "
    "AND expires_at > " PORTCULLIS_TIME("$3")};

// Whether a new decision (`valid`: its signature_valid) may replace the stored decision `d`: it
// expired by `now`, a valid signature over an unsigned refusal, or the replay of the stored
// quarantine (`replay`, a dead letter id as text). The one rule for the upserts below and for the
// read that answers repeats (kStayingDecisions).
#define PORTCULLIS_DECISION_REPLACES(valid, now, replay)                                \
  "(d.expires_at <= " now " "                                                          \
  "   OR (" valid " AND NOT d.signature_valid AND d.decision <> 'accepted') "            \
  "   OR (d.dead_letter_id IS NOT NULL AND d.dead_letter_id::text = " replay ")) "

// One statement decides between concurrent deliveries of one key: the primary key serializes
// them, and the WHERE of DO UPDATE (re-checked against the latest committed row) says whether
// this delivery may replace what is there. No row returned: it may not (a duplicate). One rule
// for the single and the batch statements.
#define PORTCULLIS_DECISION_REPLACE(now, replay)                                              \
  "ON CONFLICT (publisher, content_hash) DO UPDATE SET item_id = EXCLUDED.item_id, "          \
  "  decision = EXCLUDED.decision, reason = EXCLUDED.reason, "                                 \
  "  signature_valid = EXCLUDED.signature_valid, dead_letter_id = EXCLUDED.dead_letter_id, "   \
  "  decided_at = EXCLUDED.decided_at, expires_at = EXCLUDED.expires_at "                      \
  "WHERE " PORTCULLIS_DECISION_REPLACES("EXCLUDED.signature_valid", now, replay)

// $7: the dead letter being replayed ('' when none); a quarantine gets a fresh dead letter id
// unless it is that replay's.
#define PORTCULLIS_UPSERT_DECISION                                                            \
  "INSERT INTO ingest_decisions AS d (publisher, content_hash, item_id, decision, reason, "    \
  "  signature_valid, dead_letter_id, decided_at, expires_at) "                                \
  "VALUES ($1, $2, $3, $4, $5, $6, "                                                          \
  "  CASE WHEN $4 = 'quarantined' THEN coalesce(nullif($7, '')::uuid, gen_random_uuid()) END, " \
  "  " PORTCULLIS_TIME("$8") ", " PORTCULLIS_TIME("$9") ") "                                   \
  PORTCULLIS_DECISION_REPLACE(PORTCULLIS_TIME("$10"), "$7")

constexpr PgStatement kUpsertDecision{
    "ingest_upsert_decision",
    PORTCULLIS_UPSERT_DECISION "RETURNING coalesce(d.dead_letter_id::text, '')"};

constexpr PgStatement kReadDecision{
    "ingest_read_decision",
    "SELECT " PORTCULLIS_DECISION_COLUMNS
    "FROM ingest_decisions WHERE publisher = $1 AND content_hash = $2"};

// The outbox's order. Cursors come from a sequence when an item is inserted, but transactions
// commit in another order; a consumer that has read cursor N must never later find a smaller one.
// So every transaction that inserts an item holds this advisory lock SHARED from before it takes
// its cursor until it commits (inserters do not wait for each other), and ListAcceptedItems takes
// it EXCLUSIVE before it reads: that waits until every transaction holding a cursor taken so far
// has committed (or rolled back), and every cursor taken after is larger than all of those. (It
// was one exclusive lock per insert, which made every accepted item wait for the previous
// commit.)
#define PORTCULLIS_OUTBOX_LOCK_KEY "7243305411720019201"
constexpr PgStatement kOutboxInsertLock{
    "ingest_outbox_insert_lock",
    "SELECT pg_advisory_xact_lock_shared(" PORTCULLIS_OUTBOX_LOCK_KEY ")"};
constexpr PgStatement kOutboxReadBarrier{
    "ingest_outbox_read_barrier", "SELECT pg_advisory_xact_lock(" PORTCULLIS_OUTBOX_LOCK_KEY ")"};

constexpr PgStatement kInsertItem{
    "ingest_insert_item",
    "INSERT INTO ingest_items (publisher, item_id, content_hash, canonical_body, "
    "signature_valid, media) VALUES ($1, $2, $3, $4, $5, nullif($6, '')::jsonb)"};

// An accepted item's quarantined copies (a validly signed delivery replaced their quarantine,
// or it expired) have nothing left to decide.
constexpr PgStatement kDeleteMootDeadLetters{
    "ingest_delete_moot_dead_letters",
    "DELETE FROM dead_letters WHERE publisher = $1 AND content_hash = $2"};

// Plain decisions (no replay, no re-evaluation, not quarantined) of distinct keys, a whole batch
// in ONE statement (issue 21): the upserts above, each judged at its own `now`; if any accepted
// decision was recorded, the outbox lock (shared; the materialized CTE `l` is read before any
// item's cursor is drawn, so the lock is held before the cursors exist), the accepted items, in
// the batch's order, and their moot dead letters. Every parameter is an array with one element
// per decision: $1 publishers, $2 content hashes, $3 item ids, $4 decisions, $5 reasons,
// $6 signature_valid, $7 decided_at, $8 expires_at, $9 now (Unix µs), $10 canonical bodies (hex),
// $11 media verifications (MediaJson, '' for none). Answers the positions (1-based) of the
// decisions recorded; the others lost to a decision that stays.
constexpr PgStatement kRecordDecisions{
    "ingest_record_decisions",
    "WITH i AS MATERIALIZED (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], "
    "    $4::text[], $5::text[], $6::boolean[], $7::bigint[], $8::bigint[], $9::bigint[], "
    "    $10::text[], $11::text[]) WITH ORDINALITY AS i(publisher, content_hash, item_id, "
    "    decision, reason, signature_valid, decided_at, expires_at, now, body, media, n)), "
    "d AS (INSERT INTO ingest_decisions AS d (publisher, content_hash, item_id, decision, "
    "    reason, signature_valid, decided_at, expires_at) "
    "  SELECT publisher, content_hash, item_id, decision, reason, signature_valid, "
    "    " PORTCULLIS_TIME("decided_at") ", " PORTCULLIS_TIME("expires_at") " FROM i ORDER BY n "
    PORTCULLIS_DECISION_REPLACE(
        "(SELECT " PORTCULLIS_TIME("x.now") " FROM i x WHERE x.publisher = EXCLUDED.publisher "
        "AND x.content_hash = EXCLUDED.content_hash)", "''")
    "  RETURNING d.publisher, d.content_hash), "
    "l AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(" PORTCULLIS_OUTBOX_LOCK_KEY ") "
    "  WHERE EXISTS (SELECT 1 FROM d JOIN i USING (publisher, content_hash) "
    "    WHERE i.decision = 'accepted')), "
    "it AS (INSERT INTO ingest_items (publisher, item_id, content_hash, canonical_body, "
    "    signature_valid, media) "
    "  SELECT i.publisher, i.item_id, i.content_hash, decode(i.body, 'hex'), i.signature_valid, "
    "    nullif(i.media, '')::jsonb "
    "  FROM l, d JOIN i USING (publisher, content_hash) WHERE i.decision = 'accepted' "
    "  ORDER BY i.n RETURNING publisher, content_hash), "
    "x AS (DELETE FROM dead_letters dl USING it "
    "  WHERE dl.publisher = it.publisher AND dl.content_hash = it.content_hash) "
    "SELECT i.n FROM i JOIN d USING (publisher, content_hash)"};

// The stored decisions that stay against plain deliveries (no replay): a repeat is answered from
// this unlocked read, without the upsert, which takes the row's lock (a heap write, a WAL record
// and a flush at commit) even when its WHERE keeps the row (issue 21). As a read before the
// write, it answers what Evaluate's read-then-record answers: a decision committed before this
// transaction's snapshot. $1 publishers, $2 content hashes, $3 signature_valid, $4 now (Unix µs),
// one element per delivery. Columns: those of kReadDecision, then the delivery's position
// (1-based).
constexpr PgStatement kStayingDecisions{
    "ingest_staying_decisions",
    "SELECT " PORTCULLIS_DECISION_COLUMNS ", i.n "
    "FROM unnest($1::text[], $2::text[], $3::boolean[], $4::bigint[]) "
    "  WITH ORDINALITY AS i(pub, hash, valid, at, n) "
    "JOIN ingest_decisions d ON d.publisher = i.pub AND d.content_hash = i.hash "
    "WHERE NOT " PORTCULLIS_DECISION_REPLACES("i.valid", PORTCULLIS_TIME("i.at"), "''")};

constexpr PgStatement kInsertDeadLetter{
    "ingest_insert_dead_letter",
    "INSERT INTO dead_letters (id, publisher, item_id, content_hash, reason, signature_header, "
    "  message_id, timestamp_header, raw_body, canonical_body, is_synthetic, "
    "  digital_source_type) "
    "VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
    "  CASE $11 WHEN 'true' THEN true WHEN 'false' THEN false END, $12)"};

constexpr PgStatement kUpdateDeadLetterReason{
    "ingest_update_dead_letter_reason", "UPDATE dead_letters SET reason = $2 WHERE id = $1::uuid"};

constexpr PgStatement kDeleteDeadLetter{"ingest_delete_dead_letter",
                                        "DELETE FROM dead_letters WHERE id = $1::uuid"};

#define PORTCULLIS_DEAD_LETTER_COLUMNS                                                        \
  "id::text, reason, publisher, item_id, content_hash, signature_header, message_id, "        \
  "timestamp_header, raw_body, canonical_body, "                                              \
  "CASE WHEN is_synthetic IS NULL THEN '' WHEN is_synthetic THEN 'true' ELSE 'false' END, "   \
  "digital_source_type, " PORTCULLIS_MICROS("created_at")

// Keyset pagination on (created_at, id); $2/$3 are the last position seen ($3 '' for none).
constexpr PgStatement kListDeadLetters{
    "ingest_list_dead_letters",
    "SELECT " PORTCULLIS_DEAD_LETTER_COLUMNS
    " FROM dead_letters WHERE ($1 = '' OR publisher = $1) "
    "AND ($3 = '' OR (created_at, id) > (" PORTCULLIS_TIME("$2") ", nullif($3, '')::uuid)) "
    "ORDER BY created_at, id LIMIT $4"};

constexpr PgStatement kGetDeadLetter{
    "ingest_get_dead_letter",
    "SELECT " PORTCULLIS_DEAD_LETTER_COLUMNS " FROM dead_letters WHERE id = $1::uuid"};

constexpr PgStatement kListItems{
    "ingest_list_items",
    "SELECT cursor, publisher, item_id, content_hash, canonical_body, signature_valid, "
    PORTCULLIS_MICROS("accepted_at") ", coalesce(media::text, '') "
    "FROM ingest_items WHERE cursor > $1 ORDER BY cursor LIMIT $2"};

// The drop ledger (issue 17). A recorded drop is kept when it fits its publisher's cap: the
// usage row's upsert adds its bytes only when the total stays within $15 (re-checked on the
// latest row under its lock, so concurrent writers never pass the cap), and the row is inserted
// only when the bytes were added. A drop over the cap is not kept; the older ones stay.
constexpr PgStatement kKeepDrop{
    "ingest_keep_drop",
    "WITH u AS (INSERT INTO drop_ledger_usage AS u (publisher, bytes) "
    "  SELECT $1, $12::bigint WHERE $12::bigint <= $15::bigint "
    "  ON CONFLICT (publisher) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes "
    "  WHERE u.bytes + EXCLUDED.bytes <= $15::bigint RETURNING 1) "
    "INSERT INTO dropped_deliveries (publisher, item_id, content_hash, reason, signature_header, "
    "  message_id, timestamp_header, raw_body, canonical_body, is_synthetic, "
    "  digital_source_type, size_bytes, received_at, expires_at) "
    "SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, "
    "  CASE $10 WHEN 'true' THEN true WHEN 'false' THEN false END, $11, $12::bigint, "
    "  " PORTCULLIS_TIME("$13") ", " PORTCULLIS_TIME("$14") " FROM u"};

// A re-evaluation's acceptance replaces the drop it decides again (besides what the upsert
// replaces anyway); an accepted decision stays (the item is accepted once).
constexpr PgStatement kReevaluateUpsert{
    "ingest_reevaluate_upsert",
    PORTCULLIS_UPSERT_DECISION " OR d.decision = 'dropped' "
    "RETURNING coalesce(d.dead_letter_id::text, '')"};

// An accepted item's ledger rows have nothing left to decide.
constexpr PgStatement kDeleteKeyDrops{
    "ingest_delete_key_drops",
    "DELETE FROM dropped_deliveries WHERE publisher = $1 AND content_hash = $2"};

// Keyset pagination on (received_at, id) within one publisher; $2 reason ('' any), $3 since,
// $4/$5 the last position seen ($5 '' for none).
constexpr PgStatement kListDrops{
    "ingest_list_drops",
    "SELECT id::text, reason, publisher, item_id, content_hash, signature_header, message_id, "
    "  timestamp_header, raw_body, canonical_body, "
    "  CASE WHEN is_synthetic IS NULL THEN '' WHEN is_synthetic THEN 'true' ELSE 'false' END, "
    "  digital_source_type, " PORTCULLIS_MICROS("received_at") ", "
    PORTCULLIS_MICROS("expires_at") " "
    "FROM dropped_deliveries WHERE publisher = $1 AND ($2 = '' OR reason = $2) "
    "AND received_at >= " PORTCULLIS_TIME("$3") " "
    "AND ($5 = '' OR (received_at, id) > (" PORTCULLIS_TIME("$4") ", nullif($5, '')::uuid)) "
    "ORDER BY received_at, id LIMIT $6"};

#undef PORTCULLIS_DEAD_LETTER_COLUMNS
#undef PORTCULLIS_OUTBOX_LOCK_KEY
#undef PORTCULLIS_UPSERT_DECISION
#undef PORTCULLIS_DECISION_REPLACE
#undef PORTCULLIS_DECISION_REPLACES
#undef PORTCULLIS_DECISION_COLUMNS
#undef PORTCULLIS_TIME
#undef PORTCULLIS_MICROS

absl::StatusOr<StoredDecision> ParseDecision(const std::string& text) {
  if (text == "accepted") {
    return StoredDecision::kAccepted;
  }
  if (text == "dropped") {
    return StoredDecision::kDropped;
  }
  if (text == "quarantined") {
    return StoredDecision::kQuarantined;
  }
  return absl::InternalError(absl::StrCat("ingest decision has unknown value '", text, "'"));
}

// Reads the columns of kFindDecision / kReadDecision; INTERNAL for an unknown decision.
absl::Status DecisionFromRow(const pqxx::row& row, DecisionRecord* out) {
  out->item_id = row[0].as<std::string>();
  absl::StatusOr<StoredDecision> decision = ParseDecision(row[1].as<std::string>());
  if (!decision.ok()) {
    return decision.status();
  }
  out->decision = *decision;
  out->reason = row[2].as<std::string>();
  out->signature_valid = row[3].as<bool>();
  out->dead_letter_id = row[4].as<std::string>();
  out->decided_at = absl::FromUnixMicros(row[5].as<int64_t>());
  out->expires_at = absl::FromUnixMicros(row[6].as<int64_t>());
  return absl::OkStatus();
}

// The delivery as received, from columns 2-11 of a dead-letter or drop-ledger row (publisher,
// item_id, content_hash, signature_header, message_id, timestamp_header, raw_body,
// canonical_body, is_synthetic as text, digital_source_type).
DeliveryRecord DeliveryFromRow(const pqxx::row& row) {
  DeliveryRecord delivery;
  delivery.publisher = row[2].as<std::string>();
  delivery.item_id = row[3].as<std::string>();
  delivery.content_hash = row[4].as<std::string>();
  delivery.signature_header = row[5].as<std::string>();
  delivery.message_id = row[6].as<std::string>();
  delivery.timestamp = row[7].as<std::string>();
  delivery.raw_body = pqxx::binarystring(row[8]).str();
  delivery.canonical_body = pqxx::binarystring(row[9]).str();
  const std::string synthetic = row[10].as<std::string>();
  if (!synthetic.empty()) {
    delivery.is_synthetic = synthetic == "true";
  }
  delivery.digital_source_type = row[11].as<std::string>();
  return delivery;
}

DeadLetterRecord DeadLetterFromRow(const pqxx::row& row) {
  DeadLetterRecord record;
  record.dead_letter_id = row[0].as<std::string>();
  record.reason = row[1].as<std::string>();
  record.delivery = DeliveryFromRow(row);
  record.created_at = absl::FromUnixMicros(row[12].as<int64_t>());
  return record;
}

pqxx::binarystring Bytes(const std::string& bytes) {
  return pqxx::binarystring(bytes.data(), bytes.size());
}

std::string SyntheticText(const DeliveryRecord& delivery) {
  return delivery.is_synthetic.has_value() ? (*delivery.is_synthetic ? "true" : "false") : "";
}

// Whether `next`, recorded as `result`, goes to the drop ledger.
bool ShouldKeepDrop(const NewDecision& next, const RecordResult& result) {
  return result.recorded && next.decision.decision == StoredDecision::kDropped &&
         next.keep_drop_for > absl::ZeroDuration() && next.reevaluation_of.empty();
}

// Keeps `next`'s drop in the ledger when it fits its publisher's cap; true when kept.
bool KeepDrop(pqxx::transaction_base& transaction, const NewDecision& next) {
  const DeliveryRecord& delivery = next.delivery;
  const absl::Time received = next.decision.decided_at;
  return ExecPrepared(transaction, kKeepDrop, delivery.publisher, delivery.item_id,
                      delivery.content_hash, next.decision.reason, delivery.signature_header,
                      delivery.message_id, delivery.timestamp, Bytes(delivery.raw_body),
                      Bytes(delivery.canonical_body), SyntheticText(delivery),
                      delivery.digital_source_type, DropLedgerBytes(delivery),
                      absl::ToUnixMicros(received),
                      absl::ToUnixMicros(received + next.keep_drop_for),
                      next.drop_ledger_max_bytes)
             .affected_rows() == 1;
}

DroppedDeliveryRecord DropFromRow(const pqxx::row& row) {
  DroppedDeliveryRecord record;
  record.drop_id = row[0].as<std::string>();
  record.reason = row[1].as<std::string>();
  record.delivery = DeliveryFromRow(row);
  record.received_at = absl::FromUnixMicros(row[12].as<int64_t>());
  record.expires_at = absl::FromUnixMicros(row[13].as<int64_t>());
  return record;
}

// An accepted item's media verification as the jsonb text of ingest_items.media ('' for none).
std::string MediaJson(const std::vector<MediaVerificationRecord>& media) {
  if (media.empty()) {
    return "";
  }
  boost::json::array elements;
  for (const MediaVerificationRecord& record : media) {
    boost::json::array codes;
    for (const std::string& code : record.status_codes) {
      codes.emplace_back(code);
    }
    elements.push_back(boost::json::object{{"content_type", record.content_type},
                                           {"verdict", record.verdict},
                                           {"status_codes", std::move(codes)},
                                           {"signer_subject", record.signer_subject},
                                           {"claim_generator", record.claim_generator},
                                           {"digital_source_type", record.digital_source_type},
                                           {"synthetic", record.synthetic}});
  }
  return boost::json::serialize(elements);
}

std::string StringMember(const boost::json::object& object, const char* name) {
  const boost::json::value* value = object.if_contains(name);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : "";
}

// The inverse of MediaJson; what does not read as written is left out.
std::vector<MediaVerificationRecord> MediaFromJson(const std::string& text) {
  std::vector<MediaVerificationRecord> media;
  if (text.empty()) {
    return media;
  }
  boost::system::error_code error;
  const boost::json::value parsed = boost::json::parse(text, error);
  if (error || !parsed.is_array()) {
    return media;
  }
  for (const boost::json::value& element : parsed.as_array()) {
    if (!element.is_object()) {
      continue;
    }
    const boost::json::object& object = element.as_object();
    MediaVerificationRecord record;
    record.content_type = StringMember(object, "content_type");
    record.verdict = StringMember(object, "verdict");
    if (const boost::json::value* codes = object.if_contains("status_codes");
        codes != nullptr && codes->is_array()) {
      for (const boost::json::value& code : codes->as_array()) {
        if (code.is_string()) {
          record.status_codes.emplace_back(code.as_string());
        }
      }
    }
    record.signer_subject = StringMember(object, "signer_subject");
    record.claim_generator = StringMember(object, "claim_generator");
    record.digital_source_type = StringMember(object, "digital_source_type");
    const boost::json::value* synthetic = object.if_contains("synthetic");
    record.synthetic = synthetic != nullptr && synthetic->is_bool() && synthetic->as_bool();
    media.push_back(std::move(record));
  }
  return media;
}

constexpr char kDecisionGone[] = "ingest decision changed while being recorded; retry";

// Whether `next` is recorded by kRecordDecisions: no replay, no re-evaluation, not quarantined.
bool IsPlain(const NewDecision& next) {
  return next.replay_of.empty() && next.reevaluation_of.empty() &&
         next.decision.decision != StoredDecision::kQuarantined;
}

// Plain decisions of distinct keys, decisions[k] judged at nows[k], in one kRecordDecisions
// statement: recorded[k] says whether decisions[k] was (otherwise it lost to a decision that
// stays).
std::vector<bool> RecordPlainDecisions(pqxx::transaction_base& transaction,
                                       absl::Span<const NewDecision* const> decisions,
                                       absl::Span<const absl::Time> nows) {
  enum Column {
    kPublisher,
    kHash,
    kItem,
    kKind,
    kReason,
    kSigned,
    kDecided,
    kExpires,
    kNow,
    kBody,
    kMedia,
    kColumns
  };
  std::vector<std::string> columns[kColumns];
  for (std::vector<std::string>& column : columns) {
    column.reserve(decisions.size());
  }
  for (size_t k = 0; k < decisions.size(); ++k) {
    const DecisionRecord& decision = decisions[k]->decision;
    columns[kPublisher].push_back(decision.publisher);
    columns[kHash].push_back(decision.content_hash);
    columns[kItem].push_back(decision.item_id);
    columns[kKind].emplace_back(StoredDecisionName(decision.decision));
    columns[kReason].push_back(decision.reason);
    columns[kSigned].push_back(decision.signature_valid ? "t" : "f");
    columns[kDecided].push_back(absl::StrCat(absl::ToUnixMicros(decision.decided_at)));
    columns[kExpires].push_back(absl::StrCat(absl::ToUnixMicros(decision.expires_at)));
    columns[kNow].push_back(absl::StrCat(absl::ToUnixMicros(nows[k])));
    columns[kBody].push_back(absl::BytesToHexString(decisions[k]->delivery.canonical_body));
    columns[kMedia].push_back(MediaJson(decisions[k]->media_verification));
  }
  std::vector<bool> recorded(decisions.size(), false);
  const pqxx::result rows =
      ExecPrepared(transaction, kRecordDecisions, TextArrayLiteral(columns[kPublisher]),
                   TextArrayLiteral(columns[kHash]), TextArrayLiteral(columns[kItem]),
                   TextArrayLiteral(columns[kKind]), TextArrayLiteral(columns[kReason]),
                   TextArrayLiteral(columns[kSigned]), TextArrayLiteral(columns[kDecided]),
                   TextArrayLiteral(columns[kExpires]), TextArrayLiteral(columns[kNow]),
                   TextArrayLiteral(columns[kBody]), TextArrayLiteral(columns[kMedia]));
  for (const pqxx::row& row : rows) {
    recorded[row[0].as<size_t>() - 1] = true;
  }
  return recorded;
}

// Completes `result` (whose decision is the one submitted) once kRecordDecisions has said whether
// it was `recorded`: if not, the decision it lost to, read after the statement that waited for it;
// kDecisionGone (UNAVAILABLE, retryable) when that one is gone: expired and swept in between, so
// deciding again is right.
absl::Status CompletePlain(pqxx::transaction_base& transaction, bool recorded,
                           RecordResult* result) {
  result->recorded = recorded;
  if (recorded) {
    return absl::OkStatus();
  }
  const pqxx::result rows = ExecPrepared(transaction, kReadDecision, result->decision.publisher,
                                         result->decision.content_hash);
  if (rows.empty()) {
    return absl::UnavailableError(kDecisionGone);
  }
  return DecisionFromRow(rows[0], &result->decision);
}

// Answers the plain deliveries of `batch` whose key holds a decision that stays against them
// (kStayingDecisions) in `results`, as not recorded with that decision; answered[i] says which.
std::vector<bool> AnswerStaying(pqxx::transaction_base& transaction,
                                absl::Span<const DecisionAt> batch,
                                std::vector<absl::StatusOr<RecordResult>>& results) {
  std::vector<std::string> publishers, hashes, valid, nows;
  for (const DecisionAt& item : batch) {
    publishers.push_back(item.next.decision.publisher);
    hashes.push_back(item.next.decision.content_hash);
    valid.emplace_back(item.next.decision.signature_valid ? "t" : "f");
    nows.push_back(absl::StrCat(absl::ToUnixMicros(item.now)));
  }
  std::vector<bool> answered(batch.size(), false);
  for (const pqxx::row& row :
       ExecPrepared(transaction, kStayingDecisions, TextArrayLiteral(publishers),
                    TextArrayLiteral(hashes), TextArrayLiteral(valid), TextArrayLiteral(nows))) {
    const size_t i = row[7].as<size_t>() - 1;
    RecordResult result;
    const absl::Status read = DecisionFromRow(row, &result.decision);
    results[i] = read.ok() ? absl::StatusOr<RecordResult>(std::move(result))
                           : absl::StatusOr<RecordResult>(read);
    answered[i] = true;
  }
  return answered;
}

}  // namespace

absl::StatusOr<std::optional<DecisionRecord>> PgIngestStore::FindDecision(
    const std::string& publisher, const std::string& content_hash, absl::Time now) {
  std::optional<DecisionRecord> found;
  absl::Status parsed = absl::OkStatus();
  absl::Status status = pool_.Run("find_ingest_decision", [&](pqxx::connection& connection) {
    found.reset();
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows =
        ExecPrepared(transaction, kFindDecision, publisher, content_hash, absl::ToUnixMicros(now));
    if (rows.empty()) {
      return;
    }
    DecisionRecord record;
    record.publisher = publisher;
    record.content_hash = content_hash;
    parsed = DecisionFromRow(rows[0], &record);
    found = std::move(record);
  });
  if (!status.ok()) {
    return status;
  }
  if (!parsed.ok()) {
    return parsed;
  }
  return found;
}

absl::StatusOr<RecordResult> PgIngestStore::Record(const NewDecision& next, absl::Time now) {
  const DecisionRecord& decision = next.decision;
  if (!next.replay_of.empty() && !IsUuid(next.replay_of)) {
    return absl::InvalidArgumentError("dead letter id is not a UUID");
  }
  if (!next.reevaluation_of.empty() &&
      (!IsUuid(next.reevaluation_of) || decision.decision != StoredDecision::kAccepted)) {
    return absl::InvalidArgumentError("a re-evaluation records an acceptance of a ledger row");
  }
  const bool may_keep = decision.decision == StoredDecision::kDropped &&
                        next.keep_drop_for > absl::ZeroDuration();
  if (next.replay_of.empty() && next.reevaluation_of.empty() && !may_keep &&
      decision.decision != StoredDecision::kQuarantined) {
    return RecordInOneStatement(next, now);
  }
  RecordResult result;
  absl::Status parsed = absl::OkStatus();
  absl::Status status = pool_.Run("record_ingest_decision", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    parsed = RecordInTransaction(transaction, next, now, &result);
    if (parsed.ok() && ShouldKeepDrop(next, result)) {
      result.drop_kept = KeepDrop(transaction, next);
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  if (!parsed.ok()) {
    return parsed;
  }
  return result;
}

absl::Status PgIngestStore::RecordInTransaction(pqxx::transaction_base& transaction,
                                                const NewDecision& next, absl::Time now,
                                                RecordResult* out) {
  const DecisionRecord& decision = next.decision;
  const DeliveryRecord& delivery = next.delivery;
  RecordResult& result = *out;
  result = RecordResult();
  result.decision = decision;
  if (!next.replay_of.empty() && !IsUuid(next.replay_of)) {
    return absl::InvalidArgumentError("dead letter id is not a UUID");
  }
  if (!next.reevaluation_of.empty()) {
    return RecordReevaluation(transaction, next, now, out);
  }
  if (IsPlain(next)) {
    const NewDecision* const one[] = {&next};
    return CompletePlain(transaction, RecordPlainDecisions(transaction, one, {now}).front(), out);
  }
  const pqxx::result upserted = ExecPrepared(
      transaction, kUpsertDecision, decision.publisher, decision.content_hash, decision.item_id,
      std::string(StoredDecisionName(decision.decision)), decision.reason,
      decision.signature_valid, next.replay_of, absl::ToUnixMicros(decision.decided_at),
      absl::ToUnixMicros(decision.expires_at), absl::ToUnixMicros(now));
  if (upserted.empty()) {
    // Lost to a decision that stays: read it (committed, since the conflict waited for it).
    const pqxx::row row =
        ExecPrepared1(transaction, kReadDecision, decision.publisher, decision.content_hash);
    if (absl::Status parsed = DecisionFromRow(row, &result.decision); !parsed.ok()) {
      return parsed;
    }
  } else {
    result.recorded = true;
    result.decision.dead_letter_id = upserted[0][0].as<std::string>();
    if (decision.decision == StoredDecision::kAccepted) {
      ExecPrepared(transaction, kOutboxInsertLock);
      ExecPrepared0(transaction, kInsertItem, decision.publisher, decision.item_id,
                    decision.content_hash, Bytes(delivery.canonical_body), decision.signature_valid,
                    MediaJson(next.media_verification));
      ExecPrepared0(transaction, kDeleteMootDeadLetters, decision.publisher,
                    decision.content_hash);
    } else if (decision.decision == StoredDecision::kQuarantined &&
               result.decision.dead_letter_id != next.replay_of) {
      const std::string synthetic = SyntheticText(delivery);
      ExecPrepared0(transaction, kInsertDeadLetter, result.decision.dead_letter_id,
                    delivery.publisher, delivery.item_id, delivery.content_hash, decision.reason,
                    delivery.signature_header, delivery.message_id, delivery.timestamp,
                    Bytes(delivery.raw_body), Bytes(delivery.canonical_body), synthetic,
                    delivery.digital_source_type);
    }
  }
  if (!next.replay_of.empty()) {
    if (result.recorded && result.decision.decision == StoredDecision::kQuarantined &&
        result.decision.dead_letter_id == next.replay_of) {
      ExecPrepared0(transaction, kUpdateDeadLetterReason, next.replay_of, decision.reason);
    } else {
      ExecPrepared0(transaction, kDeleteDeadLetter, next.replay_of);
    }
  }
  return absl::OkStatus();
}

std::vector<absl::StatusOr<RecordResult>> PgIngestStore::RecordBatch(
    pqxx::connection& connection, absl::Span<const DecisionAt> batch) {
  std::vector<size_t> order(batch.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const DecisionRecord& left = batch[a].next.decision;
    const DecisionRecord& right = batch[b].next.decision;
    return std::tie(left.publisher, left.content_hash) <
           std::tie(right.publisher, right.content_hash);
  });
  std::vector<absl::StatusOr<RecordResult>> results(
      batch.size(), absl::InternalError("decision not recorded"));
  pqxx::work transaction(connection);
  const auto set_result = [&](size_t i, const absl::Status& status, RecordResult& result) {
    if (status.ok()) {
      results[i] = std::move(result);
    } else {
      results[i] = status;
    }
  };
  const auto record_one = [&](size_t i) {
    RecordResult result;
    set_result(i, RecordInTransaction(transaction, batch[i].next, batch[i].now, &result), result);
  };
  const bool all_plain = std::all_of(batch.begin(), batch.end(),
                                     [](const DecisionAt& item) { return IsPlain(item.next); });
  if (!all_plain) {
    for (const size_t i : order) {
      record_one(i);
    }
  } else {
    // Repeats whose stored decision stays are answered from one read; of the rest, the first
    // copy of each key goes in one statement, and a later copy (its key's row is locked by this
    // transaction now, so no new lock is taken out of order) one at a time after it.
    const std::vector<bool> answered = AnswerStaying(transaction, batch, results);
    std::vector<size_t> firsts;
    std::vector<size_t> copies;
    std::vector<const NewDecision*> decisions;
    std::vector<absl::Time> nows;
    for (const size_t i : order) {
      if (answered[i]) {
        continue;
      }
      const DecisionRecord& decision = batch[i].next.decision;
      if (!firsts.empty() && decision.publisher == batch[firsts.back()].next.decision.publisher &&
          decision.content_hash == batch[firsts.back()].next.decision.content_hash) {
        copies.push_back(i);
        continue;
      }
      firsts.push_back(i);
      decisions.push_back(&batch[i].next);
      nows.push_back(batch[i].now);
    }
    const std::vector<bool> recorded = decisions.empty()
                                           ? std::vector<bool>()
                                           : RecordPlainDecisions(transaction, decisions, nows);
    for (size_t k = 0; k < firsts.size(); ++k) {
      RecordResult result;
      result.decision = batch[firsts[k]].next.decision;
      set_result(firsts[k], CompletePlain(transaction, recorded[k], &result), result);
    }
    for (const size_t i : copies) {
      record_one(i);
    }
  }
  // The drops to keep, after every decision: a writer takes the ledger's usage rows last (in
  // publisher order, as `order` is), so it never waits for a decision while holding one.
  for (const size_t i : order) {
    if (results[i].ok() && ShouldKeepDrop(batch[i].next, *results[i])) {
      results[i]->drop_kept = KeepDrop(transaction, batch[i].next);
    }
  }
  transaction.commit();
  return results;
}

absl::Status PgIngestStore::RecordReevaluation(pqxx::transaction_base& transaction,
                                               const NewDecision& next, absl::Time now,
                                               RecordResult* out) {
  const DecisionRecord& decision = next.decision;
  const DeliveryRecord& delivery = next.delivery;
  RecordResult& result = *out;
  if (!IsUuid(next.reevaluation_of) || decision.decision != StoredDecision::kAccepted) {
    return absl::InvalidArgumentError("a re-evaluation records an acceptance of a ledger row");
  }
  const pqxx::result upserted = ExecPrepared(
      transaction, kReevaluateUpsert, decision.publisher, decision.content_hash, decision.item_id,
      std::string(StoredDecisionName(decision.decision)), decision.reason,
      decision.signature_valid, std::string(), absl::ToUnixMicros(decision.decided_at),
      absl::ToUnixMicros(decision.expires_at), absl::ToUnixMicros(now));
  if (upserted.empty()) {
    // Accepted already (this item once only): its ledger rows are moot all the same.
    const pqxx::row row =
        ExecPrepared1(transaction, kReadDecision, decision.publisher, decision.content_hash);
    if (absl::Status parsed = DecisionFromRow(row, &result.decision); !parsed.ok()) {
      return parsed;
    }
  } else {
    result.recorded = true;
    ExecPrepared(transaction, kOutboxInsertLock);
    ExecPrepared0(transaction, kInsertItem, decision.publisher, decision.item_id,
                  decision.content_hash, Bytes(delivery.canonical_body), decision.signature_valid,
                  MediaJson(next.media_verification));
    ExecPrepared0(transaction, kDeleteMootDeadLetters, decision.publisher, decision.content_hash);
  }
  if (result.decision.decision == StoredDecision::kAccepted) {
    ExecPrepared0(transaction, kDeleteKeyDrops, decision.publisher, decision.content_hash);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DroppedDeliveryRecord>> PgIngestStore::ListDrops(
    const DropFilter& filter, const std::optional<DropPosition>& after, int limit) {
  if (after.has_value() && !IsUuid(after->drop_id)) {
    return absl::InvalidArgumentError("page token is not valid");
  }
  std::vector<DroppedDeliveryRecord> drops;
  absl::Status status = pool_.Run("list_drops", [&](pqxx::connection& connection) {
    drops.clear();
    pqxx::nontransaction transaction(connection);
    const int64_t since =
        filter.since == absl::InfinitePast() ? int64_t{0} : absl::ToUnixMicros(filter.since);
    const pqxx::result rows = ExecPrepared(
        transaction, kListDrops, filter.publisher, filter.reason, since,
        after ? absl::ToUnixMicros(after->received_at) : int64_t{0},
        after ? after->drop_id : std::string(), limit);
    for (const pqxx::row& row : rows) {
      drops.push_back(DropFromRow(row));
    }
  });
  if (!status.ok()) {
    return status;
  }
  return drops;
}

absl::StatusOr<RecordResult> PgIngestStore::RecordInOneStatement(const NewDecision& next,
                                                                 absl::Time now) {
  RecordResult result;
  absl::Status read = absl::OkStatus();
  // A duplicate is read after the statement that found it; if the sweeper deleted that decision
  // in between (it expired: kDecisionGone), deciding again is right: try again, a bounded number
  // of times.
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::Status status = pool_.Run("record_ingest_decision", [&](pqxx::connection& connection) {
      result = RecordResult();
      result.decision = next.decision;
      pqxx::nontransaction transaction(connection);
      const NewDecision* const one[] = {&next};
      read = CompletePlain(transaction, RecordPlainDecisions(transaction, one, {now}).front(),
                           &result);
    });
    if (!status.ok()) {
      return status;
    }
    if (!absl::IsUnavailable(read)) {
      break;
    }
  }
  if (!read.ok()) {
    return read;
  }
  return result;
}

absl::StatusOr<std::vector<DeadLetterRecord>> PgIngestStore::ListDeadLetters(
    const std::string& publisher, const std::optional<DeadLetterPosition>& after, int limit) {
  if (after.has_value() && !IsUuid(after->dead_letter_id)) {
    return absl::InvalidArgumentError("page token is not valid");
  }
  std::vector<DeadLetterRecord> letters;
  absl::Status status = pool_.Run("list_dead_letters", [&](pqxx::connection& connection) {
    letters.clear();
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows = ExecPrepared(
        transaction, kListDeadLetters, publisher,
        after ? absl::ToUnixMicros(after->created_at) : int64_t{0},
        after ? after->dead_letter_id : std::string(), limit);
    for (const pqxx::row& row : rows) {
      letters.push_back(DeadLetterFromRow(row));
    }
  });
  if (!status.ok()) {
    return status;
  }
  return letters;
}

absl::StatusOr<std::optional<DeadLetterRecord>> PgIngestStore::GetDeadLetter(
    const std::string& dead_letter_id) {
  if (!IsUuid(dead_letter_id)) {
    return std::optional<DeadLetterRecord>();
  }
  std::optional<DeadLetterRecord> found;
  absl::Status status = pool_.Run("get_dead_letter", [&](pqxx::connection& connection) {
    found.reset();
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows = ExecPrepared(transaction, kGetDeadLetter, dead_letter_id);
    if (!rows.empty()) {
      found = DeadLetterFromRow(rows[0]);
    }
  });
  if (!status.ok()) {
    return status;
  }
  return found;
}

absl::Status PgIngestStore::DiscardDeadLetter(const std::string& dead_letter_id) {
  if (!IsUuid(dead_letter_id)) {
    return absl::NotFoundError("no dead letter has that id");
  }
  bool deleted = false;
  absl::Status status = pool_.Run("discard_dead_letter", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    deleted = ExecPrepared(transaction, kDeleteDeadLetter, dead_letter_id).affected_rows() == 1;
  });
  if (!status.ok()) {
    return status;
  }
  if (!deleted) {
    return absl::NotFoundError("no dead letter has that id");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AcceptedItemRecord>> PgIngestStore::ListAcceptedItems(
    int64_t after_cursor, int limit) {
  std::vector<AcceptedItemRecord> items;
  absl::Status status = pool_.Run("list_accepted_items", [&](pqxx::connection& connection) {
    items.clear();
    // Waits for every transaction holding a cursor to commit (see kOutboxInsertLock).
    pqxx::work transaction(connection);
    ExecPrepared(transaction, kOutboxReadBarrier);
    const pqxx::result rows = ExecPrepared(transaction, kListItems, after_cursor, limit);
    for (const pqxx::row& row : rows) {
      AcceptedItemRecord item;
      item.cursor = row[0].as<int64_t>();
      item.publisher = row[1].as<std::string>();
      item.item_id = row[2].as<std::string>();
      item.content_hash = row[3].as<std::string>();
      item.canonical_body = pqxx::binarystring(row[4]).str();
      item.signature_valid = row[5].as<bool>();
      item.accepted_at = absl::FromUnixMicros(row[6].as<int64_t>());
      item.media = MediaFromJson(row[7].as<std::string>());
      items.push_back(std::move(item));
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  return items;
}

}  // namespace portcullis::verifier::store
