#pragma once

#include "verifier-service/src/store/moderation_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// ModerationStore on PostgreSQL (migrations/0008_moderation.sql: sites.moderation, 0015:
// sites.avatar_proxy; the review columns of mentions, approval_rules).
class PgModerationStore final : public ModerationStore {
 public:
  // `pool` must outlive the store.
  explicit PgModerationStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<SiteRecord> SetSiteSettings(const std::string& domain,
                                             const SiteSettingsChange& change,
                                             const SiteBinding& visible_sites) override;
  absl::Status Review(absl::string_view mention_id, ReviewAction action, const std::string& note,
                      const std::string& reviewer, const SiteBinding& visible_sites) override;
  absl::StatusOr<AddApprovalRuleResult> AddRule(const ApprovalRuleRecord& rule, bool dry_run,
                                                const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<ApprovalRuleRecord>> ListRules(
      const std::string& site, const SiteBinding& visible_sites) override;
  absl::StatusOr<ApprovalRuleRecord> RemoveRule(absl::string_view rule_id,
                                                const SiteBinding& visible_sites) override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
