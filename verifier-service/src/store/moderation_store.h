#pragma once

// Moderation (issue 16): a site's policy, a mention's review state, and approval rules. What the
// public sees is decided at read time from them (public_mentions_sql.h); this store only
// changes them. Review changes are UPDATEs of the mention row itself.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/store/site_binding.h"
#include "verifier-service/src/store/site_store.h"

namespace portcullis::verifier::store {

// A site's moderation policy, as stored in sites.moderation.
enum class Moderation { kOff, kFirstTimeAuthors, kAll };
const char* ModerationName(Moderation moderation);  // "off", "first-time-authors", "all"
std::optional<Moderation> ParseModeration(absl::string_view name);

// The site settings one SetSiteSettings call changes; an unset one is left as it is.
struct SiteSettingsChange {
  std::optional<Moderation> moderation;
  // Whether the public feeds reference author photos through the gateway's avatar proxy.
  std::optional<bool> avatar_proxy;
};

// What a reviewer does to one mention.
enum class ReviewAction { kApprove, kReject, kHide, kUnhide };
const char* ReviewActionName(ReviewAction action);  // "APPROVE", "REJECT", "HIDE", "UNHIDE"

// What an approval rule matches (approval_rules.kind).
enum class ApprovalRuleKind {
  kAuthorUrl,     // "AUTHOR_URL": the mention's author URL equals the value.
  kSourcePrefix,  // "SOURCE_PREFIX": the normalized source starts with the value.
};
const char* ApprovalRuleKindName(ApprovalRuleKind kind);

struct ApprovalRuleRecord {
  std::string rule_id;  // Empty for a rule not stored (a dry run).
  std::string site;
  ApprovalRuleKind kind = ApprovalRuleKind::kAuthorUrl;
  std::string value;  // Normalized.
  absl::Time created_at;
};

struct AddApprovalRuleResult {
  ApprovalRuleRecord rule;
  bool created = false;
  // VERIFIED mentions of the site the rule matches that are UNREVIEWED: what it approves now.
  int64_t reach = 0;
};

// Thread-safe, blocking; errors as MentionStore's. Tenant scoping as SiteStore's: a site outside
// `visible_sites` is PERMISSION_DENIED and nothing of it is read or changed.
class ModerationStore {
 public:
  virtual ~ModerationStore() = default;

  // Changes the settings `change` sets and only those, and returns the site. NOT_FOUND when the
  // site is not served.
  virtual absl::StatusOr<SiteRecord> SetSiteSettings(const std::string& domain,
                                                     const SiteSettingsChange& change,
                                                     const SiteBinding& visible_sites) = 0;

  // Sets the site's policy only.
  absl::StatusOr<SiteRecord> SetModeration(const std::string& domain, Moderation moderation,
                                           const SiteBinding& visible_sites) {
    return SetSiteSettings(domain, {.moderation = moderation}, visible_sites);
  }

  // Applies `action` to the mention (an UPDATE of its row: review state, note, reviewer, time;
  // HIDE keeps the state it replaces for UNHIDE). NOT_FOUND when there is no such mention,
  // PERMISSION_DENIED when it is of a site outside the binding, INVALID_ARGUMENT for a malformed id.
  virtual absl::Status Review(absl::string_view mention_id, ReviewAction action,
                              const std::string& note, const std::string& reviewer,
                              const SiteBinding& visible_sites) = 0;

  // Adds the rule to `rule.site` (or, with `dry_run`, only counts its reach). Idempotent.
  // NOT_FOUND when the site is not served.
  virtual absl::StatusOr<AddApprovalRuleResult> AddRule(const ApprovalRuleRecord& rule,
                                                        bool dry_run,
                                                        const SiteBinding& visible_sites) = 0;

  // The site's rules, oldest first (at most kMaxApprovalRules). NOT_FOUND for an unserved site.
  virtual absl::StatusOr<std::vector<ApprovalRuleRecord>> ListRules(
      const std::string& site, const SiteBinding& visible_sites) = 0;

  // Removes a rule by id and returns it. NOT_FOUND when there is none (PERMISSION_DENIED when it
  // is another site's), INVALID_ARGUMENT for a malformed id.
  virtual absl::StatusOr<ApprovalRuleRecord> RemoveRule(absl::string_view rule_id,
                                                        const SiteBinding& visible_sites) = 0;
};

// Rules listed at most per site.
inline constexpr int kMaxApprovalRules = 1000;

}  // namespace portcullis::verifier::store
