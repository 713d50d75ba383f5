#include "verifier-service/src/server/lifecycle_rpcs.h"

#include <algorithm>
#include <string>
#include <utility>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/url/url.h"
#include "verifier-service/src/intake/source_block.h"
#include "verifier-service/src/server/authorized_call.h"
#include "verifier-service/src/server/ingest_rpcs.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

// An author URL or a host is at most this long (as a target or a block value).
constexpr size_t kMaxEraseKeyBytes = 2048;

// A drop reason is one of the evaluator's, all [a-z_].
constexpr size_t kMaxDropReasonBytes = 64;
// google.protobuf.Timestamp's range: 0001-01-01 to 9999-12-31.
constexpr int64_t kMinTimestampSeconds = -62135596800;
constexpr int64_t kMaxTimestampSeconds = 253402300799;

// The filter fields both drop RPCs share.
template <typename Request>
absl::StatusOr<store::DropFilter> ValidateDropFilter(const Request& request) {
  store::DropFilter filter;
  RETURN_IF_ERROR(ValidatePublisherName(request.publisher(), "publisher"));
  filter.publisher = request.publisher();
  if (request.reason().size() > kMaxDropReasonBytes ||
      !std::all_of(request.reason().begin(), request.reason().end(),
                   [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; })) {
    return absl::InvalidArgumentError("reason must be a drop reason: up to 64 bytes of [a-z_]");
  }
  filter.reason = request.reason();
  if (request.has_since()) {
    const google::protobuf::Timestamp& since = request.since();
    if (since.seconds() < kMinTimestampSeconds || since.seconds() > kMaxTimestampSeconds ||
        since.nanos() < 0 || since.nanos() > 999999999) {
      return absl::InvalidArgumentError("since is not a valid time");
    }
    filter.since = absl::FromUnixSeconds(since.seconds()) + absl::Nanoseconds(since.nanos());
  }
  return filter;
}

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

absl::StatusOr<DropQuery> ValidateListDrops(const v1::ListDropsRequest& request) {
  DropQuery query;
  ASSIGN_OR_RETURN(query.filter, ValidateDropFilter(request));
  ASSIGN_OR_RETURN(query.size, IngestPageSize(request.page_size(), "page_size"));
  if (!request.page_token().empty()) {
    std::optional<TimeAndIdPosition> after = ParseTimeAndIdPageToken(request.page_token());
    if (!after.has_value()) {
      return absl::InvalidArgumentError("page_token is not a token from a previous page");
    }
    query.after = store::DropPosition{after->at, std::move(after->id)};
  }
  return query;
}

absl::StatusOr<DropQuery> ValidateReevaluateDrops(const v1::ReevaluateDropsRequest& request) {
  DropQuery query;
  ASSIGN_OR_RETURN(query.filter, ValidateDropFilter(request));
  query.dry_run = request.dry_run();
  return query;
}

std::string DropPageToken(const store::DroppedDeliveryRecord& last) {
  return TimeAndIdPageToken({last.received_at, last.drop_id});
}

void ToProto(const store::DroppedDeliveryRecord& record, v1::DroppedDelivery* out) {
  out->set_drop_id(record.drop_id);
  out->set_publisher(record.delivery.publisher);
  out->set_item_id(record.delivery.item_id);
  out->set_content_hash(record.delivery.content_hash);
  out->set_reason(record.reason);
  out->mutable_provenance()->set_signature(record.delivery.signature_header);
  out->mutable_provenance()->set_message_id(record.delivery.message_id);
  out->mutable_provenance()->set_timestamp(record.delivery.timestamp);
  out->set_raw_body(record.delivery.raw_body);
  *out->mutable_received_at() = TimestampProto(record.received_at);
  *out->mutable_expires_at() = TimestampProto(record.expires_at);
}

void ToProto(const ingest::DropReevaluation& result, bool dry_run,
             v1::ReevaluateDropsResponse* out) {
  out->set_matched(result.matched);
  out->set_accepted(result.accepted);
  out->set_still_dropped(result.still_dropped);
  out->set_dry_run(dry_run);
}

PORTCULLIS_VERIFIER_RPC(ListDrops) {
  return rpcs_.Serve(
      "ListDrops", context, request, response, kUnboundAdminAccess, ValidateListDrops,
      OnPool(*deps_.pool, [this, response](DropQuery query, const RpcCall&) {
        return ListPage(
            query.size,
            [&](int limit) { return deps_.ingest->ListDrops(query.filter, query.after, limit); },
            DropPageToken,
            [&](const store::DroppedDeliveryRecord& drop) { ToProto(drop, response->add_drops()); },
            response->mutable_next_page_token());
      }));
}

PORTCULLIS_VERIFIER_RPC(ReevaluateDrops) {
  return rpcs_.Serve(
      "ReevaluateDrops", context, request, response, kUnboundAdminAccess, ValidateReevaluateDrops,
      OnPool(*deps_.pool, [this, response](DropQuery query, const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(ingest::DropReevaluation result,
                         deps_.evaluator->ReevaluateDrops(query.filter, query.dry_run));
        ToProto(result, query.dry_run, response);
        call.Info(
            "drops re-evaluated publisher={} dry_run={} matched={} accepted={} "
            "still_dropped={}",
            query.filter.publisher, query.dry_run, result.matched, result.accepted,
            result.still_dropped);
        return absl::OkStatus();
      }));
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
