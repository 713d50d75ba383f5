#include "verifier-service/src/server/public_mention_rpcs.h"

#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/url/url.h"
#include "verifier-service/src/html/html_sanitizer.h"
#include "verifier-service/src/intake/target_rules.h"
#include "verifier-service/src/server/mention_rpcs.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

// Longest imported text field (content text, names, author note): as the verifier's own caps.
constexpr size_t kMaxImportedTextBytes = 32 * 1024;
constexpr size_t kMaxImportedShortBytes = 2048;

absl::Time FromProto(const google::protobuf::Timestamp& timestamp) {
  return absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
}

bool TimestampIsSet(const google::protobuf::Timestamp& timestamp) {
  return timestamp.seconds() != 0 || timestamp.nanos() != 0;
}

// `text` cut to at most `max` bytes at a UTF-8 boundary.
std::string Capped(const std::string& text, size_t max) {
  if (text.size() <= max) {
    return text;
  }
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return text.substr(0, end);
}

// The sites of `hashes`' targets must be in the binding: each target's host.
absl::Status RequireTargetSites(const google::protobuf::RepeatedPtrField<std::string>& targets,
                                const auth::Caller& caller) {
  for (const std::string& target : targets) {
    absl::StatusOr<url::Url> parsed = url::ParseUrl(target);
    RETURN_IF_ERROR(RequireSite(caller, parsed.ok() ? parsed->host() : std::string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<crypto::Sha256Digest>> TargetHashes(
    const google::protobuf::RepeatedPtrField<std::string>& targets,
    const url::TrackingParameters& tracking, const auth::Caller& caller) {
  if (targets.empty() || targets.size() > store::kMaxPublicTargets) {
    return absl::InvalidArgumentError(
        absl::StrCat("Give 1 to ", store::kMaxPublicTargets, " targets."));
  }
  std::vector<crypto::Sha256Digest> hashes;
  for (const std::string& target : targets) {
    ASSIGN_OR_RETURN(crypto::Sha256Digest hash, TargetHash(target, tracking));
    hashes.push_back(hash);
  }
  RETURN_IF_ERROR(RequireTargetSites(targets, caller));
  return hashes;
}

}  // namespace

absl::StatusOr<store::PublicMentionQuery> ValidatePublicList(
    const v1::ListPublicMentionsRequest& request, const url::TrackingParameters& tracking,
    const auth::Caller& caller) {
  store::PublicMentionQuery query;
  if (request.domain().empty() == request.targets().empty()) {
    return absl::InvalidArgumentError("Exactly one of domain and targets is required.");
  }
  if (!request.domain().empty()) {
    ASSIGN_OR_RETURN(query.domain, intake::ParseSiteDomain(request.domain()));
    RETURN_IF_ERROR(RequireSite(caller, query.domain));
  } else {
    ASSIGN_OR_RETURN(query.target_hashes, TargetHashes(request.targets(), tracking, caller));
  }
  switch (request.order()) {
    case v1::PUBLIC_MENTION_ORDER_RECEIVED:
      break;
    case v1::PUBLIC_MENTION_ORDER_UPDATED:
      query.by_update = true;
      break;
    default:
      return absl::InvalidArgumentError("order is not a known PublicMentionOrder.");
  }
  query.ascending = request.ascending();
  if (request.page_size() < 0 || request.page_size() > store::kMaxPublicPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must be from 0 (default ", store::kDefaultPublicPageSize, ") to ",
                     store::kMaxPublicPageSize, "."));
  }
  query.page_size =
      request.page_size() == 0 ? store::kDefaultPublicPageSize : request.page_size();
  if (request.page() < 0 ||
      static_cast<int64_t>(request.page()) * query.page_size > store::kMaxPublicOffset) {
    return absl::InvalidArgumentError(
        absl::StrCat("page must be from 0 to ", store::kMaxPublicOffset / query.page_size,
                     " at this page size; read further with since_id."));
  }
  query.page = request.page();
  for (const int type : request.types()) {
    std::string name = TypeName(static_cast<v1::MentionType>(type));
    if (name.empty()) {
      return absl::InvalidArgumentError("types holds an unknown MentionType.");
    }
    query.types.push_back(std::move(name));
  }
  if (request.has_since()) {
    query.since = FromProto(request.since());
  }
  if (request.since_id() < 0) {
    return absl::InvalidArgumentError("since_id must not be negative.");
  }
  query.since_id = request.since_id();
  return query;
}

absl::StatusOr<std::vector<crypto::Sha256Digest>> ValidatePublicCount(
    const v1::CountPublicMentionsRequest& request, const url::TrackingParameters& tracking,
    const auth::Caller& caller) {
  return TargetHashes(request.targets(), tracking, caller);
}

absl::StatusOr<ChangesQuery> ValidateChanges(const v1::ListMentionChangesRequest& request,
                                             const auth::Caller& caller) {
  ChangesQuery query;
  ASSIGN_OR_RETURN(query.domain, intake::ParseSiteDomain(request.domain()));
  RETURN_IF_ERROR(RequireSite(caller, query.domain));
  if (request.limit() < 0 || request.limit() > store::kMaxChangesPerPage) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit must be from 0 (default 100) to ", store::kMaxChangesPerPage, "."));
  }
  query.limit = request.limit() == 0 ? 100 : request.limit();
  if (request.after().size() > 64) {
    return absl::InvalidArgumentError("after is not a cursor of this feed.");
  }
  query.after = request.after();
  return query;
}

