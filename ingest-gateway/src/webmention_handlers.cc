#include "ingest-gateway/src/webmention_handlers.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "boost/json/array.hpp"
#include "boost/json/object.hpp"
#include "common/logging/log.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/avatar_proxy.h"
#include "ingest-gateway/src/form_decoding.h"
#include "ingest-gateway/src/status_page.h"

namespace portcullis::gateway {
namespace {

using http::HttpRequest;
using http::HttpResponse;

boost::json::string_view Json(absl::string_view s) { return {s.data(), s.size()}; }

// RFC 3339 in UTC, or null when the timestamp is unset.
boost::json::value Rfc3339(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() == 0 && timestamp.nanos() == 0) {
    return nullptr;
  }
  const absl::Time time =
      absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
  return boost::json::value(absl::FormatTime("%Y-%m-%dT%H:%M:%E*SZ", time, absl::UTCTimeZone()));
}

// A mention id is a UUID; anything that cannot be one is answered 404 without a call.
bool LooksLikeMentionId(absl::string_view id) {
  if (id.empty() || id.size() > 64) {
    return false;
  }
  for (char c : id) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace

http::HttpResponse RateLimitedResponse(absl::Duration wait, absl::string_view what) {
  const int64_t seconds =
      std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(wait, absl::Seconds(1))));
  const std::string description =
      absl::StrCat("Too many requests from this ", what, "; retry in ", seconds, " seconds.");
  return ErrorAnswer(Answer::kRateLimited, {.retry_after_seconds = static_cast<int>(seconds),
                                            .description = description});
}

std::string WebmentionHandlers::ClientKeyOf(const HttpRequest& request) const {
  return ClientKey(request.client_address, request.headers.Get("X-Forwarded-For"),
                   limits_.trusted_proxies);
}

std::optional<HttpResponse> WebmentionHandlers::OverLimit(RateLimiter* limiter,
                                                          absl::string_view key,
                                                          absl::string_view what) const {
  if (limiter == nullptr) {
    return std::nullopt;
  }
  const absl::Duration wait = limiter->Acquire(key, limits_.now());
  if (wait <= absl::ZeroDuration()) {
    return std::nullopt;
  }
  return RateLimitedResponse(wait, what);
}

bool IsFormContentType(absl::string_view content_type) {
  const absl::string_view media_type =
      absl::StripAsciiWhitespace(content_type.substr(0, content_type.find(';')));
  return absl::EqualsIgnoreCase(media_type, "application/x-www-form-urlencoded");
}

std::string StateName(verifier::v1::MentionState state) {
  const std::string& full = verifier::v1::MentionState_Name(state);
  return std::string(absl::StripPrefix(full, "MENTION_STATE_"));
}

void WebmentionHandlers::Submit(const HttpRequest& request, http::Respond respond) const {
  if (auto limited = OverLimit(limits_.per_client, ClientKeyOf(request), "address")) {
    respond(*std::move(limited));
    return;
  }
  const std::optional<absl::string_view> content_type = request.headers.Get("Content-Type");
  if (!content_type || !IsFormContentType(*content_type)) {
    respond(ErrorAnswer(Answer::kUnsupportedContentType));
    return;
  }
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(request.body);
  if (!fields.ok()) {
    respond(ErrorAnswer(Answer::kInvalidForm));
    return;
  }
  const std::vector<absl::string_view> sources = FieldValues(*fields, "source");
  const std::vector<absl::string_view> targets = FieldValues(*fields, "target");
  if (sources.empty()) {
    respond(ErrorAnswer(Answer::kMissingSource));
    return;
  }
  if (sources.size() > 1) {
    respond(ErrorAnswer(Answer::kDuplicateSource));
    return;
  }
  if (targets.empty()) {
    respond(ErrorAnswer(Answer::kMissingTarget));
    return;
  }
  if (targets.size() > 1) {
    respond(ErrorAnswer(Answer::kDuplicateTarget));
    return;
  }

  if (const std::optional<std::string> host = SourceHostKey(sources.front())) {
    if (auto limited = OverLimit(limits_.per_source_host, *host, "source host")) {
      respond(*std::move(limited));
      return;
    }
  }

  verifier::v1::SubmitMentionRequest submit;
  submit.set_source(std::string(sources.front()));
  submit.set_target(std::string(targets.front()));
  verifier_.SubmitMention(
      request.request_id, submit,
      [respond = std::move(respond), request_id = request.request_id,
       retry_after =
           retry_after_seconds_](absl::StatusOr<verifier::v1::SubmitMentionResponse> result) {
        if (!result.ok()) {
          logging::Warn("request_id={} SubmitMention failed: {}", request_id,
                        result.status().ToString());
          respond(ResponseForStatus(result.status(), retry_after));
          return;
        }
        switch (result->decision()) {
          case verifier::v1::DECISION_ACCEPTED: {
            const std::string status_url = absl::StrCat(kStatusPathPrefix, result->mention_id());
            boost::json::object body;
            body["status"] = "accepted";
            body["mention_id"] = Json(result->mention_id());
            body["state"] = Json(StateName(result->state()));
            body["status_url"] = Json(status_url);
            respond(Answered(Answer::kWebmentionAccepted, http::JsonResponse(0, body),
                             {.location = status_url}));
            return;
          }
          case verifier::v1::DECISION_REJECTED:
            respond(ErrorAnswer(
                Answer::kWebmentionRejected,
                {.error = result->reason(), .description = result->reason_description()}));
            return;
          default:
            logging::Error("request_id={} SubmitMention answered without a decision", request_id);
            respond(ErrorAnswer(Answer::kVerifierInternal));
            return;
        }
      });
}

