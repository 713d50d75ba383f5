#include "verifier-service/src/server/lifecycle_rpcs.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/url/url.h"
#include "verifier-service/src/intake/source_block.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

// An author URL or a host is at most this long (as a target or a block value).
constexpr size_t kMaxEraseKeyBytes = 2048;

const char* ErasureKindName(store::ErasureKind kind) {
  switch (kind) {
    case store::ErasureKind::kAuthorUrl:
      return "author_url";
    case store::ErasureKind::kSourceHost:
      return "source_host";
    case store::ErasureKind::kMention:
      return "mention_id";
  }
  return "";
}

}  // namespace

absl::StatusOr<EraseCommand> ValidateErase(const v1::EraseRequest& request) {
  EraseCommand command;
  command.dry_run = request.dry_run();
  command.undo = request.undo();
  if (command.dry_run && command.undo) {
    return absl::InvalidArgumentError("dry_run and undo cannot be combined");
  }
  switch (request.key_case()) {
    case v1::EraseRequest::kAuthorUrl: {
      if (request.author_url().empty() || request.author_url().size() > kMaxEraseKeyBytes) {
        return absl::InvalidArgumentError("author_url must be 1 to 2048 bytes");
      }
      absl::StatusOr<url::Url> parsed = url::ParseUrl(request.author_url());
      if (!parsed.ok() || parsed->has_credentials()) {
        return absl::InvalidArgumentError(
            "author_url must be an absolute http(s) URL without credentials");
      }
      command.key = {store::ErasureKind::kAuthorUrl, parsed->href()};
      break;
    }
    case v1::EraseRequest::kSourceHost: {
      const std::string& host = request.source_host();
      absl::StatusOr<std::string> normalized =
          intake::NormalizeBlockValue(intake::BlockKind::kDomain, host);
      if (host.empty() || host.size() > kMaxEraseKeyBytes || !normalized.ok() ||
          absl::StartsWith(host, "*") || absl::StartsWith(host, ".")) {
        return absl::InvalidArgumentError("source_host is not a host name or IP address");
      }
      command.key = {store::ErasureKind::kSourceHost, *std::move(normalized)};
      break;
    }
    case v1::EraseRequest::kMentionId:
      if (!store::IsUuid(request.mention_id())) {
        return absl::InvalidArgumentError("mention_id is not a UUID");
      }
      command.key = {store::ErasureKind::kMention, request.mention_id()};
      break;
    default:
      return absl::InvalidArgumentError("one of author_url, source_host or mention_id is required");
  }
  return command;
}

void ToProto(const store::ErasureOutcome& outcome, bool dry_run, v1::EraseResponse* out) {
  out->set_mentions(outcome.mentions);
  out->set_tombstones(outcome.tombstones);
  out->set_dry_run(dry_run);
  for (const store::ErasedMentionRecord& record : outcome.listed) {
    v1::ErasedMention* erased = out->add_erased();
    erased->set_mention_id(record.mention_id);
    erased->set_source(record.source);
    erased->set_target(record.target);
    erased->set_site(record.site);
  }
}

PORTCULLIS_VERIFIER_RPC(Erase) {
  return rpcs_.Serve(
      "Erase", context, request, response, kAdminAccess, ValidateErase,
      OnPool(*deps_.pool,
             [this, response](EraseCommand command, const RpcCall& call) -> absl::Status {
               if (command.undo) {
                 ASSIGN_OR_RETURN(int64_t removed, deps_.erasures->Undo(command.key, call.sites()));
                 response->set_tombstones(removed);
                 // The key itself is personal data: only its kind is logged.
                 call.Info("erasure undone key={} tombstones={}", ErasureKindName(command.key.kind),
                           removed);
                 return absl::OkStatus();
               }
               ASSIGN_OR_RETURN(store::ErasureOutcome outcome,
                                deps_.erasures->Erase(command.key, command.dry_run, call.sites()));
               ToProto(outcome, command.dry_run, response);
               if (!command.dry_run) {
                 call.Info("erased key={} mentions={} tombstones={}",
                           ErasureKindName(command.key.kind), outcome.mentions, outcome.tombstones);
               }
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