absl::StatusOr<ExportQuery> ValidateExport(const v1::ExportMentionsRequest& request,
                                           const auth::Caller& caller) {
  ExportQuery query;
  ASSIGN_OR_RETURN(query.domain, intake::ParseSiteDomain(request.domain()));
  RETURN_IF_ERROR(RequireSite(caller, query.domain));
  if (request.limit() < 0 || request.limit() > store::kMaxExportPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit must be from 0 (default 500) to ", store::kMaxExportPageSize, "."));
  }
  query.limit = request.limit() == 0 ? 500 : request.limit();
  if (request.after_wm_id() < 0) {
    return absl::InvalidArgumentError("after_wm_id must not be negative.");
  }
  query.after_wm_id = request.after_wm_id();
  return query;
}

absl::StatusOr<ImportBatch> ValidateImport(const v1::ImportMentionsRequest& request,
                                           const url::TrackingParameters& tracking,
                                           const auth::Caller& caller) {
  if (request.mentions().empty() || request.mentions_size() > store::kMaxImportBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("Give 1 to ", store::kMaxImportBatch, " mentions."));
  }
  ImportBatch batch;
  batch.reverify = request.reverify();
  for (const v1::Mention& mention : request.mentions()) {
    ASSIGN_OR_RETURN(OrRejection<store::NewMention> pair,
                     ValidateSubmission(mention.source(), mention.target(), tracking, caller));
    if (std::holds_alternative<intake::Rejection>(pair)) {
      ++batch.rejected;
      continue;
    }
    if (!TimestampIsSet(mention.created_at())) {
      return absl::InvalidArgumentError("Every imported mention needs created_at.");
    }
    store::ImportedMention& item = batch.mentions.emplace_back();
    item.pair = std::get<store::NewMention>(std::move(pair));
    switch (mention.state()) {
      case v1::MENTION_STATE_PENDING:
        item.state = store::MentionState::kPending;
        break;
      case v1::MENTION_STATE_FAILED:
        item.state = store::MentionState::kFailed;
        item.reason = Capped(mention.reason(), 64);
        break;
      default:  // VERIFIED, or unspecified (webmention.io's feed lists verified mentions).
        item.state = store::MentionState::kVerified;
        break;
    }
    item.received = FromProto(mention.created_at());
    if (TimestampIsSet(mention.updated_at())) {
      item.updated = FromProto(mention.updated_at());
    }
    if (TimestampIsSet(mention.verified_at())) {
      item.verified = FromProto(mention.verified_at());
    } else if (item.state == store::MentionState::kVerified) {
      item.verified = item.received;
    }
    store::MentionContent& content = item.content;
    content.type = item.state == store::MentionState::kVerified
                       ? (TypeName(mention.type()).empty() ? "mention" : TypeName(mention.type()))
                       : "";
    if (content.type.empty()) {
      content = store::MentionContent{.type = ""};
      continue;
    }
    const absl::StatusOr<url::Url> base = url::ParseUrl(item.pair.source);
    if (!base.ok()) {  // Cannot happen: the pair was validated.
      return absl::InvalidArgumentError("source is not a URL.");
    }
    if (content.type == "rsvp") {
      const std::string& rsvp = mention.rsvp();
      if (rsvp == "yes" || rsvp == "no" || rsvp == "maybe" || rsvp == "interested") {
        content.rsvp = rsvp;
      }
    }
    content.author_name = Capped(mention.author().name(), kMaxImportedShortBytes);
    content.author_url = html::SafeUrl(mention.author().url(), *base, false, kMaxImportedShortBytes);
    content.author_photo =
        html::SafeUrl(mention.author().photo(), *base, false, kMaxImportedShortBytes);
    content.author_note = Capped(mention.author().note(), kMaxImportedShortBytes);
    content.name = Capped(mention.name(), kMaxImportedShortBytes);
    content.published = Capped(mention.published(), 64);
    content.url = html::SafeUrl(mention.url(), *base, false, kMaxImportedShortBytes);
    content.content_text = Capped(mention.content_text(), kMaxImportedTextBytes);
    const html::SanitizedHtml sanitized = html::SanitizeHtml(mention.content_html(), *base);
    content.content_html = sanitized.html;
    content.content_truncated = mention.content_truncated() || sanitized.truncated ||
                                content.content_text.size() < mention.content_text().size();
  }
  return batch;
}

