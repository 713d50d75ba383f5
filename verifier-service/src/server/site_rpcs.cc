#include "verifier-service/src/server/site_rpcs.h"

#include <utility>

#include "common/status/status_macros.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/moderation_rpcs.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

template <typename Request>
absl::StatusOr<std::string> OwnSite(const Request& request, const auth::Caller& caller) {
  ASSIGN_OR_RETURN(std::string domain, intake::Validate(request));
  RETURN_IF_ERROR(RequireSite(caller, domain));
  return domain;
}

template <typename Request>
absl::StatusOr<intake::TargetRule> OwnTarget(const Request& request,
                                             const url::TrackingParameters& tracking,
                                             const auth::Caller& caller) {
  ASSIGN_OR_RETURN(intake::TargetRule rule, intake::Validate(request, tracking));
  RETURN_IF_ERROR(RequireSite(caller, rule.domain));
  return rule;
}

v1::TargetKind ToProto(intake::TargetKind kind) {
  return kind == intake::TargetKind::kPrefix ? v1::TARGET_KIND_PREFIX : v1::TARGET_KIND_EXACT;
}

}  // namespace

absl::StatusOr<std::string> ValidateSite(const v1::AddSiteRequest& request,
                                         const auth::Caller& caller) {
  return OwnSite(request, caller);
}

absl::StatusOr<std::string> ValidateSite(const v1::RemoveSiteRequest& request,
                                         const auth::Caller& caller) {
  return OwnSite(request, caller);
}

absl::StatusOr<intake::TargetRule> ValidateTarget(const v1::AddTargetRequest& request,
                                                  const url::TrackingParameters& tracking,
                                                  const auth::Caller& caller) {
  return OwnTarget(request, tracking, caller);
}

absl::StatusOr<intake::TargetRule> ValidateTarget(const v1::RemoveTargetRequest& request,
                                                  const url::TrackingParameters& tracking,
                                                  const auth::Caller& caller) {
  return OwnTarget(request, tracking, caller);
}

absl::StatusOr<std::vector<intake::TargetRule>> ValidateTargets(
    const v1::ImportTargetsRequest& request, const url::TrackingParameters& tracking,
    const auth::Caller& caller) {
  ASSIGN_OR_RETURN(std::vector<intake::TargetRule> rules, intake::Validate(request, tracking));
  for (const intake::TargetRule& rule : rules) {
    RETURN_IF_ERROR(RequireSite(caller, rule.domain));
  }
  return rules;
}

absl::StatusOr<intake::TargetPage> ValidateTargetPage(const v1::ListTargetsRequest& request,
                                                      const auth::Caller& caller) {
  ASSIGN_OR_RETURN(intake::TargetPage page, intake::Validate(request));
  if (!page.domain.empty()) {
    RETURN_IF_ERROR(RequireSite(caller, page.domain));
  }
  return page;
}

void ToProto(const store::SiteRecord& site, v1::Site* out) {
  out->set_domain(site.domain);
  *out->mutable_created_at() = TimestampProto(site.created_at);
  out->set_target_count(site.target_count);
  out->set_moderation(ModerationToProto(site.moderation));
  out->set_avatar_proxy(site.avatar_proxy);
}

void ToProto(const store::TargetRecord& record, v1::Target* out) {
  out->set_url(record.rule.url);
  out->set_kind(ToProto(record.rule.kind));
  out->set_domain(record.rule.domain);
  *out->mutable_created_at() = TimestampProto(record.created_at);
}

