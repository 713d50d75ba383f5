#include "verifier-service/src/server/verifier_service.h"

#include <string>
#include <utility>
#include <variant>

#include "common/crypto/sha256.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "common/url/url.h"
#include "common/status/status_mapping.h"
#include "google/protobuf/util/time_util.h"
#include "verifier-service/src/intake/mention_request_validation.h"
#include "verifier-service/src/intake/site_request_validation.h"
#include "verifier-service/src/server/fetch_rpc.h"
#include "verifier-service/src/server/mention_read_rpc.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

v1::MentionState ToProto(store::MentionState state) {
  switch (state) {
    case store::MentionState::kPending:
      return v1::MENTION_STATE_PENDING;
    case store::MentionState::kVerified:
      return v1::MENTION_STATE_VERIFIED;
    case store::MentionState::kFailed:
      return v1::MENTION_STATE_FAILED;
  }
  return v1::MENTION_STATE_UNSPECIFIED;
}

google::protobuf::Timestamp ToProto(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

const grpc::Status& Overloaded() {
  static const grpc::Status* const kStatus =
      new grpc::Status(grpc::StatusCode::UNAVAILABLE, "verifier overloaded, retry later");
  return *kStatus;
}

const grpc::Status& NotReady() {
  static const grpc::Status* const kStatus =
      new grpc::Status(grpc::StatusCode::UNAVAILABLE, "verifier not ready, retry later");
  return *kStatus;
}

// Answers a call whose deadline passed or whose client went away while it waited in the queue,
// without touching the database.
bool FinishIfCancelled(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor) {
  if (context->IsCancelled()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED, "call cancelled"));
    return true;
  }
  return false;
}

v1::TargetKind ToProto(intake::TargetKind kind) {
  return kind == intake::TargetKind::kPrefix ? v1::TARGET_KIND_PREFIX : v1::TARGET_KIND_EXACT;
}

void ToProto(const store::TargetRecord& record, v1::Target* out) {
  out->set_url(record.rule.url);
  out->set_kind(ToProto(record.rule.kind));
  out->set_domain(record.rule.domain);
  *out->mutable_created_at() = ToProto(record.created_at);
}

void Reject(v1::SubmitMentionResponse* response, absl::string_view reason,
            absl::string_view description) {
  response->set_decision(v1::DECISION_REJECTED);
  response->set_reason(std::string(reason));
  response->set_reason_description(std::string(description));
}

// The site a validated ListMentions request reads: its domain, or its target's serialized host
// (the site a mention of that target is on).
std::string QueriedSite(const v1::ListMentionsRequest& request, const store::MentionQuery& query) {
  if (!query.domain.empty()) {
    return query.domain;
  }
  absl::StatusOr<url::Url> target = url::ParseUrl(request.target());
  return target.ok() ? target->host() : std::string();
}

// PERMISSION_DENIED unless every rule is on a site the caller may see.
absl::Status RequireSites(const auth::Caller& caller, absl::Span<const intake::TargetRule> rules) {
  for (const intake::TargetRule& rule : rules) {
    RETURN_IF_ERROR(RequireSite(caller, rule.domain));
  }
  return absl::OkStatus();
}

}  // namespace

absl::optional<auth::Caller> VerifierService::Admit(grpc::CallbackServerContext* context,
                                                    grpc::ServerUnaryReactor* reactor,
                                                    Access access) {
  absl::StatusOr<auth::Caller> caller = AuthorizeCall(*context, tokens_, ready_.load(), access);
  if (!caller.ok()) {
    reactor->Finish(status::ToGrpcStatus(caller.status()));
    return absl::nullopt;
  }
  return *std::move(caller);
}

bool VerifierService::FinishIfUnconfigured(bool configured, const char* message,
                                           grpc::ServerUnaryReactor* reactor) {
  if (!configured) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, message));
  }
  return !configured;
}

void VerifierService::RunOnPool(const char* rpc, grpc::CallbackServerContext* context,
                                grpc::ServerUnaryReactor* reactor,
                                absl::AnyInvocable<absl::Status() &&> work) {
  if (!ready_.load()) {
    reactor->Finish(NotReady());
    return;
  }
  const bool queued = pool_.TrySubmit([context, reactor, work = std::move(work)]() mutable {
    if (FinishIfCancelled(context, reactor)) {
      return;
    }
    reactor->Finish(status::ToGrpcStatus(std::move(work)()));
  });
  if (!queued) {
    logging::Warn("refused {}: blocking pool queue full", rpc);
    reactor->Finish(Overloaded());
  }
}