void WebmentionHandlers::Status(const HttpRequest& request, http::Respond respond) const {
  if (auto limited = OverLimit(limits_.per_client, ClientKeyOf(request), "address")) {
    respond(*std::move(limited));
    return;
  }
  if (!LooksLikeMentionId(request.path_param)) {
    respond(ErrorAnswer(Answer::kMentionNotFound));
    return;
  }
  const StatusFormat format = NegotiateStatusFormat(request.headers.Get("Accept"));
  if (format == StatusFormat::kNotAcceptable) {
    respond(ErrorAnswer(Answer::kStatusNotAcceptable));
    return;
  }
  verifier::v1::GetMentionRequest get;
  get.set_mention_id(request.path_param);
  verifier_.GetMention(request.request_id, get,
                       [respond = std::move(respond), request_id = request.request_id,
                        retry_after = retry_after_seconds_,
                        format](absl::StatusOr<verifier::v1::GetMentionResponse> result) {
                         if (!result.ok()) {
                           const Answer answer = GetMentionFailure(result.status().code());
                           if (answer != Answer::kMentionNotFound) {
                             logging::Warn("request_id={} GetMention failed: {}", request_id,
                                           result.status().ToString());
                           }
                           respond(ErrorAnswer(answer, {.retry_after_seconds = retry_after}));
                           return;
                         }
                         const verifier::v1::Mention& mention = result->mention();
                         if (format == StatusFormat::kHtml) {
                           respond(Answered(Answer::kMentionStatus, StatusHtmlResponse(mention)));
                           return;
                         }
                         boost::json::object body;
                         body["mention_id"] = Json(mention.mention_id());
                         body["source"] = Json(mention.source());
                         body["target"] = Json(mention.target());
                         body["state"] = Json(StateName(mention.state()));
                         body["reason"] = Json(mention.reason());
                         body["created_at"] = Rfc3339(mention.created_at());
                         body["updated_at"] = Rfc3339(mention.updated_at());
                         body["type"] = Json(MentionTypeName(mention.type()));
                         if (mention.has_author()) {
                           boost::json::object author;
                           author["name"] = Json(mention.author().name());
                           author["url"] = Json(mention.author().url());
                           // A proxying site's status shows the proxy, relative to us.
                           const std::string proxied = ProxiedPhotoUrl(mention.author(), "");
                           author["photo"] =
                               Json(proxied.empty() ? mention.author().photo() : proxied);
                           body["author"] = std::move(author);
                         }
                         body["verified_at"] = Rfc3339(mention.verified_at());
                         boost::json::array links;
                         for (const std::string& link : mention.links_to_target_host()) {
                           links.emplace_back(Json(link));
                         }
                         body["links_to_target_host"] = std::move(links);
                         HttpResponse response = http::JsonResponse(0, body);
                         response.headers.Set("Vary", "Accept");
                         response.headers.Set("Cache-Control", "no-store");
                         respond(Answered(Answer::kMentionStatus, std::move(response)));
                       });
}

}  // namespace portcullis::gateway
