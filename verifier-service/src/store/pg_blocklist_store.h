#pragma once

#include "verifier-service/src/store/blocklist_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// BlocklistStore on PostgreSQL (table `source_blocks`).
class PgBlocklistStore final : public BlocklistStore {
 public:
  // `pool` must outlive the store.
  explicit PgBlocklistStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<bool> AddBlock(const BlockEntry& entry, const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<BlockRecord>> ListBlocks(const std::string& site,
                                                      const std::string& after_kind,
                                                      const std::string& after_value, int limit,
                                                      const SiteBinding& visible_sites) override;
  absl::StatusOr<bool> RemoveBlock(const BlockEntry& entry,
                                   const SiteBinding& visible_sites) override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
