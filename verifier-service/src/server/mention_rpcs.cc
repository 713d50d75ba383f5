#include "verifier-service/src/server/mention_rpcs.h"

#include <memory>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "common/crypto/sha256.h"
#include "common/url/url.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/intake/target_rules.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/mention_page_token.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

struct TypeRow {
  v1::MentionType type;
  const char* name;
};

// The one table between MentionType and MentionContent::type.
constexpr TypeRow kTypes[] = {
    {v1::MENTION_TYPE_MENTION, "mention"}, {v1::MENTION_TYPE_REPLY, "reply"},
    {v1::MENTION_TYPE_LIKE, "like"},       {v1::MENTION_TYPE_REPOST, "repost"},
    {v1::MENTION_TYPE_BOOKMARK, "bookmark"}, {v1::MENTION_TYPE_RSVP, "rsvp"},
};

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

// The site a validated ListMentions request reads: its domain, or its target's serialized host
// (the site a mention of that target is on).
std::string QueriedSite(const v1::ListMentionsRequest& request, const store::MentionQuery& query) {
  if (!query.domain.empty()) {
    return query.domain;
  }
  absl::StatusOr<url::Url> target = url::ParseUrl(request.target());
  return target.ok() ? target->host() : std::string();
}

}  // namespace

absl::StatusOr<crypto::Sha256Digest> TargetHash(const std::string& target,
                                                const url::TrackingParameters& tracking) {
  if (target.size() > kMaxListTargetBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("target must be at most ", kMaxListTargetBytes, " bytes."));
  }
  for (const char c : target) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return absl::InvalidArgumentError("target must not contain whitespace or control characters.");
    }
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(target);
  if (!parsed.ok() || parsed->has_credentials()) {
    return absl::InvalidArgumentError(
        "target must be an absolute http or https URL without credentials.");
  }
  return crypto::Sha256(url::Normalize(*parsed, tracking));
}

absl::StatusOr<OrRejection<store::NewMention>> ValidateSubmission(
    const std::string& source, const std::string& target, const url::TrackingParameters& tracking,
    const auth::Caller& caller) {
  v1::SubmitMentionRequest request;
  request.set_source(source);
  request.set_target(target);
  intake::SubmitMentionValidation validation = intake::Validate(request, tracking);
  if (auto* rejection = std::get_if<intake::Rejection>(&validation)) {
    return OrRejection<store::NewMention>(std::move(*rejection));
  }
  const auto& normalized = std::get<intake::NormalizedMention>(validation);
  RETURN_IF_ERROR(RequireSite(caller, normalized.target_domain));
  return OrRejection<store::NewMention>(store::NewMention{
      source, target, normalized.key.source_hash, normalized.key.target_hash,
      normalized.target_domain, normalized.key.normalized_target,
      normalized.key.normalized_source});
}

absl::StatusOr<std::vector<SubmissionItem>> ValidateSubmissions(
    const v1::SubmitMentionsRequest& request, const url::TrackingParameters& tracking,
    const auth::Caller& caller) {
  RETURN_IF_ERROR(CheckBatchSize(request.items_size()));
  std::vector<SubmissionItem> items;
  items.reserve(request.items_size());
  for (const v1::SubmitMentionsItem& item : request.items()) {
    items.push_back({AcceptRequestId(item.request_id()).value_or(""),
                     ValidateSubmission(item.mention().source(), item.mention().target(),
                                        tracking, caller)});
  }
  return items;
}

absl::Status WriteSubmitResult(absl::StatusOr<store::SubmitResult> result, const RpcCall& call,
                               absl::string_view item_request_id,
                               v1::SubmitMentionResponse* response) {
  if (!result.ok()) {
    return StoreStatus(result.status(), call, item_request_id);
  }
  if (std::optional<intake::Rejection> rejection = UnservedTarget(result->target)) {
    WriteRejection(*rejection, response);
    return absl::OkStatus();
  }
  response->set_decision(v1::DECISION_ACCEPTED);
  response->set_mention_id(result->mention_id);
  response->set_state(ToProto(result->state));
  response->set_created(result->created);
  response->set_queued(result->queued);
  return absl::OkStatus();
}

std::optional<intake::Rejection> UnservedTarget(store::TargetMatch match) {
  switch (match) {
    case store::TargetMatch::kServed:
      return std::nullopt;
    case store::TargetMatch::kUnknownSite:
      return intake::Rejection{std::string(intake::kTargetNotSupported),
                               "The target is not on a site that receives webmentions here."};
    case store::TargetMatch::kUnknownResource:
      break;
  }
  return intake::Rejection{std::string(intake::kTargetNotFound),
                           "The target is not a page of this site that receives webmentions."};
}

absl::Status ValidateMentionId(const v1::GetMentionRequest& request) {
  if (!store::IsUuid(request.mention_id())) {
    return absl::InvalidArgumentError("mention_id must be a UUID");
  }
  return absl::OkStatus();
}

