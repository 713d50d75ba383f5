#include "verifier-service/src/store/pg_mention_store.h"

#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"

namespace portcullis::verifier::store {
namespace {

// One statement, so a repeat of the same pair can never create a second row: the unique
// constraint decides. The no-op DO UPDATE makes RETURNING answer for an existing row too;
// `xmax = 0` holds only for a row this statement inserted.
// Either way the row stays locked until commit, so concurrent repeats of one pair take their
// lifecycle decisions one after another. The last column says whether a FAILED decision is older
// than the failure retention ($5, microseconds).
constexpr char kUpsertPending[] =
    "INSERT INTO mentions (source, target, source_hash, target_hash) "
    "VALUES ($1, $2, decode($3, 'hex'), decode($4, 'hex')) "
    "ON CONFLICT (source_hash, target_hash) DO UPDATE SET state = mentions.state "
    "RETURNING id::text, state, (xmax = 0) AS created, "
    "          updated_at <= now() - $5::bigint * interval '1 microsecond' AS retention_over";

// The first job of a new mention.
constexpr char kQueueVerify[] =
    "INSERT INTO verification_jobs (mention_id, kind) VALUES ($1::uuid, 'VERIFY') "
    "ON CONFLICT (mention_id) DO NOTHING";

// A VERIFIED mention submitted again: one re-verification. A job already queued is that one; a
// job running now gets one more run when it finishes (the sender may have changed the source
// after that job fetched it).
constexpr char kQueueReverify[] =
    "INSERT INTO verification_jobs (mention_id, kind) VALUES ($1::uuid, 'REVERIFY') "
    "ON CONFLICT (mention_id) DO UPDATE SET rerun = true "
    "WHERE verification_jobs.lease_owner IS NOT NULL";

// A FAILED mention past the failure retention starts again.
constexpr char kRestart[] =
    "UPDATE mentions SET state = 'PENDING', reason = NULL, updated_at = now() "
    "WHERE id = $1::uuid";

// Wakes the workers (LISTEN portcullis_verification_jobs) when the transaction commits.
constexpr char kNotify[] = "SELECT pg_notify('portcullis_verification_jobs', '')";

// No row: the host is not a served site. Otherwise whether a target rule matches: an EXACT rule
// through the unique (url, kind) index, PREFIX rules of the site through (site_id, kind).
constexpr char kMatchTarget[] =
    "SELECT EXISTS (SELECT 1 FROM targets t WHERE t.url = $2 AND t.kind = 'EXACT' "
    "                 AND t.site_id = s.id) "
    "    OR EXISTS (SELECT 1 FROM targets t WHERE t.site_id = s.id AND t.kind = 'PREFIX' "
    "                 AND starts_with($2, t.url)) "
    "FROM sites s WHERE s.domain = $1";

constexpr char kGet[] =
    "SELECT id::text, source, target, state, coalesce(reason, ''), "
    "(extract(epoch FROM created_at) * 1000000)::bigint, "
    "(extract(epoch FROM updated_at) * 1000000)::bigint "
    "FROM mentions WHERE id = $1::uuid";

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

}  // namespace

absl::StatusOr<SubmitResult> PgMentionStore::Submit(const NewMention& mention) {
  SubmitResult result;
  std::string state;
  absl::Status status = pool_.Run("submit_mention", [&](pqxx::connection& connection) {
    result = SubmitResult();
    pqxx::work transaction(connection);
    const pqxx::result match =
        transaction.exec_params(kMatchTarget, mention.target_domain, mention.normalized_target);
    if (match.empty()) {
      result.target = TargetMatch::kUnknownSite;
      return;
    }
    if (!match[0][0].as<bool>()) {
      result.target = TargetMatch::kUnknownResource;
      return;
    }
    const pqxx::row row = transaction.exec_params1(
        kUpsertPending, mention.source, mention.target, crypto::ToHex(mention.source_hash),
        crypto::ToHex(mention.target_hash), absl::ToInt64Microseconds(failed_retention_));
    result.mention_id = row[0].as<std::string>();
    state = row[1].as<std::string>();
    result.created = row[2].as<bool>();
    const bool retention_over = row[3].as<bool>();
    // The lifecycle (DESIGN.md, issue 3 §5), decided under the row lock.
    if (result.created || state == "PENDING") {
      // A PENDING mention already has its job; the insert only repairs one that lost it.
      result.queued = transaction.exec_params(kQueueVerify, result.mention_id).affected_rows() == 1;
    } else if (state == "VERIFIED") {
      result.queued =
          transaction.exec_params(kQueueReverify, result.mention_id).affected_rows() == 1;
    } else if (state == "FAILED" && retention_over) {
      transaction.exec_params0(kRestart, result.mention_id);
      state = "PENDING";
      result.queued = transaction.exec_params(kQueueVerify, result.mention_id).affected_rows() == 1;
    }
    if (result.queued) {
      transaction.exec(kNotify);
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
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

absl::StatusOr<StoredMention> PgMentionStore::Get(absl::string_view mention_id) {
  if (!IsMentionId(mention_id)) {
    return absl::InvalidArgumentError("mention id is not a UUID");
  }
  bool found = false;
  StoredMention mention;
  std::string state;
  absl::Status status = pool_.Run("get_mention", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    const pqxx::result rows = transaction.exec_params(kGet, std::string(mention_id));
    if (rows.empty()) {
      return;
    }
    found = true;
    const pqxx::row row = rows[0];
    mention.mention_id = row[0].as<std::string>();
    mention.source = row[1].as<std::string>();
    mention.target = row[2].as<std::string>();
    state = row[3].as<std::string>();
    mention.reason = row[4].as<std::string>();
    mention.created_at = absl::FromUnixMicros(row[5].as<int64_t>());
    mention.updated_at = absl::FromUnixMicros(row[6].as<int64_t>());
  });
  if (!status.ok()) {
    return status;
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

absl::Status PgMentionStore::Ping() {
  return pool_.Run("ping", [](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    transaction.exec1("SELECT 1");
  });
}

}  // namespace portcullis::verifier::store
