#pragma once

#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/site_store.h"

namespace portcullis::verifier::store {

// SiteStore on PostgreSQL (tables `sites` and `targets`,
// migrations/0002_create_sites_and_targets.sql).
class PgSiteStore final : public SiteStore {
 public:
  // `pool` must outlive the store.
  explicit PgSiteStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<AddSiteResult> AddSite(const std::string& domain,
                                        const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<SiteRecord>> ListSites(const std::string& after, int limit,
                                                    const SiteBinding& visible_sites) override;
  absl::StatusOr<int64_t> RemoveSite(const std::string& domain,
                                     const SiteBinding& visible_sites) override;
  absl::StatusOr<AddTargetsResult> AddTargets(absl::Span<const TargetRule> rules,
                                              const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<TargetRecord>> ListTargets(const std::string& domain,
                                                        const std::optional<TargetRule>& after,
                                                        int limit,
                                                        const SiteBinding& visible_sites) override;
  absl::StatusOr<TargetRecord> RemoveTarget(const std::string& url, TargetKind kind,
                                            const SiteBinding& visible_sites) override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