PORTCULLIS_VERIFIER_RPC(AddSite) {
  return rpcs_.Serve(
      "AddSite", context, request, response, kAdminAccess,
      [](const v1::AddSiteRequest& request, const auth::Caller& caller) {
        return ValidateSite(request, caller);
      },
      OnPool(*deps_.pool,
             [this, response](std::string domain, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::AddSiteResult added,
                                deps_.sites->AddSite(domain, call.sites()));
               response->mutable_site()->set_domain(added.site.domain);
               *response->mutable_site()->mutable_created_at() =
                   TimestampProto(added.site.created_at);
               response->set_created(added.created);
               if (added.created) {
                 call.Info("site added domain={}", domain);
               }
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListSites) {
  return rpcs_.Serve(
      "ListSites", context, request, response, kAdminAccess,
      [](const v1::ListSitesRequest& request) { return intake::Validate(request); },
      OnPool(*deps_.pool,
             [this, response](intake::SitePage page, const RpcCall& call) {
               return ListPage(
                   page.size,
                   [&](int limit) {
                     return deps_.sites->ListSites(page.after_domain, limit, call.sites());
                   },
                   [](const store::SiteRecord& last) { return intake::SitePageToken(last.domain); },
                   [&](const store::SiteRecord& site) { ToProto(site, response->add_sites()); },
                   response->mutable_next_page_token());
             }));
}

PORTCULLIS_VERIFIER_RPC(RemoveSite) {
  return rpcs_.Serve(
      "RemoveSite", context, request, response, kAdminAccess,
      [](const v1::RemoveSiteRequest& request, const auth::Caller& caller) {
        return ValidateSite(request, caller);
      },
      OnPool(*deps_.pool,
             [this, response](std::string domain, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(int64_t removed, deps_.sites->RemoveSite(domain, call.sites()));
               response->set_removed_targets(removed);
               call.Info("site removed domain={} targets={}", domain, removed);
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(AddTarget) {
  return rpcs_.Serve(
      "AddTarget", context, request, response, kAdminAccess,
      [this](const v1::AddTargetRequest& request, const auth::Caller& caller) {
        return ValidateTarget(request, tracking_, caller);
      },
      OnPool(*deps_.pool,
             [this, response](intake::TargetRule rule, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::AddTargetsResult added,
                                deps_.sites->AddTargets(absl::MakeConstSpan(&rule, 1),
                                                        call.sites()));
               ToProto(added.targets.front(), response->mutable_target());
               response->set_created(added.added == 1);
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ImportTargets) {
  return rpcs_.Serve(
      "ImportTargets", context, request, response, kAdminAccess,
      [this](const v1::ImportTargetsRequest& request, const auth::Caller& caller) {
        return ValidateTargets(request, tracking_, caller);
      },
      OnPool(*deps_.pool,
             [this, response](std::vector<intake::TargetRule> rules,
                              const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::AddTargetsResult added,
                                deps_.sites->AddTargets(rules, call.sites()));
               response->set_added(added.added);
               response->set_already_present(added.already_present);
               call.Info("targets imported added={} already_present={}", added.added,
                         added.already_present);
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListTargets) {
  return rpcs_.Serve(
      "ListTargets", context, request, response, kAdminAccess, ValidateTargetPage,
      OnPool(*deps_.pool,
             [this, response](intake::TargetPage page, const RpcCall& call) {
               return ListPage(
                   page.size,
                   [&](int limit) {
                     return deps_.sites->ListTargets(page.domain, page.after, limit, call.sites());
                   },
                   [](const store::TargetRecord& last) { return intake::TargetPageToken(last.rule); },
                   [&](const store::TargetRecord& target) {
                     ToProto(target, response->add_targets());
                   },
                   response->mutable_next_page_token());
             }));
}

PORTCULLIS_VERIFIER_RPC(RemoveTarget) {
  return rpcs_.Serve(
      "RemoveTarget", context, request, response, kAdminAccess,
      [this](const v1::RemoveTargetRequest& request, const auth::Caller& caller) {
        return ValidateTarget(request, tracking_, caller);
      },
      OnPool(*deps_.pool,
             [this, response](intake::TargetRule rule, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::TargetRecord removed,
                                deps_.sites->RemoveTarget(rule.url, rule.kind, call.sites()));
               ToProto(removed, response->mutable_target());
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