absl::StatusOr<store::MentionQuery> Validate(const v1::ListMentionsRequest& request,
                                             const url::TrackingParameters& tracking,
                                             const auth::Caller& caller) {
  ASSIGN_OR_RETURN(store::MentionQuery query, Validate(request, tracking));
  RETURN_IF_ERROR(RequireSite(caller, QueriedSite(request, query)));
  if (!query.review.empty()) {
    RETURN_IF_ERROR(caller.Require(auth::Scope::kReview));
  }
  // Who may not review reads what the public sees (the feed), whatever it asks for; so does a
  // caller that asks for only that (the gateway's feed).
  query.shown_only = request.shown_only() || !caller.MayReview();
  return query;
}

std::string ReviewStateName(v1::ReviewState state) {
  switch (state) {
    case v1::REVIEW_STATE_UNREVIEWED:
      return "UNREVIEWED";
    case v1::REVIEW_STATE_APPROVED:
      return "APPROVED";
    case v1::REVIEW_STATE_REJECTED:
      return "REJECTED";
    case v1::REVIEW_STATE_HIDDEN:
      return "HIDDEN";
    default:
      return "";
  }
}

v1::ReviewState ReviewStateOf(absl::string_view name) {
  for (const v1::ReviewState state : {v1::REVIEW_STATE_UNREVIEWED, v1::REVIEW_STATE_APPROVED,
                                      v1::REVIEW_STATE_REJECTED, v1::REVIEW_STATE_HIDDEN}) {
    if (name == ReviewStateName(state)) {
      return state;
    }
  }
  return v1::REVIEW_STATE_UNSPECIFIED;
}

void WithoutUnshownContent(store::StoredMention& mention) {
  if (mention.state == store::MentionState::kVerified && !mention.shown) {
    mention.content = store::MentionContent{.type = ""};
  }
}

std::string TypeName(v1::MentionType type) {
  for (const TypeRow& row : kTypes) {
    if (row.type == type) {
      return row.name;
    }
  }
  return "";
}

v1::MentionType TypeOf(absl::string_view name) {
  for (const TypeRow& row : kTypes) {
    if (name == row.name) {
      return row.type;
    }
  }
  return v1::MENTION_TYPE_UNSPECIFIED;
}

absl::StatusOr<store::MentionQuery> Validate(const v1::ListMentionsRequest& request,
                                             const url::TrackingParameters& tracking) {
  if (request.domain().empty() == request.target().empty()) {
    return absl::InvalidArgumentError("Exactly one of domain and target is required.");
  }
  store::MentionQuery query;
  if (!request.domain().empty()) {
    absl::StatusOr<std::string> domain = intake::ParseSiteDomain(request.domain());
    if (!domain.ok()) {
      return domain.status();
    }
    query.domain = *std::move(domain);
  } else {
    absl::StatusOr<crypto::Sha256Digest> hash = TargetHash(request.target(), tracking);
    if (!hash.ok()) {
      return hash.status();
    }
    query.target_hash = *hash;
  }
  switch (request.state()) {
    case v1::MENTION_STATE_UNSPECIFIED:
      break;
    case v1::MENTION_STATE_PENDING:
      query.state = store::MentionState::kPending;
      break;
    case v1::MENTION_STATE_VERIFIED:
      query.state = store::MentionState::kVerified;
      break;
    case v1::MENTION_STATE_FAILED:
      query.state = store::MentionState::kFailed;
      break;
    default:
      return absl::InvalidArgumentError("state is not a known MentionState.");
  }
  if (request.review() != v1::REVIEW_STATE_UNSPECIFIED) {
    query.review = ReviewStateName(request.review());
    if (query.review.empty()) {
      return absl::InvalidArgumentError("review is not a known ReviewState.");
    }
  }
  if (request.type() != v1::MENTION_TYPE_UNSPECIFIED) {
    query.type = TypeName(request.type());
    if (query.type.empty()) {
      return absl::InvalidArgumentError("type is not a known MentionType.");
    }
  }
  if (request.page_size() < 0 || request.page_size() > store::kMaxMentionPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size must be from 0 (default ", store::kDefaultMentionPageSize,
                     ") to ", store::kMaxMentionPageSize, "."));
  }
  query.page_size =
      request.page_size() == 0 ? store::kDefaultMentionPageSize : request.page_size();
  if (!request.page_token().empty()) {
    absl::StatusOr<store::MentionCursor> cursor =
        store::DecodeMentionPageToken(request.page_token());
    if (!cursor.ok()) {
      return cursor.status();
    }
    query.page_token = request.page_token();
  }
  return query;
}

