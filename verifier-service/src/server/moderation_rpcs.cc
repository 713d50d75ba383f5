#include "verifier-service/src/server/moderation_rpcs.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/url/url.h"
#include "verifier-service/src/intake/source_block.h"
#include "verifier-service/src/intake/target_rules.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/mention_rpcs.h"
#include "verifier-service/src/server/site_rpcs.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/mention_page_token.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr size_t kMaxRuleValueBytes = 2048;

absl::StatusOr<std::string> ReviewedSite(const std::string& site, const auth::Caller& caller) {
  if (site.empty()) {
    return absl::InvalidArgumentError("site is required");
  }
  absl::StatusOr<std::string> domain = intake::ParseSiteDomain(site);
  if (!domain.ok()) {
    return absl::InvalidArgumentError("site is not a site domain");
  }
  RETURN_IF_ERROR(RequireSite(caller, *domain));
  return *std::move(domain);
}

}  // namespace

absl::StatusOr<ReviewChange> ValidateReview(const v1::ReviewMentionRequest& request) {
  ReviewChange change;
  if (!store::IsUuid(request.mention_id())) {
    return absl::InvalidArgumentError("mention_id must be a UUID");
  }
  change.mention_id = request.mention_id();
  switch (request.action()) {
    case v1::REVIEW_ACTION_APPROVE:
      change.action = store::ReviewAction::kApprove;
      break;
    case v1::REVIEW_ACTION_REJECT:
      change.action = store::ReviewAction::kReject;
      break;
    case v1::REVIEW_ACTION_HIDE:
      change.action = store::ReviewAction::kHide;
      break;
    case v1::REVIEW_ACTION_UNHIDE:
      change.action = store::ReviewAction::kUnhide;
      break;
    default:
      return absl::InvalidArgumentError("action must be APPROVE, REJECT, HIDE or UNHIDE");
  }
  if (request.note().size() > kMaxReviewNoteBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("note must be at most ", kMaxReviewNoteBytes, " bytes"));
  }
  change.note = request.note();
  return change;
}

absl::StatusOr<store::MentionQuery> ValidateReviewQueue(const v1::ListReviewQueueRequest& request,
                                                        const auth::Caller& caller) {
  store::MentionQuery query;
  ASSIGN_OR_RETURN(query.domain, ReviewedSite(request.site(), caller));
  query.state = store::MentionState::kVerified;
  query.review = request.state() == v1::REVIEW_STATE_UNSPECIFIED
                     ? std::string("UNREVIEWED")
                     : ReviewStateName(request.state());
  if (query.review.empty()) {
    return absl::InvalidArgumentError("state is not a known ReviewState");
  }
  if (request.page_size() < 0 || request.page_size() > store::kMaxMentionPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must be from 0 (default ", store::kDefaultMentionPageSize,
                     ") to ", store::kMaxMentionPageSize));
  }
  query.page_size =
      request.page_size() == 0 ? store::kDefaultMentionPageSize : request.page_size();
  if (!request.page_token().empty()) {
    RETURN_IF_ERROR(store::DecodeMentionPageToken(request.page_token()).status());
    query.page_token = request.page_token();
  }
  return query;
}

