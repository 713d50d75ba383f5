#pragma once

#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/public_mention_store.h"

namespace portcullis::verifier::store {

// PublicMentionStore on PostgreSQL: `mentions` with its wm_id and change position, and
// `mention_tombstones` (migrations/0009_mention_feed.sql); the public predicate of
// public_mentions_sql.h.
class PgPublicMentionStore final : public PublicMentionStore {
 public:
  // `pool` must outlive the store.
  explicit PgPublicMentionStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<std::vector<StoredMention>> ListPublic(const PublicMentionQuery& query,
                                                        const SiteBinding& visible_sites) override;
  absl::StatusOr<PublicMentionCounts> CountPublic(
      absl::Span<const crypto::Sha256Digest> target_hashes,
      const SiteBinding& visible_sites) override;
  absl::StatusOr<MentionChangePage> ListChanges(absl::string_view domain, absl::string_view cursor,
                                                int limit,
                                                const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<StoredMention>> Export(absl::string_view domain, int64_t after_wm_id,
                                                    int limit,
                                                    const SiteBinding& visible_sites) override;
  absl::StatusOr<ImportResult> Import(absl::Span<const ImportedMention> mentions, bool reverify,
                                      const SiteBinding& visible_sites) override;
  absl::StatusOr<std::string> FindProxiedPhoto(absl::string_view photo_hash,
                                               const SiteBinding& visible_sites) override;

 private:
  PgConnectionPool& pool_;
};

// The change feed's cursor: the position (transaction, sequence number) of the last change read.
struct ChangeCursor {
  uint64_t xid = 0;
  int64_t seq = 0;
};
// "XID.SEQ" in decimal; the empty cursor is the start.
std::string EncodeChangeCursor(const ChangeCursor& cursor);
absl::StatusOr<ChangeCursor> DecodeChangeCursor(absl::string_view text);

}  // namespace portcullis::verifier::store
