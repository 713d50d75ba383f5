#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "verifier-service/src/store/site_binding.h"
#include "verifier-service/src/store/source_block.h"

namespace portcullis::verifier::store {

// One blocklist entry. `site` is the served site's domain, empty for a global entry.
struct BlockEntry {
  std::string site;
  BlockKind kind = BlockKind::kDomain;
  std::string value;  // As intake::NormalizeBlockValue stores it.
};

struct BlockRecord {
  BlockEntry entry;
  absl::Time created_at;
};

// Largest page of ListBlocks.
inline constexpr int kMaxBlockPageSize = 1000;

// The source blocklist (migrations/0007_create_source_blocks.sql). The check itself runs inside
// MentionStore::Submit's transaction. Thread-safe, blocking; errors as MentionStore's.
//
// Tenant scoping: every method takes the caller's `visible_sites` (empty: every site). A bound
// caller manages only the entries of its sites (filtered in the SQL): a site outside the binding,
// or the global scope (site empty), is PERMISSION_DENIED and nothing changes.
class BlocklistStore {
 public:
  virtual ~BlocklistStore() = default;

  // Adds `entry` (value already normalized). created=false when it was already there.
  // NOT_FOUND when `entry.site` is set and not a served site.
  virtual absl::StatusOr<bool> AddBlock(const BlockEntry& entry,
                                        const SiteBinding& visible_sites) = 0;

  // Entries of one scope: `site` empty lists the global ones. Ordered by (kind, value), at most
  // `limit`, after the (kind, value) pair `after_kind`/`after_value` (empty after_value: from
  // the start).
  virtual absl::StatusOr<std::vector<BlockRecord>> ListBlocks(const std::string& site,
                                                              const std::string& after_kind,
                                                              const std::string& after_value,
                                                              int limit,
                                                              const SiteBinding& visible_sites) = 0;

  // Removes the entry; false when there was none.
  virtual absl::StatusOr<bool> RemoveBlock(const BlockEntry& entry,
                                           const SiteBinding& visible_sites) = 0;
};

}  // namespace portcullis::verifier::store
