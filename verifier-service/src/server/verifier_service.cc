#include "verifier-service/src/server/verifier_service.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace portcullis::verifier::server {

absl::StatusOr<std::unique_ptr<VerifierService>> VerifierService::Create(
    const VerifierServiceDeps& deps) {
  const std::pair<const void*, const char*> required[] = {
      {deps.tokens, "tokens"},
      {deps.pool, "pool"},
      {deps.mentions, "mentions"},
      {deps.public_mentions, "public_mentions"},
      {deps.submissions, "submissions"},
      {deps.sites, "sites"},
      {deps.blocks, "blocks"},
      {deps.moderation, "moderation"},
      {deps.token_store, "token_store"},
      {deps.policy, "policy"},
      {deps.resolver, "resolver"},
      {deps.fetcher, "fetcher"},
      {deps.evaluator, "evaluator"},
      {deps.publishers, "publishers"},
      {deps.ingest, "ingest"},
      {deps.verify_now.jobs, "verify_now.jobs"},
      {deps.verify_now.verifier, "verify_now.verifier"},
      {deps.verify_now.pool, "verify_now.pool"},
      {deps.erasures, "erasures"},
      {deps.deliveries, "deliveries"},
  };
  for (const auto& [dependency, name] : required) {
    if (dependency == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("verifier service: no ", name));
    }
  }
  return std::unique_ptr<VerifierService>(new VerifierService(deps));
}

}  // namespace portcullis::verifier::server