bool IsRelayHost(absl::string_view host, const RelayHosts& relays) {
  for (const std::string& relay : relays) {
    if (host == relay ||
        (host.size() > relay.size() && absl::EndsWith(host, relay) &&
         host[host.size() - relay.size() - 1] == '.')) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<RuleRequest> ValidateRule(const v1::AddApprovalRuleRequest& request,
                                         const RelayHosts& relays, const auth::Caller& caller) {
  RuleRequest rule;
  rule.dry_run = request.dry_run();
  ASSIGN_OR_RETURN(rule.rule.site, ReviewedSite(request.rule().site(), caller));
  const std::string& value = request.rule().value();
  if (value.empty() || value.size() > kMaxRuleValueBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("rule.value must be a URL of 1 to ", kMaxRuleValueBytes, " bytes"));
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(value);
  if (!parsed.ok() || (parsed->scheme() != "http" && parsed->scheme() != "https") ||
      parsed->has_credentials() || parsed->host().empty()) {
    return absl::InvalidArgumentError(
        "rule.value must be an absolute http(s) URL without credentials");
  }
  switch (request.rule().kind()) {
    case v1::APPROVAL_RULE_KIND_AUTHOR_URL:
      rule.rule.kind = store::ApprovalRuleKind::kAuthorUrl;
      rule.rule.value = parsed->href();
      break;
    case v1::APPROVAL_RULE_KIND_SOURCE_PREFIX: {
      rule.rule.kind = store::ApprovalRuleKind::kSourcePrefix;
      absl::StatusOr<std::string> prefix =
          intake::NormalizeBlockValue(intake::BlockKind::kPrefix, value);
      if (!prefix.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("rule.value: ", prefix.status().message()));
      }
      rule.rule.value = *std::move(prefix);
      break;
    }
    default:
      return absl::InvalidArgumentError(
          "rule.kind must be APPROVAL_RULE_KIND_AUTHOR_URL or APPROVAL_RULE_KIND_SOURCE_PREFIX");
  }
  // A bare relay host would approve everyone it relays: the rule must name one person's path.
  const bool bare = parsed->path().empty() || parsed->path() == "/";
  if (bare && IsRelayHost(parsed->host(), relays)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rule.value: ", parsed->host(),
        " relays many people's posts; name one person's URL on it, not the whole host"));
  }
  return rule;
}

absl::StatusOr<SiteSettings> ValidateSiteSettings(const v1::SetSiteSettingsRequest& request,
                                                  const auth::Caller& caller) {
  SiteSettings settings;
  ASSIGN_OR_RETURN(settings.domain, ReviewedSite(request.domain(), caller));
  switch (request.moderation()) {
    case v1::MODERATION_UNSPECIFIED:
      break;  // Left as it is.
    case v1::MODERATION_OFF:
      settings.change.moderation = store::Moderation::kOff;
      break;
    case v1::MODERATION_FIRST_TIME_AUTHORS:
      settings.change.moderation = store::Moderation::kFirstTimeAuthors;
      break;
    case v1::MODERATION_ALL:
      settings.change.moderation = store::Moderation::kAll;
      break;
    default:
      return absl::InvalidArgumentError(
          "moderation must be MODERATION_OFF, MODERATION_FIRST_TIME_AUTHORS or MODERATION_ALL");
  }
  if (request.has_avatar_proxy()) {
    settings.change.avatar_proxy = request.avatar_proxy();
  }
  if (!settings.change.moderation.has_value() && !settings.change.avatar_proxy.has_value()) {
    return absl::InvalidArgumentError("set at least one of moderation and avatar_proxy");
  }
  return settings;
}

v1::Moderation ModerationToProto(absl::string_view name) {
  const std::optional<store::Moderation> moderation = store::ParseModeration(name);
  if (!moderation) {
    return v1::MODERATION_UNSPECIFIED;
  }
  switch (*moderation) {
    case store::Moderation::kOff:
      return v1::MODERATION_OFF;
    case store::Moderation::kFirstTimeAuthors:
      return v1::MODERATION_FIRST_TIME_AUTHORS;
    case store::Moderation::kAll:
      return v1::MODERATION_ALL;
  }
  return v1::MODERATION_UNSPECIFIED;
}

void ToProto(const store::ApprovalRuleRecord& rule, v1::ApprovalRule* out) {
  out->set_rule_id(rule.rule_id);
  out->set_site(rule.site);
  out->set_kind(rule.kind == store::ApprovalRuleKind::kSourcePrefix
                    ? v1::APPROVAL_RULE_KIND_SOURCE_PREFIX
                    : v1::APPROVAL_RULE_KIND_AUTHOR_URL);
  out->set_value(rule.value);
  if (!rule.rule_id.empty()) {
    *out->mutable_created_at() = TimestampProto(rule.created_at);
  }
}