void ToProto(const store::StoredMention& mention, v1::Mention* out) {
  out->set_mention_id(mention.mention_id);
  out->set_source(mention.source);
  out->set_target(mention.target);
  out->set_state(ToProto(mention.state));
  out->set_reason(mention.reason);
  *out->mutable_created_at() = TimestampProto(mention.created_at);
  *out->mutable_updated_at() = TimestampProto(mention.updated_at);
  const store::MentionContent& content = mention.content;
  out->set_type(TypeOf(content.type));
  out->set_rsvp(content.rsvp);
  if (!content.author_name.empty() || !content.author_url.empty() ||
      !content.author_photo.empty() || !content.author_note.empty()) {
    v1::Author* author = out->mutable_author();
    author->set_name(content.author_name);
    author->set_url(content.author_url);
    author->set_photo(content.author_photo);
    author->set_note(content.author_note);
    author->set_photo_proxy_hash(mention.photo_proxy_hash);
  }
  out->set_name(content.name);
  out->set_published(content.published);
  out->set_url(content.url);
  out->set_content_text(content.content_text);
  out->set_content_html(content.content_html);
  out->set_content_truncated(content.content_truncated);
  if (mention.verified_at.has_value()) {
    *out->mutable_verified_at() = TimestampProto(*mention.verified_at);
  }
  for (const std::string& link : mention.links_to_target_host) {
    out->add_links_to_target_host(link);
  }
  out->set_attempts(mention.attempts);
  out->set_review(ReviewStateOf(mention.review));
  out->set_review_note(mention.review_note);
  if (mention.reviewed_at.has_value()) {
    *out->mutable_reviewed_at() = TimestampProto(*mention.reviewed_at);
  }
  out->set_shown(mention.shown);
  out->set_review_reason(mention.review_reason);
  out->set_wm_id(mention.wm_id);
}

PORTCULLIS_VERIFIER_RPC(SubmitMention) {
  return rpcs_.Serve(
      "SubmitMention", context, request, response, kSubmitAccess,
      [this](const v1::SubmitMentionRequest& request, const auth::Caller& caller) {
        return ValidateSubmission(request.source(), request.target(), tracking_, caller);
      },
      // Answered by the batch writer when the batch holding the submission has committed.
      OnLoop([this, response](store::NewMention mention, Reply reply) {
        deps_.submissions->Submit(
            std::move(mention), [response, reply = std::move(reply)](
                                    absl::StatusOr<store::SubmitResult> result) mutable {
              const absl::Status status =
                  WriteSubmitResult(std::move(result), reply.call(), "", response);
              std::move(reply)(status);
            });
      }));
}

// Issue 21. Every valid item of the call enters the writer's queue at once (SubmitAll); the call
// is answered when the last of them has committed (or failed), each item with its own result.
PORTCULLIS_VERIFIER_RPC(SubmitMentions) {
  return rpcs_.Serve(
      "SubmitMentions", context, request, response, kSubmitAccess,
      [this](const v1::SubmitMentionsRequest& request, const auth::Caller& caller) {
        return ValidateSubmissions(request, tracking_, caller);
      },
      OnLoop([this, response](std::vector<SubmissionItem> items, Reply reply) {
        std::vector<store::MentionSubmitter::Submission> submissions;
        std::vector<int> positions;
        for (size_t i = 0; i < items.size(); ++i) {
          v1::SubmitMentionsResult* result = response->add_results();
          absl::StatusOr<OrRejection<store::NewMention>>& verdict = items[i].verdict;
          if (!verdict.ok()) {
            WriteItemStatus(verdict.status(), result->mutable_status());
          } else if (const auto* rejection = std::get_if<intake::Rejection>(&*verdict)) {
            WriteRejection(*rejection, result->mutable_mention());
          } else {
            submissions.push_back({std::get<store::NewMention>(*std::move(verdict)), nullptr});
            positions.push_back(static_cast<int>(i));
          }
        }
        if (submissions.empty()) {
          std::move(reply)(absl::OkStatus());
          return;
        }
        auto batch = std::make_shared<BatchReply>(std::move(reply),
                                                  static_cast<int>(submissions.size()));
        for (size_t k = 0; k < submissions.size(); ++k) {
          // Each callback writes only its own result: the results were all added above, so no
          // two writer threads touch the same message.
          v1::SubmitMentionsResult* result = response->mutable_results(positions[k]);
          submissions[k].done = [batch, result, request_id = items[positions[k]].request_id](
                                    absl::StatusOr<store::SubmitResult> written) {
            const absl::Status status = WriteSubmitResult(std::move(written), batch->call(),
                                                          request_id, result->mutable_mention());
            WriteItemStatus(status, result->mutable_status());
            if (!status.ok()) {
              result->clear_mention();
            }
            batch->Done();
          };
        }
        deps_.submissions->SubmitAll(std::move(submissions));
      }));
}

PORTCULLIS_VERIFIER_RPC(GetMention) {
  return rpcs_.Serve("GetMention", context, request, response, kReadAccess, ValidateMentionId,
                     OnPool(*deps_.pool, [this, request, response](const RpcCall& call) -> absl::Status {
                       ASSIGN_OR_RETURN(store::StoredMention mention,
                                        deps_.mentions->Get(request->mention_id(), call.sites()));
                       if (!call.caller().MayReview()) {
                         WithoutUnshownContent(mention);
                       }
                       ToProto(mention, response->mutable_mention());
                       return absl::OkStatus();
                     }));
}

PORTCULLIS_VERIFIER_RPC(ListMentions) {
  return rpcs_.Serve(
      "ListMentions", context, request, response, kReadAccess,
      [this](const v1::ListMentionsRequest& request, const auth::Caller& caller) {
        return Validate(request, tracking_, caller);
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

}  // namespace portcullis::verifier::server
