#pragma once

// The moderation RPCs (issue 16: ReviewMention, ListReviewQueue, AddApprovalRule,
// ListApprovalRules, RemoveApprovalRule, SetSiteSettings): validation, the proto mapping, and
// the handlers (VerifierService members, moderation_rpcs.cc). What the public sees is decided
// in the store (store/public_mentions_sql.h); these only change review states, rules and
// policies.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/moderation_store.h"

namespace portcullis::verifier::server {

// Longest review note.
inline constexpr size_t kMaxReviewNoteBytes = 1000;

// Hosts that relay many people's posts (bridges, silos), from --approval_rule_relay_hosts: an
// approval rule on one of them (or a subdomain) must name a path, never the bare host.
using RelayHosts = std::vector<std::string>;

struct ReviewChange {
  std::string mention_id;
  store::ReviewAction action = store::ReviewAction::kApprove;
  std::string note;
};
absl::StatusOr<ReviewChange> ValidateReview(
    const portcullis::verifier::v1::ReviewMentionRequest& request);

// ListReviewQueue as a ListMentions query: the site's VERIFIED mentions in one review state
// (UNREVIEWED when unspecified), with everything a reviewer sees.
absl::StatusOr<store::MentionQuery> ValidateReviewQueue(
    const portcullis::verifier::v1::ListReviewQueueRequest& request, const auth::Caller& caller);

struct RuleRequest {
  store::ApprovalRuleRecord rule;
  bool dry_run = false;
};
// The rule's site must be a host within the caller's binding; its value an absolute http(s) URL
// (an author URL is kept as the URL parser serializes it, a source prefix normalized like a
// submitted source); not the bare host of a relay (see RelayHosts). INVALID_ARGUMENT otherwise.
absl::StatusOr<RuleRequest> ValidateRule(
    const portcullis::verifier::v1::AddApprovalRuleRequest& request, const RelayHosts& relays,
    const auth::Caller& caller);

// The settings a SetSiteSettings request changes (an unset one is left as it is): at least one.
struct SiteSettings {
  std::string domain;
  store::SiteSettingsChange change;
};
absl::StatusOr<SiteSettings> ValidateSiteSettings(
    const portcullis::verifier::v1::SetSiteSettingsRequest& request, const auth::Caller& caller);

// "off" / "first-time-authors" / "all" ↔ the proto enum (UNSPECIFIED for anything else).
portcullis::verifier::v1::Moderation ModerationToProto(absl::string_view name);

void ToProto(const store::ApprovalRuleRecord& rule, portcullis::verifier::v1::ApprovalRule* out);

// Whether `host` is one of `relays` or a subdomain of one (on a label boundary).
bool IsRelayHost(absl::string_view host, const RelayHosts& relays);

}  // namespace portcullis::verifier::server
