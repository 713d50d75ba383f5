#pragma once

// webmention.io's read API (issue 18), as a store: the public's mentions by numeric page, their
// counts, a change feed that reports removals, and a site's mentions exported and imported.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/crypto/sha256.h"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/site_binding.h"

namespace portcullis::verifier::store {

// Limits of the public reads (the gateway's parameters are checked against the same numbers).
inline constexpr int kMaxPublicPageSize = 100;
inline constexpr int kDefaultPublicPageSize = 20;
inline constexpr int kMaxPublicTargets = 20;
// Deepest row a numeric page may start at (page * page size): deeper pages cost a scan of every
// row before them; since_id reads any depth at the cost of one page.
inline constexpr int64_t kMaxPublicOffset = 50000;
inline constexpr int kMaxChangesPerPage = 1000;
inline constexpr int kMaxExportPageSize = 1000;
inline constexpr int kMaxImportBatch = 500;

// Which public mentions ListPublic reads: of a site or of targets, in one order, one page.
struct PublicMentionQuery {
  // Exactly one: the site's domain, or the SHA-256 of 1 to kMaxPublicTargets normalized targets.
  std::string domain;
  std::vector<crypto::Sha256Digest> target_hashes;
  // Received order (wm_id) unless `by_update` (updated_at, then wm_id); newest first unless
  // `ascending`.
  bool by_update = false;
  bool ascending = false;
  int page_size = kDefaultPublicPageSize;  // 1 to kMaxPublicPageSize.
  int page = 0;                            // From 0; page * page_size <= kMaxPublicOffset.
  std::vector<std::string> types;          // MentionContent::type values; empty: any.
  std::optional<absl::Time> since;         // Received at or after.
  int64_t since_id = 0;                    // wm_id greater than this.
};

// Public mentions of targets by type (MentionContent::type); `total` is their sum.
struct PublicMentionCounts {
  int64_t total = 0;
  int64_t mention = 0;
  int64_t reply = 0;
  int64_t like = 0;
  int64_t repost = 0;
  int64_t bookmark = 0;
  int64_t rsvp = 0;
};

// One entry of the change feed: the mention as it is now, or `deleted` (gone, or no longer
// public; `mention` is then empty but for its wm_id).
struct MentionChange {
  int64_t wm_id = 0;
  bool deleted = false;
  StoredMention mention;
};

struct MentionChangePage {
  std::vector<MentionChange> changes;
  // Where the next read starts; the cursor given when nothing changed since.
  std::string next_cursor;
};

// A mention to import: the pair (as a submission names it), its state, content and times.
struct ImportedMention {
  NewMention pair;
  MentionState state = MentionState::kVerified;
  std::string reason;      // For FAILED.
  MentionContent content;  // Already sanitized by the caller; empty type: none.
  absl::Time received;     // Kept as the mention's created_at (wm-received).
  std::optional<absl::Time> updated;
  std::optional<absl::Time> verified;
};

struct ImportResult {
  int created = 0;
  int unchanged = 0;  // The pair was already stored: left as it is.
  int rejected = 0;   // Not a served target (site unknown, or no target rule matches).
};

// Implementations are thread-safe and block (call them from a blocking pool). Errors as
// MentionStore's: UNAVAILABLE / DEADLINE_EXCEEDED (retry), INTERNAL, INVALID_ARGUMENT for a
// malformed query, PERMISSION_DENIED for a site outside `visible_sites` (empty: every site).
class PublicMentionStore {
 public:
  virtual ~PublicMentionStore() = default;

  // One page of the public's mentions (public_mentions_sql.h).
  virtual absl::StatusOr<std::vector<StoredMention>> ListPublic(
      const PublicMentionQuery& query, const SiteBinding& visible_sites) = 0;

  // The public's mentions of the targets with these hashes (1 to kMaxPublicTargets), counted by
  // an index scan of those targets' public rows: as exact as ListPublic, never a table scan.
  virtual absl::StatusOr<PublicMentionCounts> CountPublic(
      absl::Span<const crypto::Sha256Digest> target_hashes, const SiteBinding& visible_sites) = 0;

  // Up to `limit` (1 to kMaxChangesPerPage) changes of `domain`'s mentions after `cursor` (empty:
  // from the start; else a next_cursor), in the order they were committed. A mention changed
  // several times since the cursor appears once, as it is now. Only changes of transactions that
  // finished before every transaction still running are returned, so a later read never finds a
  // change behind a cursor already handed out (a long transaction delays the feed, never loses
  // from it). INVALID_ARGUMENT for a cursor this store did not make.
  virtual absl::StatusOr<MentionChangePage> ListChanges(absl::string_view domain,
                                                        absl::string_view cursor, int limit,
                                                        const SiteBinding& visible_sites) = 0;

  // Up to `limit` (1 to kMaxExportPageSize) mentions of `domain`, any state, with wm_id greater
  // than `after_wm_id`, in wm_id order.
  virtual absl::StatusOr<std::vector<StoredMention>> Export(absl::string_view domain,
                                                            int64_t after_wm_id, int limit,
                                                            const SiteBinding& visible_sites) = 0;

  // Stores each new pair of `mentions` (1 to kMaxImportBatch) as given, in one transaction; a
  // pair already stored is left as it is, so importing twice changes nothing. With `reverify`,
  // new pairs are stored PENDING without content (verification finds it) with a verification
  // job each, and the workers are woken. PERMISSION_DENIED when a target's site is outside
  // `visible_sites` (nothing is stored then).
  virtual absl::StatusOr<ImportResult> Import(absl::Span<const ImportedMention> mentions,
                                              bool reverify, const SiteBinding& visible_sites) = 0;

  // Avatar proxy (issue 17): the author photo URL whose SHA-256 hex is `photo_hash`, when a
  // mention the public sees, on a site with the avatar proxy on, has it (one index probe).
  // NOT_FOUND otherwise: only such a URL may ever be fetched for a reader.
  virtual absl::StatusOr<std::string> FindProxiedPhoto(absl::string_view photo_hash,
                                                       const SiteBinding& visible_sites) = 0;
};

}  // namespace portcullis::verifier::store