PORTCULLIS_VERIFIER_RPC(ListPublicMentions) {
  return rpcs_.Serve(
      "ListPublicMentions", context, request, response, kReadAccess,
      [this](const v1::ListPublicMentionsRequest& request, const auth::Caller& caller) {
        return ValidatePublicList(request, tracking_, caller);
      },
      OnPool(*deps_.pool, [this, response](store::PublicMentionQuery query,
                                           const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(std::vector<store::StoredMention> mentions,
                         deps_.public_mentions->ListPublic(query, call.sites()));
        for (const store::StoredMention& mention : mentions) {
          ToProto(mention, response->add_mentions());
        }
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(CountPublicMentions) {
  return rpcs_.Serve(
      "CountPublicMentions", context, request, response, kReadAccess,
      [this](const v1::CountPublicMentionsRequest& request, const auth::Caller& caller) {
        return ValidatePublicCount(request, tracking_, caller);
      },
      OnPool(*deps_.pool, [this, response](std::vector<crypto::Sha256Digest> targets,
                                           const RpcCall& call) -> absl::Status {
        ASSIGN_OR_RETURN(store::PublicMentionCounts counts,
                         deps_.public_mentions->CountPublic(targets, call.sites()));
        response->set_count(counts.total);
        response->set_mentions(counts.mention);
        response->set_replies(counts.reply);
        response->set_likes(counts.like);
        response->set_reposts(counts.repost);
        response->set_bookmarks(counts.bookmark);
        response->set_rsvps(counts.rsvp);
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(ListMentionChanges) {
  return rpcs_.Serve(
      "ListMentionChanges", context, request, response, kReadAccess, ValidateChanges,
      OnPool(*deps_.pool,
             [this, response](ChangesQuery query, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(store::MentionChangePage page,
                                deps_.public_mentions->ListChanges(query.domain, query.after,
                                                                   query.limit, call.sites()));
               for (const store::MentionChange& change : page.changes) {
                 v1::MentionChange* out = response->add_changes();
                 out->set_wm_id(change.wm_id);
                 out->set_deleted(change.deleted);
                 if (!change.deleted) {
                   ToProto(change.mention, out->mutable_mention());
                 }
               }
               response->set_next_cursor(page.next_cursor);
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ExportMentions) {
  return rpcs_.Serve(
      "ExportMentions", context, request, response, kAdminAccess, ValidateExport,
      OnPool(*deps_.pool,
             [this, response](ExportQuery query, const RpcCall& call) -> absl::Status {
               ASSIGN_OR_RETURN(std::vector<store::StoredMention> mentions,
                                deps_.public_mentions->Export(query.domain, query.after_wm_id,
                                                              query.limit, call.sites()));
               for (const store::StoredMention& mention : mentions) {
                 ToProto(mention, response->add_mentions());
               }
               return absl::OkStatus();
             }));
}

PORTCULLIS_VERIFIER_RPC(ImportMentions) {
  return rpcs_.Serve(
      "ImportMentions", context, request, response, kAdminAccess,
      [this](const v1::ImportMentionsRequest& request, const auth::Caller& caller) {
        return ValidateImport(request, tracking_, caller);
      },
      OnPool(*deps_.pool,
             [this, response](ImportBatch batch, const RpcCall& call) -> absl::Status {
               store::ImportResult result;
               if (!batch.mentions.empty()) {
                 ASSIGN_OR_RETURN(result, deps_.public_mentions->Import(
                                              batch.mentions, batch.reverify, call.sites()));
               }
               response->set_created(result.created);
               response->set_unchanged(result.unchanged);
               response->set_rejected(result.rejected + batch.rejected);
               call.Info("ImportMentions created={} unchanged={} rejected={}", result.created,
                         result.unchanged, result.rejected + batch.rejected);
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
