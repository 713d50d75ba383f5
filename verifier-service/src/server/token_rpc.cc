#include "verifier-service/src/server/token_rpc.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/logging/log.h"
#include "common/status/status_mapping.h"
#include "verifier-service/src/auth/api_token.h"
#include "verifier-service/src/auth/stored_tokens.h"
#include "verifier-service/src/intake/site_request_validation.h"
#include "verifier-service/src/server/ingest_rpc.h"
#include "verifier-service/src/server/store_errors.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {

namespace v1 = portcullis::verifier::v1;

absl::StatusOr<auth::Caller> Validate(const v1::CreateTokenRequest& request) {
  auth::Caller caller;
  const std::string& name = request.name();
  if (name.empty() || name.size() > kMaxTokenNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("name must be 1 to ", kMaxTokenNameBytes, " bytes"));
  }
  if (std::any_of(name.begin(), name.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return absl::InvalidArgumentError("name must not contain control characters");
  }
  caller.name = name;
  if (request.scopes().empty()) {
    return absl::InvalidArgumentError("scopes: at least one of submit, read, fetch, admin");
  }
  for (const std::string& scope : request.scopes()) {
    // One name per entry: "read,admin" in one entry is not a scope.
    if (scope.find(',') != std::string::npos) {
      return absl::InvalidArgumentError("scopes: one scope per entry");
    }
  }
  absl::StatusOr<auth::ScopeSet> scopes = auth::ParseScopes(absl::StrJoin(request.scopes(), ","));
  if (!scopes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("scopes: ", scopes.status().message()));
  }
  caller.scopes = *scopes;
  if (request.sites_size() > kMaxTokenSites) {
    return absl::InvalidArgumentError(absl::StrCat("sites: at most ", kMaxTokenSites));
  }
  for (const std::string& site : request.sites()) {
    v1::AddSiteRequest as_site;
    as_site.set_domain(site);
    absl::StatusOr<std::string> domain = intake::Validate(as_site);
    if (!domain.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("sites: ", domain.status().message()));
    }
    if (std::find(caller.sites.begin(), caller.sites.end(), *domain) == caller.sites.end()) {
      caller.sites.push_back(*std::move(domain));
    }
  }
  return caller;
}

absl::Status Validate(const v1::RevokeTokenRequest& request) {
  if (request.id().empty() || request.id().size() > kMaxTokenIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("id must be 1 to ", kMaxTokenIdBytes, " bytes (see ListTokens)"));
  }
  return absl::OkStatus();
}

void ToProto(const store::TokenRecord& record, v1::ApiToken* out) {
  out->set_id(record.caller.token_id);
  out->set_name(record.caller.name);
  for (absl::string_view scope :
       absl::StrSplit(auth::FormatScopes(auth::CallerOf(record.caller).scopes), ',',
                      absl::SkipEmpty())) {
    out->add_scopes(std::string(scope));
  }
  for (const std::string& site : record.caller.sites) {
    out->add_sites(site);
  }
  *out->mutable_created_at() = TimestampProto(record.created_at);
  if (record.revoked_at.has_value()) {
    *out->mutable_revoked_at() = TimestampProto(*record.revoked_at);
  }
}

namespace {

constexpr char kNoTokenStore[] = "API tokens are not configured";

// After a change: this pod's registry at once (others within their refresh interval). A failure
// leaves the change stored; it takes effect at the next refresh.
void RefreshRegistry(auth::TokenRegistry& registry) {
  if (absl::Status status = registry.Refresh(); !status.ok()) {
    logging::Warn("{}; the change takes effect at the next refresh", std::string(status.message()));
  }
}

}  // namespace

grpc::ServerUnaryReactor* VerifierService::CreateToken(grpc::CallbackServerContext* context,
                                                       const v1::CreateTokenRequest* request,
                                                       v1::CreateTokenResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(token_store_ != nullptr, kNoTokenStore, reactor)) {
    return reactor;
  }
  absl::StatusOr<auth::Caller> holder = Validate(*request);
  if (!holder.ok()) {
    reactor->Finish(status::ToGrpcStatus(holder.status()));
    return reactor;
  }
  RunOnPool("CreateToken", context, reactor,
            [this, response, holder = *std::move(holder)]() -> absl::Status {
              std::string token = auth::GenerateToken();
              absl::StatusOr<store::TokenRecord> created =
                  token_store_->CreateToken(auth::HashToken(token), auth::HolderOf(holder));
              if (!created.ok()) {
                return Retryable(created.status());
              }
              RefreshRegistry(tokens_);
              response->set_token(std::move(token));
              ToProto(*created, response->mutable_api_token());
              logging::Info("api token created id={} name={} scopes={} sites={}",
                            created->caller.token_id, created->caller.name,
                            absl::StrJoin(created->caller.scopes, ","),
                            created->caller.sites.empty() ? "(all)"
                                                          : absl::StrJoin(created->caller.sites, ","));
              return absl::OkStatus();
            });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::ListTokens(grpc::CallbackServerContext* context,
                                                      const v1::ListTokensRequest* /*request*/,
                                                      v1::ListTokensResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(token_store_ != nullptr, kNoTokenStore, reactor)) {
    return reactor;
  }
  RunOnPool("ListTokens", context, reactor, [this, response]() -> absl::Status {
    absl::StatusOr<std::vector<store::TokenRecord>> tokens = token_store_->ListTokens();
    if (!tokens.ok()) {
      return Retryable(tokens.status());
    }
    for (const store::TokenRecord& token : *tokens) {
      ToProto(token, response->add_tokens());
    }
    return absl::OkStatus();
  });
  return reactor;
}

grpc::ServerUnaryReactor* VerifierService::RevokeToken(grpc::CallbackServerContext* context,
                                                       const v1::RevokeTokenRequest* request,
                                                       v1::RevokeTokenResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!Admit(context, reactor, kUnboundAdminAccess).has_value() ||
      FinishIfUnconfigured(token_store_ != nullptr, kNoTokenStore, reactor)) {
    return reactor;
  }
  if (absl::Status status = Validate(*request); !status.ok()) {
    reactor->Finish(status::ToGrpcStatus(status));
    return reactor;
  }
  if (absl::StartsWith(request->id(), "static:")) {
    reactor->Finish(status::ToGrpcStatus(absl::FailedPreconditionError(
        "a static token is revoked by removing its line from the tokens file")));
    return reactor;
  }
  RunOnPool("RevokeToken", context, reactor, [this, response, id = request->id()]() -> absl::Status {
    absl::StatusOr<store::TokenRecord> revoked = token_store_->RevokeToken(id);
    if (!revoked.ok()) {
      return Retryable(revoked.status());
    }
    RefreshRegistry(tokens_);
    ToProto(*revoked, response->mutable_api_token());
    logging::Info("api token revoked id={} name={}", revoked->caller.token_id,
                  revoked->caller.name);
    return absl::OkStatus();
  });
  return reactor;
}

}  // namespace portcullis::verifier::server
