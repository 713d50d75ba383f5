#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/crypto/sha256.h"
#include "verifier-service/src/store/mention_content.h"
#include "verifier-service/src/store/site_binding.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::store {

// Where a mention is in its verification lifecycle (the `state` column).
enum class MentionState { kPending, kVerified, kFailed };

// A validated submission, ready to be stored.
struct NewMention {
  std::string source;                // As submitted.
  std::string target;                // As submitted.
  crypto::Sha256Digest source_hash;  // SHA-256 of the normalized source.
  crypto::Sha256Digest target_hash;  // SHA-256 of the normalized target.
  std::string target_domain;         // The target's serialized host: which site it is on.
  std::string normalized_target;     // url::Normalize(target): what target rules match.
  // url::Normalize(source): what the source blocklist matches (its host for domain entries).
  // Empty: `source` is taken as already normalized.
  std::string normalized_source;
};

// Whether a submission's target is one we receive mentions for.
enum class TargetMatch {
  kServed,           // On a served site and matching one of its targets.
  kUnknownSite,      // Its host is not a served site.
  kUnknownResource,  // The site is served, but no target rule matches.
};

// What Submit did.
struct SubmitResult {
  // Anything but kServed: nothing was stored and the other fields are unset.
  TargetMatch target = TargetMatch::kServed;
  std::string mention_id;  // UUID, lowercase, with dashes.
  MentionState state = MentionState::kPending;
  bool created = false;  // False when the (source, target) pair was already stored.
  // True when this call queued a (re-)verification (and woke the workers).
  bool queued = false;
};

// One stored mention.
struct StoredMention {
  std::string mention_id;
  std::string source;
  std::string target;
  MentionState state = MentionState::kPending;
  std::string reason;  // Empty when none.
  absl::Time created_at;
  absl::Time updated_at;
  // What the last successful verification found. `content.type` is empty when the mention was
  // never verified, or when its source withdrew it (FAILED no_link / source_gone): then every
  // other content field is empty too.
  MentionContent content{.type = ""};
  // When the mention was last VERIFIED; unset when never.
  std::optional<absl::Time> verified_at;
  // For FAILED no_link: the links to the target's host the source contains instead.
  LinkDiagnostic links_to_target_host;
  // Claims of the current (or, when none is queued, the last) verification job.
  int attempts = 0;
  // Moderation (issue 16): the review state ("UNREVIEWED", "APPROVED", "REJECTED", "HIDDEN"),
  // the reviewer's note (or why it changed by itself), `content_changed` or empty, when a person
  // last reviewed it, and whether the public sees it now (public_mentions_sql.h).
  std::string review = "UNREVIEWED";
  std::string review_note;
  std::string review_reason;
  std::optional<absl::Time> reviewed_at;
  bool shown = false;
  // The numeric id (webmention.io's wm-id): assigned at first insert, increasing, never reused.
  int64_t wm_id = 0;
  // Avatar proxy (issue 17): the SHA-256 hex of the author photo URL when the mention's site
  // proxies author photos and there is a photo; empty otherwise.
  std::string photo_proxy_hash;
};

// Largest and default page of MentionStore::List.
inline constexpr int kMaxMentionPageSize = 1000;
inline constexpr int kDefaultMentionPageSize = 100;

// Which mentions MentionStore::List reads: those of one site, or of one target.
struct MentionQuery {
  // Exactly one of the two: the site's domain (as sites.domain), or the SHA-256 of the
  // normalized target (the mention key's target half).
  std::string domain;
  std::optional<crypto::Sha256Digest> target_hash;
  // Filters; unset/empty: any.
  std::optional<MentionState> state;
  std::string type;  // A MentionContent::type value.
  std::string review;  // A StoredMention::review value; empty: any.
  // Only what the public sees (StoredMention::shown): the read side of callers that may not
  // review.
  bool shown_only = false;
  int page_size = kDefaultMentionPageSize;  // 1 to kMaxMentionPageSize.
  // Empty for the first page, else MentionPage::next_page_token of the previous page.
  std::string page_token;
};

// One page of mentions, newest change first (updated_at descending), then by id.
struct MentionPage {
  std::vector<StoredMention> mentions;
  // Opaque; empty on the last page.
  std::string next_page_token;
};