grpc::ServerUnaryReactor* VerifierService::SubmitMention(grpc::CallbackServerContext* context,
                                                         const v1::SubmitMentionRequest* request,
                                                         v1::SubmitMentionResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const absl::optional<auth::Caller> caller = Admit(context, reactor, kSubmitAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  intake::SubmitMentionValidation validation = intake::Validate(*request, tracking_);
  if (const auto* rejection = std::get_if<intake::Rejection>(&validation)) {
    response->set_decision(v1::DECISION_REJECTED);
    response->set_reason(rejection->reason);
    response->set_reason_description(rejection->description);
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  const auto& normalized = std::get<intake::NormalizedMention>(validation);
  if (absl::Status status = RequireSite(*caller, normalized.target_domain); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  store::NewMention mention{request->source(),          request->target(),
                            normalized.key.source_hash, normalized.key.target_hash,
                            normalized.target_domain,   normalized.key.normalized_target,
                            normalized.key.normalized_source};
  const bool queued =
      pool_.TrySubmit([this, context, reactor, response, mention = std::move(mention)]() mutable {
        if (FinishIfCancelled(context, reactor)) {
          return;
        }
        absl::StatusOr<store::SubmitResult> result = store_.Submit(mention);
        if (!result.ok()) {
          reactor->Finish(status::ToGrpcStatus(result.status()));
          return;
        }
        switch (result->target) {
          case store::TargetMatch::kServed:
            break;
          case store::TargetMatch::kUnknownSite:
            Reject(response, intake::kTargetNotSupported,
                   "The target is not on a site that receives webmentions here.");
            reactor->Finish(grpc::Status::OK);
            return;
          case store::TargetMatch::kUnknownResource:
            Reject(response, intake::kTargetNotFound,
                   "The target is not a page of this site that receives webmentions.");
            reactor->Finish(grpc::Status::OK);
            return;
        }
        response->set_decision(v1::DECISION_ACCEPTED);
        response->set_mention_id(result->mention_id);
        response->set_state(ToProto(result->state));
        response->set_created(result->created);
        response->set_queued(result->queued);
        reactor->Finish(grpc::Status::OK);
      });
  if (!queued) {
    logging::Warn("refused SubmitMention: blocking pool queue full");
    reactor->Finish(Overloaded());
  }
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::GetMention(grpc::CallbackServerContext* context,
                                                      const v1::GetMentionRequest* request,
                                                      v1::GetMentionResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kReadAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  if (!store::IsUuid(request->mention_id())) {
    reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "mention_id must be a UUID"));
    return reactor;
  }
  const bool queued = pool_.TrySubmit([this, context, reactor, request, response,
                                       sites = std::move(caller->sites)]() mutable {
    if (FinishIfCancelled(context, reactor)) {
      return;
    }
    absl::StatusOr<store::StoredMention> mention = store_.Get(request->mention_id(), sites);
    if (!mention.ok()) {
      reactor->Finish(status::ToGrpcStatus(mention.status()));
      return;
    }
    ToProto(*mention, response->mutable_mention());
    reactor->Finish(grpc::Status::OK);
  });
  if (!queued) {
    logging::Warn("refused GetMention: blocking pool queue full");
    reactor->Finish(Overloaded());
  }
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListMentions(grpc::CallbackServerContext* context,
                                                        const v1::ListMentionsRequest* request,
                                                        v1::ListMentionsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kReadAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<store::MentionQuery> query = Validate(*request, tracking_);
  if (!query.ok()) {
    reactor->Finish(status::ToGrpcStatus(query.status()));
    return reactor;
  }
  if (absl::Status status = RequireSite(*caller, QueriedSite(*request, *query)); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("ListMentions", context, reactor,
            [this, response, query = *std::move(query),
             sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<store::MentionPage> page = store_.List(query, sites);
              if (!page.ok()) {
                return page.status();
              }
              for (const store::StoredMention& mention : page->mentions) {
                ToProto(mention, response->add_mentions());
              }
              response->set_next_page_token(page->next_page_token);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::AddSite(grpc::CallbackServerContext* context,
                                                   const v1::AddSiteRequest* request,
                                                   v1::AddSiteResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<std::string> domain = intake::Validate(*request);
  if (!domain.ok()) {
    reactor->Finish(status::ToGrpcStatus(domain.status()));
    return reactor;
  }
  if (absl::Status status = RequireSite(*caller, *domain); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("AddSite", context, reactor,
            [this, response, domain = *std::move(domain), sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<store::AddSiteResult> added = sites_.AddSite(domain, sites);
              if (!added.ok()) {
                return added.status();
              }
              response->mutable_site()->set_domain(added->site.domain);
              *response->mutable_site()->mutable_created_at() = ToProto(added->site.created_at);
              response->set_created(added->created);
              if (added->created) {
                logging::Info("site added domain={}", domain);
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListSites(grpc::CallbackServerContext* context,
                                                     const v1::ListSitesRequest* request,
                                                     v1::ListSitesResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<intake::SitePage> page = intake::Validate(*request);
  if (!page.ok()) {
    reactor->Finish(status::ToGrpcStatus(page.status()));
    return reactor;
  }
  RunOnPool("ListSites", context, reactor,
            [this, response, page = *std::move(page), visible = std::move(caller->sites)]() -> absl::Status {
              // One more than asked for tells whether there is a next page.
              absl::StatusOr<std::vector<store::SiteRecord>> sites =
                  sites_.ListSites(page.after_domain, page.size + 1, visible);
              if (!sites.ok()) {
                return sites.status();
              }
              const bool more = static_cast<int>(sites->size()) > page.size;
              if (more) {
                sites->resize(page.size);
                response->set_next_page_token(intake::SitePageToken(sites->back().domain));
              }
              for (const store::SiteRecord& site : *sites) {
                v1::Site* out = response->add_sites();
                out->set_domain(site.domain);
                *out->mutable_created_at() = ToProto(site.created_at);
                out->set_target_count(site.target_count);
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::RemoveSite(grpc::CallbackServerContext* context,
                                                      const v1::RemoveSiteRequest* request,
                                                      v1::RemoveSiteResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<std::string> domain = intake::Validate(*request);
  if (!domain.ok()) {
    reactor->Finish(status::ToGrpcStatus(domain.status()));
    return reactor;
  }
  if (absl::Status status = RequireSite(*caller, *domain); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("RemoveSite", context, reactor,
            [this, response, domain = *std::move(domain), sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<int64_t> removed = sites_.RemoveSite(domain, sites);
              if (!removed.ok()) {
                return removed.status();
              }
              response->set_removed_targets(*removed);
              logging::Info("site removed domain={} targets={}", domain, *removed);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::AddTarget(grpc::CallbackServerContext* context,
                                                     const v1::AddTargetRequest* request,
                                                     v1::AddTargetResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<intake::TargetRule> rule = intake::Validate(*request, tracking_);
  if (!rule.ok()) {
    reactor->Finish(status::ToGrpcStatus(rule.status()));
    return reactor;
  }
  if (absl::Status status = RequireSite(*caller, rule->domain); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("AddTarget", context, reactor,
            [this, response, rule = *std::move(rule), sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<store::AddTargetsResult> added =
                  sites_.AddTargets(absl::MakeConstSpan(&rule, 1), sites);
              if (!added.ok()) {
                return added.status();
              }
              ToProto(added->targets.front(), response->mutable_target());
              response->set_created(added->added == 1);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ImportTargets(grpc::CallbackServerContext* context,
                                                         const v1::ImportTargetsRequest* request,
                                                         v1::ImportTargetsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<std::vector<intake::TargetRule>> rules = intake::Validate(*request, tracking_);
  if (!rules.ok()) {
    reactor->Finish(status::ToGrpcStatus(rules.status()));
    return reactor;
  }
  if (absl::Status status = RequireSites(*caller, *rules); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("ImportTargets", context, reactor,
            [this, response, rules = *std::move(rules), sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<store::AddTargetsResult> added = sites_.AddTargets(rules, sites);
              if (!added.ok()) {
                return added.status();
              }
              response->set_added(added->added);
              response->set_already_present(added->already_present);
              logging::Info("targets imported added={} already_present={}", added->added,
                            added->already_present);
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListTargets(grpc::CallbackServerContext* context,
                                                       const v1::ListTargetsRequest* request,
                                                       v1::ListTargetsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<intake::TargetPage> page = intake::Validate(*request);
  if (!page.ok()) {
    reactor->Finish(status::ToGrpcStatus(page.status()));
    return reactor;
  }
  if (!page->domain.empty()) {
    if (absl::Status status = RequireSite(*caller, page->domain); !status.ok()) {
      reactor->Finish(status::ToGrpcStatus(status));
      return reactor;
    }
  }
  RunOnPool("ListTargets", context, reactor,
            [this, response, page = *std::move(page), sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<std::vector<store::TargetRecord>> targets =
                  sites_.ListTargets(page.domain, page.after, page.size + 1, sites);
              if (!targets.ok()) {
                return targets.status();
              }
              if (static_cast<int>(targets->size()) > page.size) {
                targets->resize(page.size);
                response->set_next_page_token(intake::TargetPageToken(targets->back().rule));
              }
              for (const store::TargetRecord& target : *targets) {
                ToProto(target, response->add_targets());
              }
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::RemoveTarget(grpc::CallbackServerContext* context,
                                                        const v1::RemoveTargetRequest* request,
                                                        v1::RemoveTargetResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kAdminAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  absl::StatusOr<intake::TargetRule> rule = intake::Validate(*request, tracking_);
  if (!rule.ok()) {
    reactor->Finish(status::ToGrpcStatus(rule.status()));
    return reactor;
  }
  if (absl::Status status = RequireSite(*caller, rule->domain); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  RunOnPool("RemoveTarget", context, reactor,
            [this, response, rule = *std::move(rule), sites = std::move(caller->sites)]() -> absl::Status {
              absl::StatusOr<store::TargetRecord> removed =
                  sites_.RemoveTarget(rule.url, rule.kind, sites);
              if (!removed.ok()) {
                return removed.status();
              }
              ToProto(*removed, response->mutable_target());
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::CheckUrl(grpc::CallbackServerContext* context,
                                                    const v1::CheckUrlRequest* request,
                                                    v1::CheckUrlResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kFetchAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  if (absl::Status status = Validate(*request); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  if (fetch_.policy == nullptr || fetch_.resolver == nullptr) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no fetcher configured"));
    return reactor;
  }
  absl::StatusOr<url::Url> url = fetch_.policy->ParseAndCheckUrl(request->url());
  if (!url.ok()) {
    const absl::StatusOr<url::Url> parsed = url::ParseUrl(request->url());
    RefuseUrl(url.status(),
              parsed.ok() && fetch::IsIpLiteralHost(*parsed) &&
                  !fetch::IsAmbiguousNumericHost(url.status()),
              response);
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  if (fetch::IsIpLiteralHost(*url)) {
    const std::optional<net::IpAddress> literal = net::IpAddress::FromUrl(*url);
    if (!literal.has_value()) {
      RefuseUrl(absl::InvalidArgumentError("not an IP address"), true, response);
    } else {
      AnswerAddresses(absl::MakeConstSpan(&*literal, 1),
                      fetch_.policy->CheckAddresses(*url, absl::MakeConstSpan(&*literal, 1)),
                      response);
    }
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
  // The callback runs on the resolver's loop (or at once); it only formats and finishes.
  fetch_.resolver->Resolve(
      url->host(), [policy = fetch_.policy, url = *url, reactor,
                    response](absl::StatusOr<std::vector<net::IpAddress>> answers) mutable {
        if (absl::IsCancelled(answers.status())) {
          reactor->Finish(
              grpc::Status(grpc::StatusCode::UNAVAILABLE, "resolver shutting down, retry later"));
          return;
        }
        if (!answers.ok()) {
          RefuseLookup(answers.status(), response);
        } else {
          AnswerAddresses(*answers, policy->CheckAddresses(url, *answers), response);
        }
        reactor->Finish(grpc::Status::OK);
      });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::SafeFetch(grpc::CallbackServerContext* context,
                                                     const v1::SafeFetchRequest* request,
                                                     v1::SafeFetchResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::optional<auth::Caller> caller = Admit(context, reactor, kFetchAccess);
  if (!caller.has_value()) {
    return reactor;
  }
  if (fetch_.fetcher == nullptr) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no fetcher configured"));
    return reactor;
  }
  absl::StatusOr<fetch::FetchLimits> limits = Validate(*request, fetch_.fetcher->max_limits());
  if (!limits.ok()) {
    reactor->Finish(status::ToGrpcStatus(limits.status()));
    return reactor;
  }
  // The callback runs on the fetcher's loops (or at once); it only formats and finishes.
  fetch_.fetcher->Fetch(
      request->url(), *limits, [reactor, response, limits = *limits](fetch::FetchResult result) {
        if (result.outcome == fetch::FetchOutcome::kCancelled) {
          reactor->Finish(
              grpc::Status(grpc::StatusCode::UNAVAILABLE, "fetcher shutting down, retry later"));
          return;
        }
        ToProto(result, limits, response);
        reactor->Finish(grpc::Status::OK);
      });
  return reactor;
}

}  // namespace portcullis::verifier::server
