#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "verifier-service/src/store/site_binding.h"
#include "verifier-service/src/store/target_rule.h"

namespace portcullis::verifier::store {

// One served site.
struct SiteRecord {
  std::string domain;
  absl::Time created_at;
  int64_t target_count = 0;  // Set by ListSites only.
  // Moderation (issue 16): "off", "first-time-authors" or "all" (moderation_store.h).
  std::string moderation = "off";
  // Avatar proxy (issue 17): the public feeds reference author photos through the gateway.
  bool avatar_proxy = false;
};

// One registered target rule.
struct TargetRecord {
  TargetRule rule;
  absl::Time created_at;
};

// What AddSite did.
struct AddSiteResult {
  SiteRecord site;
  bool created = false;  // False when the domain was already served.
};

// What AddTargets did.
struct AddTargetsResult {
  std::vector<TargetRecord> targets;  // One per rule given, in order.
  int64_t added = 0;
  int64_t already_present = 0;  // Including repeats within the call.
};

// Sites and targets: what we receive webmentions for. Implementations are thread-safe and
// block; call them from a blocking pool. Errors as MentionStore (UNAVAILABLE / DEADLINE_EXCEEDED
// retryable, INTERNAL otherwise) plus those named per method.
//
// Tenant scoping: every method takes the caller's `visible_sites` (empty: every site) and touches
// only those sites' rows (filtered in the SQL). A domain named outside the binding is
// PERMISSION_DENIED whether or not it is served.
class SiteStore {
 public:
  virtual ~SiteStore() = default;

  // Serves `domain` (a value of intake::ParseSiteDomain); idempotent.
  virtual absl::StatusOr<AddSiteResult> AddSite(const std::string& domain,
                                                const SiteBinding& visible_sites) = 0;

  // Up to `limit` sites with a domain after `after` (empty: from the first), by domain; only
  // those in the binding.
  virtual absl::StatusOr<std::vector<SiteRecord>> ListSites(const std::string& after, int limit,
                                                            const SiteBinding& visible_sites) = 0;

  // Stops serving `domain`, with its targets; returns how many targets went. NOT_FOUND when
  // the domain is not served.
  virtual absl::StatusOr<int64_t> RemoveSite(const std::string& domain,
                                             const SiteBinding& visible_sites) = 0;

  // Registers `rules` in one transaction, all or nothing. FAILED_PRECONDITION naming the index
  // of the first rule whose domain is not a served site, PERMISSION_DENIED naming the first
  // whose domain is outside the binding; nothing is stored then.
  virtual absl::StatusOr<AddTargetsResult> AddTargets(absl::Span<const TargetRule> rules,
                                                      const SiteBinding& visible_sites) = 0;

  // Up to `limit` targets after `after` (nullopt: from the first), by (url, kind); only those of
  // `domain` unless it is empty, and only of sites in the binding. NOT_FOUND when `domain` is
  // given and not served.
  virtual absl::StatusOr<std::vector<TargetRecord>> ListTargets(
      const std::string& domain, const std::optional<TargetRule>& after, int limit,
      const SiteBinding& visible_sites) = 0;

  // Removes the rule (url, kind) and returns it as it was. NOT_FOUND when it is not registered,
  // PERMISSION_DENIED when it is but of a site outside the binding (then nothing changes).
  virtual absl::StatusOr<TargetRecord> RemoveTarget(const std::string& url, TargetKind kind,
                                                    const SiteBinding& visible_sites) = 0;
};

}  // namespace portcullis::verifier::store