// Admission limits of MentionStore::Submit (0: no limit). Both apply only when a submission would
// queue a new verification of a mention that is not PENDING yet (a new pair, or a FAILED one past
// its retention); repeats of a PENDING or VERIFIED pair are never refused.
struct SubmitLimits {
  // PENDING mentions whose normalized source has the same host: beyond it, RESOURCE_EXHAUSTED
  // (the gateway's 429 + Retry-After; nothing stored, so the sender's retry loses nothing).
  int64_t max_pending_per_source_host = 0;
  // Verification jobs queued or running: beyond it, UNAVAILABLE (503 + Retry-After). Both limits
  // are checked against counts kept in memory (refresh_interval; the bound on overshooting is in
  // admission_counters.h); an acceptance is committed only after the check, never dropped
  // after it.
  int64_t max_queue_length = 0;
  // How old the counts the limits are checked against may be (admission_counters.h): each is
  // read from the database at most this long before a decision and raised by this process's own
  // acceptances since. Zero: read before every decision (exact within one process).
  absl::Duration refresh_interval = absl::Seconds(1);
};

// Durable storage of mentions. Implementations are thread-safe and block; call them from a
// blocking pool, never from a gRPC reactor thread. Errors: UNAVAILABLE / DEADLINE_EXCEEDED when
// the database cannot answer now (retry), INTERNAL for anything else; messages carry no SQL.
class MentionStore {
 public:
  virtual ~MentionStore() = default;

  // In one transaction, committed before it returns (so an acceptance is durable): checks that
  // the target is served (sites and targets), stores the mention and queues its verification,
  // following the lifecycle:
  //   - new pair: stored PENDING, one verification job;
  //   - PENDING: unchanged, no second job; when its job is running now, one more run after it
  //     (the sender may have changed the source after that run fetched it);
  //   - VERIFIED: unchanged, one re-verification job, never more than one queued;
  //   - FAILED less than the failure retention ago: unchanged, nothing queued;
  //   - FAILED longer ago: PENDING again, one verification job.
  // A source on the blocklist (global, or of the target's site; see blocklist_store.h) overrides
  // all of this: the pair is stored (or becomes) FAILED `blocked` and any job it had is deleted,
  // so nothing fetches it; a VERIFIED mention of a now-blocked source thus stops being served.
  // An erased source (a tombstone of its source or source host for the target's site or for every
  // site; erasure_store.h) is handled the same way with the reason `erased`, and whatever content
  // the pair held is cleared.
  // The returned state is the mention's state after the call.
  virtual absl::StatusOr<SubmitResult> Submit(const NewMention& mention) = 0;

  // The mention with `mention_id` (a UUID), read only when its target's site is in
  // `visible_sites` (empty: every site). NOT_FOUND when there is none, PERMISSION_DENIED when there
  // is one but of a site outside the binding (decided by an existence check alone: nothing of it
  // is read), INVALID_ARGUMENT when `mention_id` is not a UUID.
  virtual absl::StatusOr<StoredMention> Get(absl::string_view mention_id,
                                            const SiteBinding& visible_sites) = 0;

  // One page of the mentions `query` names, of the sites in `visible_sites` only (empty: every
  // site; filtered in the SQL). INVALID_ARGUMENT when the query is malformed (neither or both of
  // domain and target, page size out of range, a page token this store did not make);
  // PERMISSION_DENIED when `query.domain` is outside the binding, or when a page by target comes
  // back empty because the target's mentions are of a site outside it.
  virtual absl::StatusOr<MentionPage> List(const MentionQuery& query,
                                           const SiteBinding& visible_sites) = 0;

  // OK when the database answers a trivial query.
  virtual absl::Status Ping() = 0;
};

// Submissions answered once they are durable, without a thread waiting for each (MentionWriter
// batches them).
class MentionSubmitter {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<SubmitResult>) &&>;
  virtual ~MentionSubmitter() = default;

  // One submission with where its answer goes.
  struct Submission {
    NewMention mention;
    Done done;
  };

  // Calls `done` exactly once, from any thread, with what MentionStore::Submit answers for
  // `mention`; UNAVAILABLE when the submitter is overloaded or stopping.
  virtual void Submit(NewMention mention, Done done) = 0;

  // Submit for each of `submissions`, taken in together: all of them or (overloaded, stopping)
  // none, each answered UNAVAILABLE then (SubmitMentions, issue 21).
  virtual void SubmitAll(std::vector<Submission> submissions) = 0;
};

}  // namespace portcullis::verifier::store
