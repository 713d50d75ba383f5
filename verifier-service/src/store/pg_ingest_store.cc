#include "verifier-service/src/store/pg_ingest_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "pqxx/binarystring"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {
namespace {

#define PORTCULLIS_MICROS(column) "(extract(epoch FROM " column ") * 1000000)::bigint"
// A bigint parameter of Unix microseconds as a timestamptz, exactly.
#define PORTCULLIS_TIME(param) "('epoch'::timestamptz + " param "::bigint * interval '1 microsecond')"

constexpr char kFindDecision[] =
    "SELECT item_id, decision, reason, signature_valid, coalesce(dead_letter_id::text, ''), "
    PORTCULLIS_MICROS("decided_at") ", " PORTCULLIS_MICROS("expires_at") " "
    "FROM ingest_decisions WHERE publisher = $1 AND content_hash = $2 "
    "AND expires_at > " PORTCULLIS_TIME("$3");

// One statement decides between concurrent deliveries of one key: the primary key serializes
// them, and the WHERE of DO UPDATE (re-checked against the latest committed row) says whether
// this delivery may replace what is there. No row returned: it may not (a duplicate).
// $7: the dead letter being replayed ('' when none); a quarantine gets a fresh dead letter id
// unless it is that replay's.
constexpr char kUpsertDecision[] =
    "INSERT INTO ingest_decisions AS d (publisher, content_hash, item_id, decision, reason, "
    "  signature_valid, dead_letter_id, decided_at, expires_at) "
    "VALUES ($1, $2, $3, $4, $5, $6, "
    "  CASE WHEN $4 = 'quarantined' THEN coalesce(nullif($7, '')::uuid, gen_random_uuid()) END, "
    "  " PORTCULLIS_TIME("$8") ", " PORTCULLIS_TIME("$9") ") "
    "ON CONFLICT (publisher, content_hash) DO UPDATE SET item_id = EXCLUDED.item_id, "
    "  decision = EXCLUDED.decision, reason = EXCLUDED.reason, "
    "  signature_valid = EXCLUDED.signature_valid, dead_letter_id = EXCLUDED.dead_letter_id, "
    "  decided_at = EXCLUDED.decided_at, expires_at = EXCLUDED.expires_at "
    "WHERE d.expires_at <= " PORTCULLIS_TIME("$10") " "
    "   OR (EXCLUDED.signature_valid AND NOT d.signature_valid AND d.decision <> 'accepted') "
    "   OR (d.dead_letter_id IS NOT NULL AND d.dead_letter_id::text = $7) "
    "RETURNING coalesce(d.dead_letter_id::text, '')";

constexpr char kReadDecision[] =
    "SELECT item_id, decision, reason, signature_valid, coalesce(dead_letter_id::text, ''), "
    PORTCULLIS_MICROS("decided_at") ", " PORTCULLIS_MICROS("expires_at") " "
    "FROM ingest_decisions WHERE publisher = $1 AND content_hash = $2";

// Cursors are handed out in commit order: item inserts are serialized by this transaction-level
// lock (held to commit), so a consumer that has read cursor N never later finds a smaller one.
constexpr char kOutboxLock[] = "SELECT pg_advisory_xact_lock(7243305411720019201)";

constexpr char kInsertItem[] =
    "INSERT INTO ingest_items (publisher, item_id, content_hash, canonical_body, signature_valid) "
    "VALUES ($1, $2, $3, $4, $5)";

constexpr char kInsertDeadLetter[] =
    "INSERT INTO dead_letters (id, publisher, item_id, content_hash, reason, signature_header, "
    "  message_id, timestamp_header, raw_body, canonical_body, is_synthetic, "
    "  digital_source_type) "
    "VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
    "  CASE $11 WHEN 'true' THEN true WHEN 'false' THEN false END, $12)";

constexpr char kUpdateDeadLetterReason[] =
    "UPDATE dead_letters SET reason = $2 WHERE id = $1::uuid";

constexpr char kDeleteDeadLetter[] = "DELETE FROM dead_letters WHERE id = $1::uuid";

// An accepted item's quarantined copies (a validly signed delivery replaced their quarantine,
// or it expired) have nothing left to decide.
constexpr char kDeleteMootDeadLetters[] =
    "DELETE FROM dead_letters WHERE publisher = $1 AND content_hash = $2";

constexpr char kSweep[] =
    "DELETE FROM ingest_decisions WHERE ctid IN (SELECT ctid FROM ingest_decisions "
    "WHERE expires_at <= " PORTCULLIS_TIME("$1") " LIMIT $2)";

constexpr char kDeadLetterColumns[] =
    "id::text, reason, publisher, item_id, content_hash, signature_header, message_id, "
    "timestamp_header, raw_body, canonical_body, "
    "CASE WHEN is_synthetic IS NULL THEN '' WHEN is_synthetic THEN 'true' ELSE 'false' END, "
    "digital_source_type, " PORTCULLIS_MICROS("created_at");

// Keyset pagination on (created_at, id); $2/$3 are the last position seen ($3 '' for none).
constexpr char kListDeadLettersWhere[] =
    " FROM dead_letters WHERE ($1 = '' OR publisher = $1) "
    "AND ($3 = '' OR (created_at, id) > (" PORTCULLIS_TIME("$2") ", nullif($3, '')::uuid)) "
    "ORDER BY created_at, id LIMIT $4";

constexpr char kListItems[] =
    "SELECT cursor, publisher, item_id, content_hash, canonical_body, signature_valid, "
    PORTCULLIS_MICROS("accepted_at") " "
    "FROM ingest_items WHERE cursor > $1 ORDER BY cursor LIMIT $2";

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

DeadLetterRecord DeadLetterFromRow(const pqxx::row& row) {
  DeadLetterRecord record;
  record.dead_letter_id = row[0].as<std::string>();
  record.reason = row[1].as<std::string>();
  DeliveryRecord& delivery = record.delivery;
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
  record.created_at = absl::FromUnixMicros(row[12].as<int64_t>());
  return record;
}

pqxx::binarystring Bytes(const std::string& bytes) {
  return pqxx::binarystring(bytes.data(), bytes.size());
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
        transaction.exec_params(kFindDecision, publisher, content_hash, absl::ToUnixMicros(now));
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
  const DeliveryRecord& delivery = next.delivery;
  if (!next.replay_of.empty() && !IsUuid(next.replay_of)) {
    return absl::InvalidArgumentError("dead letter id is not a UUID");
  }
  RecordResult result;
  absl::Status parsed = absl::OkStatus();
  absl::Status status = pool_.Run("record_ingest_decision", [&](pqxx::connection& connection) {
    result = RecordResult();
    result.decision = decision;
    parsed = absl::OkStatus();
    pqxx::work transaction(connection);
    const pqxx::result upserted = transaction.exec_params(
        kUpsertDecision, decision.publisher, decision.content_hash, decision.item_id,
        std::string(StoredDecisionName(decision.decision)), decision.reason,
        decision.signature_valid, next.replay_of, absl::ToUnixMicros(decision.decided_at),
        absl::ToUnixMicros(decision.expires_at), absl::ToUnixMicros(now));
    if (upserted.empty()) {
      // Lost to a decision that stays: read it (committed, since the conflict waited for it).
      const pqxx::row row =
          transaction.exec_params1(kReadDecision, decision.publisher, decision.content_hash);
      parsed = DecisionFromRow(row, &result.decision);
      if (!parsed.ok()) {
        return;
      }
    } else {
      result.recorded = true;
      result.decision.dead_letter_id = upserted[0][0].as<std::string>();
      if (decision.decision == StoredDecision::kAccepted) {
        transaction.exec(kOutboxLock);
        transaction.exec_params0(kInsertItem, decision.publisher, decision.item_id,
                                 decision.content_hash, Bytes(delivery.canonical_body),
                                 decision.signature_valid);
        transaction.exec_params0(kDeleteMootDeadLetters, decision.publisher,
                                 decision.content_hash);
      } else if (decision.decision == StoredDecision::kQuarantined &&
                 result.decision.dead_letter_id != next.replay_of) {
        const std::string synthetic =
            delivery.is_synthetic.has_value() ? (*delivery.is_synthetic ? "true" : "false") : "";
        transaction.exec_params0(
            kInsertDeadLetter, result.decision.dead_letter_id, delivery.publisher,
            delivery.item_id, delivery.content_hash, decision.reason, delivery.signature_header,
            delivery.message_id, delivery.timestamp, Bytes(delivery.raw_body),
            Bytes(delivery.canonical_body), synthetic, delivery.digital_source_type);
      }
    }
    if (!next.replay_of.empty()) {
      if (result.recorded && result.decision.decision == StoredDecision::kQuarantined &&
          result.decision.dead_letter_id == next.replay_of) {
        transaction.exec_params0(kUpdateDeadLetterReason, next.replay_of, decision.reason);
      } else {
        transaction.exec_params0(kDeleteDeadLetter, next.replay_of);
      }
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

absl::StatusOr<int64_t> PgIngestStore::SweepExpired(absl::Time now, int limit) {
  int64_t deleted = 0;
  absl::Status status = pool_.Run("sweep_ingest_decisions", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    deleted = transaction.exec_params(kSweep, absl::ToUnixMicros(now), limit).affected_rows();
  });
  if (!status.ok()) {
    return status;
  }
  return deleted;
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
    const pqxx::result rows = transaction.exec_params(
        absl::StrCat("SELECT ", kDeadLetterColumns, kListDeadLettersWhere), publisher,
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
    const pqxx::result rows = transaction.exec_params(
        absl::StrCat("SELECT ", kDeadLetterColumns, " FROM dead_letters WHERE id = $1::uuid"),
        dead_letter_id);
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
    deleted = transaction.exec_params(kDeleteDeadLetter, dead_letter_id).affected_rows() == 1;
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
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows = transaction.exec_params(kListItems, after_cursor, limit);
    for (const pqxx::row& row : rows) {
      AcceptedItemRecord item;
      item.cursor = row[0].as<int64_t>();
      item.publisher = row[1].as<std::string>();
      item.item_id = row[2].as<std::string>();
      item.content_hash = row[3].as<std::string>();
      item.canonical_body = pqxx::binarystring(row[4]).str();
      item.signature_valid = row[5].as<bool>();
      item.accepted_at = absl::FromUnixMicros(row[6].as<int64_t>());
      items.push_back(std::move(item));
    }
  });
  if (!status.ok()) {
    return status;
  }
  return items;
}

}  // namespace portcullis::verifier::store