PORTCULLIS_VERIFIER_RPC(ReviewMention) {
  return rpcs_.Serve(
      "ReviewMention", context, request, response, kReviewAccess,
      [](const v1::ReviewMentionRequest& request, const auth::Caller&) {
        return ValidateReview(request);
      },
      OnPool(*deps_.pool,
             [this, response](ReviewChange change, const RpcCall& call) -> absl::Status {
               RETURN_IF_ERROR(deps_.moderation->Review(change.mention_id, change.action,
                                                        change.note, call.caller().name,
                                                        call.sites()));
               ASSIGN_OR_RETURN(store::StoredMention mention,
                                deps_.mentions->Get(change.mention_id, call.sites()));
               ToProto(mention, response->mutable_mention());
               call.Info("mention reviewed id={} action={} review={} shown={}", change.mention_id,
                         store::ReviewActionName(change.action), mention.review, mention.shown);
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListReviewQueue) {
  return rpcs_.Serve(
      "ListReviewQueue", context, request, response, kReviewAccess,
      [](const v1::ListReviewQueueRequest& request, const auth::Caller& caller) {
        return ValidateReviewQueue(request, caller);
      },
      OnPool(*deps_.pool,
             [this, response](store::MentionQuery query, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::MentionPage page, deps_.mentions->List(query, call.sites()));
               for (const store::StoredMention& mention : page.mentions) {
                 ToProto(mention, response->add_mentions());
               }
               response->set_next_page_token(page.next_page_token);
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(AddApprovalRule) {
  return rpcs_.Serve(
      "AddApprovalRule", context, request, response, kReviewAccess,
      [this](const v1::AddApprovalRuleRequest& request, const auth::Caller& caller) {
        return ValidateRule(request, deps_.approval_rule_relay_hosts, caller);
      },
      OnPool(*deps_.pool,
             [this, response](RuleRequest rule, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::AddApprovalRuleResult added,
                                deps_.moderation->AddRule(rule.rule, rule.dry_run, call.sites()));
               ToProto(added.rule, response->mutable_rule());
               response->set_created(added.created);
               response->set_reach(added.reach);
               if (added.created) {
                 call.Info("approval rule added site={} kind={} value={} reach={}",
                           added.rule.site, store::ApprovalRuleKindName(added.rule.kind),
                           added.rule.value, added.reach);
               }
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListApprovalRules) {
  return rpcs_.Serve(
      "ListApprovalRules", context, request, response, kReviewAccess,
      [](const v1::ListApprovalRulesRequest& request, const auth::Caller& caller) {
        return ReviewedSite(request.site(), caller);
      },
      OnPool(*deps_.pool, [this, response](std::string site, const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<store::ApprovalRuleRecord> rules,
                         deps_.moderation->ListRules(site, call.sites()));
        for (const store::ApprovalRuleRecord& rule : rules) {
          ToProto(rule, response->add_rules());
        }
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(RemoveApprovalRule) {
  return rpcs_.Serve(
      "RemoveApprovalRule", context, request, response, kReviewAccess,
      [](const v1::RemoveApprovalRuleRequest& request,
         const auth::Caller&) -> absl::StatusOr<std::string> {
        if (!store::IsUuid(request.rule_id())) {
          return absl::InvalidArgumentError("rule_id must be a UUID");
        }
        return request.rule_id();
      },
      OnPool(*deps_.pool, [this, response](std::string id, const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(store::ApprovalRuleRecord removed,
                         deps_.moderation->RemoveRule(id, call.sites()));
        ToProto(removed, response->mutable_rule());
        call.Info("approval rule removed site={} id={}", removed.site, removed.rule_id);
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(SetSiteSettings) {
  return rpcs_.Serve(
      "SetSiteSettings", context, request, response, kAdminAccess,
      [](const v1::SetSiteSettingsRequest& request, const auth::Caller& caller) {
        return ValidateSiteSettings(request, caller);
      },
      OnPool(*deps_.pool,
             [this, response](SiteSettings settings, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::SiteRecord site,
                                deps_.moderation->SetSiteSettings(settings.domain, settings.change,
                                                                  call.sites()));
               ToProto(site, response->mutable_site());
               call.Info("site settings set site={} moderation={} avatar_proxy={}", site.domain,
                         site.moderation, site.avatar_proxy);
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
