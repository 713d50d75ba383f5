#include "verifier-service/src/server/authorized_call.h"

#include "absl/strings/str_cat.h"

namespace portcullis::verifier::server {

absl::StatusOr<auth::Caller> AuthorizeCall(const grpc::CallbackServerContext& context,
                                           const auth::TokenRegistry& tokens, bool ready,
                                           Access access) {
  if (!ready) {
    return absl::UnavailableError("verifier not ready, retry later");
  }
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(kAuthorizationMetadata);
  // Authenticate("") answers UNAUTHENTICATED like any other missing token.
  const absl::string_view authorization =
      found == metadata.end() ? absl::string_view()
                              : absl::string_view(found->second.data(), found->second.size());
  absl::StatusOr<auth::Caller> caller = tokens.Authenticate(authorization);
  if (!caller.ok()) {
    return caller.status();
  }
  if (absl::Status status = caller->Require(access.scope); !status.ok()) {
    return status;
  }
  if (access.unbound_only && !caller->AllSites()) {
    return absl::PermissionDeniedError("this call needs a token that is not bound to sites");
  }
  return caller;
}

absl::Status RequireSite(const auth::Caller& caller, absl::string_view domain) {
  if (caller.MaySee(domain)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrCat("the token is not bound to the site \"", domain, "\""));
}

absl::Status RequireUnbound(const auth::Caller& caller, absl::string_view what) {
  if (caller.AllSites()) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat("a site-bound token cannot ", what));
}

}  // namespace portcullis::verifier::server
