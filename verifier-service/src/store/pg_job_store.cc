#include "verifier-service/src/store/pg_job_store.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"

namespace portcullis::verifier::store {
namespace {

// SKIP LOCKED: workers claiming at the same moment take different rows instead of waiting for
// each other; a row is due when its run_at passed and nobody holds a live lease on it.
constexpr PgStatement kClaim{
    "job_claim",
    "WITH due AS ("
    "  SELECT id FROM verification_jobs "
    "  WHERE run_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at <= now()) "
    "  ORDER BY run_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) "
    "UPDATE verification_jobs j SET lease_owner = $1, "
    "  lease_expires_at = now() + $3::bigint * interval '1 microsecond', "
    "  attempts = j.attempts + 1 "
    "FROM due, mentions m WHERE j.id = due.id AND m.id = j.mention_id "
    "RETURNING j.id, j.mention_id::text, m.source, m.target, j.kind, j.attempts"};

constexpr PgStatement kRenew{
    "job_renew",
    // Rows are locked in id order, as FinishBatch locks them: an UPDATE over `id = ANY` locks in
    // scan order, and a renewal crossing a batch being recorded deadlocked (one of them aborted,
    // and its jobs' leases ran out under load).
    "WITH owned AS (SELECT id FROM verification_jobs WHERE lease_owner = $1 "
    "AND id = ANY ($3::bigint[]) ORDER BY id FOR UPDATE) "
    "UPDATE verification_jobs j SET lease_expires_at = now() + $2::bigint * interval '1 microsecond' "
    "FROM owned WHERE j.id = owned.id"};

// The jobs of a batch still leased to $2, with their mentions, locked in job id order (ORDER BY
// sorts before the rows are locked, so every batch locks in one order).
constexpr PgStatement kLockOwned{
    "job_lock_owned",
    "SELECT j.id, j.mention_id::text, j.rerun, m.state, j.attempts FROM verification_jobs j "
    "JOIN mentions m ON m.id = j.mention_id "
    "WHERE j.id = ANY ($1::bigint[]) AND j.lease_owner = $2 ORDER BY j.id FOR UPDATE OF j, m"};

// Moderation (issue 16): re-verification found content (hash n.hash) other than what was
// reviewed, on a site under moderation `all`: an approved or rejected mention goes back to
// UNREVIEWED. A hidden one stays hidden; unchanged content keeps its review state.
#define PORTCULLIS_REVIEWED_CONTENT_CHANGED                                               \
  "(m.content_hash IS NOT NULL AND m.content_hash <> n.hash "                            \
  " AND m.review IN ('APPROVED', 'REJECTED') "                                           \
  " AND (SELECT s.moderation FROM sites s WHERE s.domain = m.target_domain) = 'all')"

// The outcome statements stamp the change themselves (the feed's order, migrations/0009), so the
// PL/pgSQL trigger that would otherwise stamp it, copying the whole row, is not called
// (migrations/0018).
#define PORTCULLIS_STAMP_CHANGE \
  "change_xid = pg_current_xact_id(), change_seq = nextval('mention_change_seq')"

// A match: the mention is VERIFIED with what its source says now, in place (the same row,
// whatever it held before); any failure reason and no-link diagnostic go. The content hash
// covers what a reviewer sees: type, rsvp, author, name, published, url and content.
constexpr PgStatement kSetVerified{
    "job_set_verified",
    "UPDATE mentions m SET state = 'VERIFIED', reason = NULL, links_to_target_host = '{}', "
    "  type = $2, rsvp = nullif($3, ''), author_name = nullif($4, ''), "
    "  author_url = nullif($5, ''), author_photo = nullif($6, ''), author_note = nullif($7, ''), "
    "  author_photo_hash = portcullis_photo_hash(nullif($6, '')), "
    "  entry_name = nullif($8, ''), published = nullif($9, ''), url = nullif($10, ''), "
    "  content_text = nullif($11, ''), content_html = nullif($12, ''), content_truncated = $13, "
    "  verified_at = now(), attempts = $14, updated_at = now(), content_hash = n.hash, "
    "  " PORTCULLIS_STAMP_CHANGE ", "
    "  review = CASE WHEN " PORTCULLIS_REVIEWED_CONTENT_CHANGED " THEN 'UNREVIEWED' "
    "    ELSE m.review END, "
    "  review_reason = CASE WHEN " PORTCULLIS_REVIEWED_CONTENT_CHANGED " THEN 'content_changed' "
    "    ELSE m.review_reason END "
    "FROM (SELECT sha256(convert_to(concat_ws(chr(31), $2::text, $3::text, $4::text, $5::text, "
    "  $6::text, $7::text, $8::text, $9::text, $10::text, $11::text, $12::text), 'UTF8')) "
    "  AS hash) n "
    "WHERE m.id = $1::uuid"};

#undef PORTCULLIS_REVIEWED_CONTENT_CHANGED

// A permanent failure that keeps what was stored (404, forbidden address, ...: FAILED mentions
// are not served anyway). $4: the no-link diagnostic as a PostgreSQL array literal.
constexpr PgStatement kSetFailed{
    "job_set_failed",
    "UPDATE mentions SET state = 'FAILED', reason = nullif($2, ''), attempts = $3, "
    "  links_to_target_host = $4::text[], updated_at = now(), " PORTCULLIS_STAMP_CHANGE " "
    "WHERE id = $1::uuid"};

// The source withdrew the mention (the link is gone, or the page is): its content and author
// are no longer served, so they are not kept.
constexpr PgStatement kSetWithdrawn{
    "job_set_withdrawn",
    "UPDATE mentions SET state = 'FAILED', reason = nullif($2, ''), attempts = $3, "
    "  links_to_target_host = $4::text[], updated_at = now(), " PORTCULLIS_STAMP_CHANGE ", "
    "  type = NULL, rsvp = NULL, author_name = NULL, author_url = NULL, author_photo = NULL, "
    "  author_photo_hash = NULL, "
    "  author_note = NULL, entry_name = NULL, published = NULL, url = NULL, "
    "  content_text = NULL, content_html = NULL, content_truncated = false "
    "WHERE id = $1::uuid"};

#undef PORTCULLIS_STAMP_CHANGE

constexpr PgStatement kDelete{"job_delete",
                              "DELETE FROM verification_jobs WHERE id = ANY ($1::bigint[])"};

// The mention was submitted again while this job ran: one more run, from the start.
constexpr PgStatement kRequeue{
    "job_requeue",
    "UPDATE verification_jobs SET rerun = false, attempts = 0, run_at = now(), "
    "  lease_owner = NULL, lease_expires_at = NULL, last_error = NULL, kind = 'REVERIFY' "
    "WHERE id = $1"};

constexpr PgStatement kRetry{
    "job_retry",
    "UPDATE verification_jobs SET run_at = now() + $2::bigint * interval '1 microsecond', "
    "  lease_owner = NULL, lease_expires_at = NULL, last_error = $3 "
    "WHERE id = $1"};

constexpr char kRelease[] =
    "UPDATE verification_jobs SET lease_owner = NULL, lease_expires_at = NULL "
    "WHERE lease_owner = $1";

// NULL when the queue is empty (greatest() would turn a NULL into zero).
constexpr PgStatement kNextDue{
    "job_next_due",
    "SELECT CASE WHEN due IS NULL THEN NULL "
    "  ELSE (extract(epoch FROM greatest(due - now(), interval '0')) * 1000000)::bigint END "
    "FROM (SELECT min(greatest(run_at, coalesce(lease_expires_at, run_at))) AS due "
    "      FROM verification_jobs) next"};

constexpr char kNotify[] = "SELECT pg_notify('portcullis_verification_jobs', '')";

// Failure reasons meaning the source withdrew the mention (unmention, delete).
bool IsWithdrawal(const std::string& reason) {
  return reason == kReasonNoLink || reason == kReasonSourceGone;
}

// `text` as a text parameter: PostgreSQL cannot store NUL bytes, so they are dropped.
std::string WithoutNul(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c != '\0') {
      out += c;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<JobRecord>> PgJobStore::Claim(const std::string& owner, int limit,
                                                         absl::Duration lease) {
  std::vector<JobRecord> jobs;
  absl::Status status = pool_.Run("claim_jobs", [&](pqxx::connection& connection) {
    jobs.clear();
    pqxx::work transaction(connection);
    const pqxx::result rows =
        ExecPrepared(transaction, kClaim, owner, limit, absl::ToInt64Microseconds(lease));
    for (const pqxx::row& row : rows) {
      JobRecord job;
      job.job_id = row[0].as<int64_t>();
      job.mention_id = row[1].as<std::string>();
      job.source = row[2].as<std::string>();
      job.target = row[3].as<std::string>();
      job.reverification = row[4].as<std::string>() == "REVERIFY";
      job.attempts = row[5].as<int>();
      jobs.push_back(std::move(job));
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  return jobs;
}

absl::StatusOr<int> PgJobStore::RenewLeases(const std::string& owner,
                                            absl::Span<const int64_t> job_ids,
                                            absl::Duration lease) {
  if (job_ids.empty()) {
    return 0;
  }
  // A PostgreSQL array literal of integers: nothing in it needs quoting.
  const std::string ids = absl::StrCat("{", absl::StrJoin(job_ids, ","), "}");
  int renewed = 0;
  absl::Status status = pool_.Run("renew_leases", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    renewed = static_cast<int>(
        ExecPrepared(transaction, kRenew, owner, absl::ToInt64Microseconds(lease), ids)
            .affected_rows());
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  return renewed;
}

namespace {

// A PostgreSQL array literal of integers: nothing in it needs quoting.
template <typename T>
std::string ArrayLiteral(const std::vector<T>& values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

// Records the results of `requests`, taken in `order` (job id order), in `transaction`, without
// the commit: one statement locks every job still leased to `owner` and one deletes every finished
// job; each outcome is written to its mention by a statement of its own.
// owned[i]: whether request i's job was still leased to `owner` (nothing is written for it when
// not: another worker took it over, and its outcome counts).
std::vector<bool> FinishIn(pqxx::work& transaction, const std::string& owner,
                           absl::Span<const FinishRequest> requests,
                           const std::vector<size_t>& order) {
  std::vector<int64_t> ids;
  ids.reserve(requests.size());
  for (const size_t i : order) {
    ids.push_back(requests[i].job_id);
  }
  struct Owned {
    std::string mention_id;
    bool rerun = false;
    std::string state;
    int attempts = 0;
  };
  absl::flat_hash_map<int64_t, Owned> owned_jobs;
  for (const pqxx::row& row : ExecPrepared(transaction, kLockOwned, ArrayLiteral(ids), owner)) {
    owned_jobs[row[0].as<int64_t>()] = {row[1].as<std::string>(), row[2].as<bool>(),
                                        row[3].as<std::string>(), row[4].as<int>()};
  }
  std::vector<bool> owned(requests.size(), false);
  std::vector<int64_t> finished;
  for (const size_t i : order) {
    const auto it = owned_jobs.find(requests[i].job_id);
    if (it == owned_jobs.end()) {
      continue;
    }
    owned[i] = true;
    const int64_t job_id = requests[i].job_id;
    const JobResult& result = requests[i].result;
    const Owned& job = it->second;
    bool done = true;
    switch (result.kind) {
      case JobResult::Kind::kVerified: {
        // One row per statement: content passed as text parameters is read as it is, where
        // arrays of it went through PostgreSQL's array parser character by character.
        const MentionContent& c = result.content;
        ExecPrepared0(transaction, kSetVerified, job.mention_id,
                      c.type.empty() ? std::string("mention") : c.type, WithoutNul(c.rsvp),
                      WithoutNul(c.author_name), WithoutNul(c.author_url),
                      WithoutNul(c.author_photo), WithoutNul(c.author_note), WithoutNul(c.name),
                      WithoutNul(c.published), WithoutNul(c.url), WithoutNul(c.content_text),
                      WithoutNul(c.content_html), c.content_truncated, job.attempts);
        break;
      }
      case JobResult::Kind::kFailed:
        // The diagnostic explains a no_link failure only.
        ExecPrepared0(transaction, IsWithdrawal(result.reason) ? kSetWithdrawn : kSetFailed,
                      job.mention_id, result.reason, job.attempts,
                      TextArrayLiteral(result.reason == kReasonNoLink ? result.links_to_target_host
                                                                      : LinkDiagnostic()));
        break;
      case JobResult::Kind::kGiveUp:
        // A transient failure never deletes a VERIFIED mention: state and content stay.
        if (job.state != "VERIFIED") {
          ExecPrepared0(transaction, kSetFailed, job.mention_id, result.reason, job.attempts,
                        TextArrayLiteral({}));
        }
        break;
      case JobResult::Kind::kRetry:
        ExecPrepared0(transaction, kRetry, job_id, absl::ToInt64Microseconds(result.retry_in),
                      result.reason);
        done = false;
        break;
    }
    if (done && job.rerun) {
      ExecPrepared0(transaction, kRequeue, job_id);
      transaction.exec(kNotify);
    } else if (done) {
      finished.push_back(job_id);
    }
  }
  if (!finished.empty()) {
    ExecPrepared0(transaction, kDelete, ArrayLiteral(finished));
  }
  return owned;
}

absl::Status NotLeased(int64_t job_id, const std::string& owner) {
  return absl::FailedPreconditionError(
      absl::StrCat("job ", job_id, " is no longer leased to ", owner));
}

}  // namespace

absl::Status PgJobStore::Finish(int64_t job_id, const std::string& owner, const JobResult& result) {
  return FinishBatch(owner, {FinishRequest{job_id, result}})[0];
}

std::vector<absl::Status> PgJobStore::FinishBatch(const std::string& owner,
                                                  absl::Span<const FinishRequest> requests) {
  // Row locks taken in one order by every batch (kLockOwned sorts too; the updates follow).
  std::vector<size_t> order(requests.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return requests[a].job_id < requests[b].job_id; });
  std::vector<bool> owned;
  const absl::Status status = pool_.Run("finish_jobs", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    owned = FinishIn(transaction, owner, requests, order);
    transaction.commit();
  });
  std::vector<absl::Status> statuses(requests.size());
  if (!status.ok()) {
    if (requests.size() == 1) {
      statuses[0] = status;
      return statuses;
    }
    // Nothing of the batch was written: one by one, so one job's trouble is only its own.
    for (size_t i = 0; i < requests.size(); ++i) {
      statuses[i] = Finish(requests[i].job_id, owner, requests[i].result);
    }
    return statuses;
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    statuses[i] = owned[i] ? absl::OkStatus() : NotLeased(requests[i].job_id, owner);
  }
  return statuses;
}

absl::Status PgJobStore::ReleaseAll(const std::string& owner) {
  return pool_.Run("release_jobs", [&](pqxx::connection& connection) {
    pqxx::work transaction(connection);
    transaction.exec_params0(kRelease, owner);
    transaction.commit();
  });
}

absl::StatusOr<std::optional<absl::Duration>> PgJobStore::NextDueIn() {
  std::optional<absl::Duration> next;
  absl::Status status = pool_.Run("next_due_job", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    const pqxx::row row = ExecPrepared1(transaction, kNextDue);
    next =
        row[0].is_null() ? std::nullopt : std::optional(absl::Microseconds(row[0].as<int64_t>()));
  });
  if (!status.ok()) {
    return status;
  }
  return next;
}

namespace {

// One mention's job, due or not, unless someone holds a live lease on it. A worker claiming the
// same row at this moment holds its lock: this statement waits for that claim to commit and then
// finds the lease taken.
constexpr char kClaimMention[] =
    "UPDATE verification_jobs j SET lease_owner = $2, "
    "  lease_expires_at = now() + $3::bigint * interval '1 microsecond', "
    "  attempts = j.attempts + 1 "
    "FROM mentions m "
    "WHERE j.mention_id = $1::uuid AND m.id = j.mention_id "
    "  AND (j.lease_expires_at IS NULL OR j.lease_expires_at <= now()) "
    "RETURNING j.id, j.mention_id::text, m.source, m.target, j.kind, j.attempts";

constexpr char kJobExists[] = "SELECT count(*) FROM verification_jobs WHERE mention_id = $1::uuid";

}  // namespace

absl::StatusOr<MentionClaim> PgJobStore::ClaimMention(const std::string& mention_id,
                                                      const std::string& owner,
                                                      absl::Duration lease) {
  MentionClaim claim;
  absl::Status status = pool_.Run("claim_mention_job", [&](pqxx::connection& connection) {
    claim = MentionClaim{};
    pqxx::work transaction(connection);
    const pqxx::result rows =
        transaction.exec_params(kClaimMention, mention_id, owner, absl::ToInt64Microseconds(lease));
    if (rows.empty()) {
      claim.kind = transaction.exec_params1(kJobExists, mention_id)[0].as<int64_t>() > 0
                       ? MentionClaim::Kind::kBusy
                       : MentionClaim::Kind::kNoJob;
    } else {
      const pqxx::row row = rows[0];
      claim.kind = MentionClaim::Kind::kClaimed;
      claim.job.job_id = row[0].as<int64_t>();
      claim.job.mention_id = row[1].as<std::string>();
      claim.job.source = row[2].as<std::string>();
      claim.job.target = row[3].as<std::string>();
      claim.job.reverification = row[4].as<std::string>() == "REVERIFY";
      claim.job.attempts = row[5].as<int>();
    }
    transaction.commit();
  });
  if (!status.ok()) {
    return status;
  }
  return claim;
}

}  // namespace portcullis::verifier::store
