#include "verifier-service/src/server/token_rpcs.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/auth/api_token.h"
#include "verifier-service/src/auth/stored_tokens.h"
#include "verifier-service/src/intake/site_request_validation.h"
#include "verifier-service/src/server/unary_rpc.h"
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
       absl::StrSplit(auth::FormatScopes(auth::CallerOf(record.caller).scopes), ',', absl::SkipEmpty())) {
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

absl::Status ValidateRevocable(const v1::RevokeTokenRequest& request) {
  RETURN_IF_ERROR(Validate(request));
  if (absl::StartsWith(request.id(), "static:")) {
    return absl::FailedPreconditionError(
        "a static token is revoked by removing its line from the tokens file");
  }
  return absl::OkStatus();
}

namespace {

// After a change: this pod's registry at once (others within their refresh interval). A failure
// leaves the change stored; it takes effect at the next refresh.
void RefreshRegistry(auth::TokenRegistry& registry, const RpcCall& call) {
  if (absl::Status status = registry.Refresh(); !status.ok()) {
    call.Warn("{}; the change takes effect at the next refresh", std::string(status.message()));
  }
}

}  // namespace

PORTCULLIS_VERIFIER_RPC(CreateToken) {
  return rpcs_.Serve(
      "CreateToken", context, request, response, kUnboundAdminAccess,
      [](const v1::CreateTokenRequest& request) { return Validate(request); },
      OnPool(*deps_.pool,
             [this, response](auth::Caller holder, const RpcCall& call) -> absl::Status {
               std::string token = auth::GenerateToken();
               ASSIGN_OR_RETURN(
                   store::TokenRecord created,
                   deps_.token_store->CreateToken(auth::HashToken(token), auth::HolderOf(holder)));
               RefreshRegistry(*deps_.tokens, call);
               response->set_token(std::move(token));
               ToProto(created, response->mutable_api_token());
               call.Info("api token created id={} name={} scopes={} sites={}",
                         created.caller.token_id, created.caller.name,
                         absl::StrJoin(created.caller.scopes, ","),
                         created.caller.sites.empty() ? "(all)"
                                                      : absl::StrJoin(created.caller.sites, ","));
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ListTokens) {
  return rpcs_.Serve("ListTokens", context, request, response, kUnboundAdminAccess,
                     NothingToValidate,
                     OnPool(*deps_.pool, [this, response](const RpcCall&) -> absl::Status {
                       ASSIGN_OR_RETURN(std::vector<store::TokenRecord> tokens,
                                        deps_.token_store->ListTokens());
                       for (const store::TokenRecord& token : tokens) {
                         ToProto(token, response->add_tokens());
                       }
                       return absl::OkStatus();
                     }));
}

PORTCULLIS_VERIFIER_RPC(RevokeToken) {
  return rpcs_.Serve(
      "RevokeToken", context, request, response, kUnboundAdminAccess, ValidateRevocable,
      OnPool(*deps_.pool, [this, request, response](const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(store::TokenRecord revoked, deps_.token_store->RevokeToken(request->id()));
        RefreshRegistry(*deps_.tokens, call);
        ToProto(revoked, response->mutable_api_token());
        call.Info("api token revoked id={} name={}", revoked.caller.token_id, revoked.caller.name);
        return absl::OkStatus();
      }));
}

}  // namespace portcullis::verifier::server
