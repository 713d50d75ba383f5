#include "ingest-gateway/src/answers.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "common/logging/log.h"
#include "common/status/status_mapping.h"

namespace portcullis::gateway {
namespace {

using A = Answer;

constexpr char kRetryLater[] = "The service is temporarily unavailable; retry later.";
constexpr char kTooLarge[] = "The request body is larger than this endpoint accepts.";
constexpr char kNotProcessed[] = "The request could not be processed.";

// A kVerifier* row: its status, `error`, Retry-After and X-Ingest-Action ("retry") are what the
// common mapping (status::kStatusMappings, the one table) says for `code`; its fixed description
// and `when` are the gateway's.
constexpr AnswerRow VerifierRow(Answer answer, absl::StatusCode code, absl::string_view description,
                                absl::string_view when) {
  const status::StatusMapping& mapping = status::MappingFor(code);
  return {answer,
          mapping.http_status,
          mapping.http_error,
          description,
          mapping.retryable ? kRetryAfter : kNoHeaders,
          mapping.retryable ? absl::string_view("retry") : absl::string_view(),
          when};
}

// THE TABLE. One row per answer: status, `error` (or decision `status`), fixed description,
// headers, X-Ingest-Action, and when it is given. Every error body is
// {"error": <code>, "error_description": <description>}; /ingest errors after the item was read
// add "item_id" and "content_hash", 422 adds "field". Every response also carries X-Request-Id
// (the server), every /mentions response the CORS headers (mentions_feed.cc).
constexpr std::array<AnswerRow, 60> kAnswers = {{
    // ---- POST /webmention (webmention_handlers.cc) ----
    {A::kWebmentionAccepted, 202, "accepted", "", kLocation, "",
     "the verifier stored the pair (new, or PENDING/VERIFIED/FAILED already); body names the "
     "status URL, Location too"},
    {A::kWebmentionRejected, 400, "", "", kNoHeaders, "",
     "the verifier refused the pair (not http(s), credentials, source = target, target not "
     "served, ...): its reason code and its reason_description"},
    {A::kUnsupportedContentType, 400, "unsupported_content_type",
     "Send the webmention as application/x-www-form-urlencoded.", kNoHeaders, "",
     "Content-Type is not a form"},
    {A::kInvalidForm, 400, "invalid_form",
     "The body is not a valid application/x-www-form-urlencoded form.", kNoHeaders, "",
     "the form does not decode"},
    {A::kMissingSource, 400, "missing_source", "The form has no source parameter.", kNoHeaders, "",
     "no source"},
    {A::kDuplicateSource, 400, "duplicate_source", "The form has more than one source parameter.",
     kNoHeaders, "", "source twice"},
    {A::kMissingTarget, 400, "missing_target", "The form has no target parameter.", kNoHeaders, "",
     "no target"},
    {A::kDuplicateTarget, 400, "duplicate_target", "The form has more than one target parameter.",
     kNoHeaders, "", "target twice"},
    // ---- GET /webmention/status/{id} (webmention_handlers.cc) ----
    {A::kMentionStatus, 200, "", "", kNoHeaders, "",
     "the mention, as JSON or escaped HTML by Accept (Vary, Cache-Control: no-store)"},
    {A::kMentionNotFound, 404, "not_found", "No mention has this id.", kNoHeaders, "",
     "the id cannot be a mention id, or the verifier answers NOT_FOUND or INVALID_ARGUMENT"},
    {A::kStatusNotAcceptable, 406, "not_acceptable",
     "The status is available as application/json or text/html.", kNoHeaders, "",
     "Accept takes neither JSON nor HTML"},
    // ---- every webmention route and GET /mentions (rate_limiter.h) ----
    {A::kRateLimited, 429, "rate_limited", "", kRetryAfter, "",
     "the client address (or the source host) has no token: \"Too many requests from this "
     "<address|source host>; retry in <n> seconds.\", Retry-After: <n>"},
    // ---- GET /mentions, OPTIONS /mentions (mentions_feed.cc) ----
    {A::kFeed, 200, "", "", kNoHeaders, "",
     "the jf2 feed (ETag, Cache-Control: public, Link rel=next when there is more)"},
    {A::kFeedNotModified, 304, "", "", kNoHeaders, "", "If-None-Match matches the feed's ETag"},
    {A::kFeedPreflight, 204, "", "", kNoHeaders, "", "CORS preflight"},
    {A::kInvalidFeedQuery, 400, "invalid_request", "", kNoHeaders, "",
     "target/site missing, given twice, or invalid: the sentence of ParseFeedQuery"},
    // ---- GET /avatar/{hash} (avatar_proxy.h) ----
    {A::kAvatar, 200, "", "", kNoHeaders, "",
     "the image (ETag, Cache-Control: public, nosniff, CSP default-src 'none')"},
    {A::kAvatarNotModified, 304, "", "", kNoHeaders, "", "If-None-Match matches the image's ETag"},
    {A::kAvatarNotFound, 404, "not_found", "No avatar has this address.", kNoHeaders, "",
     "the hash is malformed, or no shown mention of a proxying site has this photo"},
    {A::kAvatarRefused, 502, "bad_gateway",
     "The author's host did not send an image this proxy serves.", kNoHeaders, "",
     "the photo is not a JPEG, PNG, GIF, WebP or AVIF image, is over 512 KiB, or its host refused "
     "or is not allowed"},
    // ---- the review page on the admin listener (review_page.cc; HTML, never JSON) ----
    {A::kReviewPage, 200, "", "", kNoHeaders, "",
     "the review queue of a site, for the token in the HttpOnly SameSite=Strict cookie"},
    {A::kReviewLogin, 200, "", "", kNoHeaders, "", "no session cookie: the form for a token"},
    {A::kReviewRedirect, 303, "", "", kLocation, "",
     "logged in, a mention reviewed, or logged out: back to the queue (or the form)"},
    {A::kReviewTokenRefused, 401, "unauthenticated", "", kNoHeaders, "",
     "the verifier refuses the token (unknown, revoked): the form again, the cookie cleared"},
    {A::kReviewForbidden, 403, "forbidden", "", kNoHeaders, "",
     "the token lacks the review scope or is bound to other sites"},
    {A::kReviewCsrfRefused, 403, "csrf_refused", "", kNoHeaders, "",
     "a POST without the page's CSRF token, or with another one: nothing changed"},
    {A::kReviewBadRequest, 400, "invalid_request", "", kNoHeaders, "",
     "site, state, mention id or action missing or malformed"},
    {A::kReviewStylesheet, 200, "", "", kNoHeaders, "", "the review page's stylesheet"},
    // ---- POST /ingest (ingest_handler.cc) ----
    {A::kIngestAccepted, 202, "accepted", "", kNoHeaders, "accept", "accepted and durably stored"},
    {A::kIngestQuarantined, 202, "quarantined", "", kNoHeaders, "quarantine",
     "malformed provenance from a verified publisher: dead-letter queue, with reason"},
    {A::kIngestDropped, 200, "dropped", "", kNoHeaders, "drop",
     "synthetic content without valid provenance, with reason"},
    {A::kIngestDuplicate, 200, "acknowledged_duplicate", "", kNoHeaders, "duplicate",
     "same publisher and canonical payload within retention; reason: the original decision"},
    {A::kMalformedJson, 400, "malformed_json", "", kNoHeaders, "",
     "not UTF-8 JSON: \"The body is not UTF-8 JSON: <parser's reason>\""},
    {A::kUnknownPublisher, 403, "unknown_publisher",
     "X-Provenance-Source names no registered, enabled publisher.", kNoHeaders, "",
     "the verifier knows no enabled publisher of that name"},
    {A::kItemTooLarge, 413, "payload_too_large", kTooLarge, kNoHeaders, "",
     "the body is over the handler's cap (or JSON nesting/size limits)"},
    {A::kCanonicalTooLarge, 413, "payload_too_large", "", kNoHeaders, "",
     "the RFC 8785 form is over its cap: \"The item's canonical (RFC 8785) form is larger than "
     "<n> bytes.\""},
    {A::kUnsupportedMediaType, 415, "unsupported_media_type",
     "Send the item as application/json (UTF-8).", kNoHeaders, "", "Content-Type is not JSON"},
    {A::kSchemaViolation, 422, "schema_violation", "", kNoHeaders, "",
     "X-Provenance-Source missing/invalid, id missing/empty/too long, wrong JSON types, duplicate "
     "keys: with `field` (header name or JSON Pointer) and a sentence naming the problem"},
    // ---- the router (http/router.cc) ----
    {A::kNoRoute, 404, "not_found", "There is nothing at this address.", kNoHeaders, "",
     "no route has this path"},
    {A::kMethodNotAllowed, 405, "method_not_allowed", "This address does not accept this method.",
     kAllow, "", "a route has this path, not this method; Allow lists the methods"},
    // ---- the HTTP server (http/request_reader.cc, http/http_server.cc) ----
    {A::kBadHttp, 400, "bad_request", "The request is not valid HTTP/1.1.", kClose, "",
     "the parser refuses the request"},
    {A::kBadTarget, 400, "bad_request", "The request target must be an absolute path.", kClose, "",
     "absolute-form, authority-form or * target"},
    {A::kBodyTooLarge, 413, "payload_too_large", kTooLarge, kClose, "",
     "Content-Length or the chunked body over the server's or the path's cap"},
    {A::kHeadersTooLarge, 431, "headers_too_large", "The request header fields are too large.",
     kClose, "", "the header over its cap"},
    {A::kServerBusy, 503, "unavailable", "The server is busy; retry later.", kRetryAfter | kClose,
     "", "the connection is over max_connections (answered without reading)"},
    {A::kTooManyConnections, 429, "too_many_connections",
     "Too many open connections from your address; close some or retry later.",
     kRetryAfter | kClose, "",
     "the connection is over max_connections_per_address (answered without reading)"},
    {A::kHandlerFailed, 500, "internal_error", kNotProcessed, kNoHeaders, "", "a handler threw"},
    // ---- probes (readiness.cc) ----
    {A::kHealthy, 200, "ok", "", kNoHeaders, "", "GET /healthz: always"},
    {A::kReady, 200, "ready", "", kNoHeaders, "", "GET /readyz: the verifier answers"},
    {A::kNotReadyDraining, 503, "not_ready", "The gateway is shutting down.", kNoHeaders, "",
     "GET /readyz after SIGTERM"},
    {A::kNotReadyVerifier, 503, "not_ready", "The verifier is not reachable.", kNoHeaders, "",
     "GET /readyz before the first good check, or while the verifier is down"},
    // ---- a verifier call failed: the code's http_error in common/status picks the row ----
    VerifierRow(A::kVerifierUnavailable, absl::StatusCode::kUnavailable, kRetryLater,
                "UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED; and UNAUTHENTICATED from the "
                "verifier (our token: FromVerifierStatus), never 401"),
    VerifierRow(A::kVerifierRateLimited, absl::StatusCode::kResourceExhausted,
                "Too many requests; retry later.", "RESOURCE_EXHAUSTED"),
    VerifierRow(A::kVerifierInvalidRequest, absl::StatusCode::kInvalidArgument,
                "The request is invalid.", "INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE"),
    VerifierRow(A::kVerifierNotFound, absl::StatusCode::kNotFound,
                "Nothing was found for this request.", "NOT_FOUND (GetMention: kMentionNotFound)"),
    VerifierRow(A::kVerifierAlreadyExists, absl::StatusCode::kAlreadyExists, "This already exists.",
                "ALREADY_EXISTS"),
    VerifierRow(A::kVerifierForbidden, absl::StatusCode::kPermissionDenied,
                "This request is not allowed.", "PERMISSION_DENIED"),
    VerifierRow(A::kVerifierUnauthenticated, absl::StatusCode::kUnauthenticated,
                "Authentication is required.",
                "UNAUTHENTICATED of the gateway's own making (the verifier's is 503)"),
    VerifierRow(A::kVerifierNotImplemented, absl::StatusCode::kUnimplemented,
                "This is not supported.", "UNIMPLEMENTED"),
    VerifierRow(A::kVerifierInternal, absl::StatusCode::kInternal, kNotProcessed,
                "UNKNOWN, INTERNAL, DATA_LOSS, or an answer without a decision"),
}};

constexpr bool RowsInEnumOrder() {
  for (size_t i = 0; i < kAnswers.size(); ++i) {
    if (static_cast<size_t>(kAnswers[i].answer) != i) {
      return false;
    }
  }
  return true;
}
static_assert(RowsInEnumOrder(), "kAnswers must list every Answer once, in enum order");
static_assert(static_cast<size_t>(A::kVerifierInternal) + 1 == kAnswers.size());

// The kVerifier* rows, in the order VerifierFailure searches them.
constexpr std::array<Answer, 9> kVerifierRows = {
    A::kVerifierUnavailable,     A::kVerifierRateLimited,    A::kVerifierInvalidRequest,
    A::kVerifierNotFound,        A::kVerifierAlreadyExists,  A::kVerifierForbidden,
    A::kVerifierUnauthenticated, A::kVerifierNotImplemented, A::kVerifierInternal,
};

Answer VerifierRowWithError(absl::string_view error) {
  for (Answer answer : kVerifierRows) {
    if (RowFor(answer).code == error) {
      return answer;
    }
  }
  return A::kVerifierInternal;
}

}  // namespace

absl::Span<const AnswerRow> AnswerTable() { return kAnswers; }

const AnswerRow& RowFor(Answer answer) { return kAnswers[static_cast<size_t>(answer)]; }

http::HttpResponse Answered(Answer answer, http::HttpResponse response,
                            const AnswerDetails& details) {
  const AnswerRow& row = RowFor(answer);
  response.status = row.status;
  if (row.headers & kLocation) {
    response.headers.Set("Location", details.location);
  }
  if (row.headers & kAllow) {
    response.headers.Set("Allow", details.allow);
  }
  if (row.headers & kRetryAfter) {
    response.headers.Set("Retry-After", absl::StrCat(details.retry_after_seconds));
  }
  if (details.ingest && !row.ingest_action.empty()) {
    response.headers.Set("X-Ingest-Action", row.ingest_action);
  }
  return response;
}

http::HttpResponse ErrorAnswer(Answer answer, const AnswerDetails& details) {
  const AnswerRow& row = RowFor(answer);
  absl::string_view code = row.code;
  if (code.empty()) {
    code = details.error.empty() ? "rejected" : details.error;
  }
  const absl::string_view description =
      row.description.empty() ? details.description : row.description;
  return Answered(answer, http::JsonError(row.status, code, description), details);
}

Answer VerifierFailure(absl::StatusCode code) {
  if (code == absl::StatusCode::kOk) {
    return A::kVerifierInternal;
  }
  return VerifierRowWithError(status::MappingFor(code).http_error);
}

Answer GetMentionFailure(absl::StatusCode code) {
  if (code == absl::StatusCode::kNotFound || code == absl::StatusCode::kInvalidArgument) {
    return A::kMentionNotFound;
  }
  return VerifierFailure(code);
}

Answer AvatarFailure(absl::StatusCode code) {
  if (code == absl::StatusCode::kNotFound || code == absl::StatusCode::kInvalidArgument) {
    return A::kAvatarNotFound;
  }
  if (code == absl::StatusCode::kFailedPrecondition) {
    return A::kAvatarRefused;
  }
  return VerifierFailure(code);
}

absl::Status FromVerifierStatus(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    logging::Error("the verifier refused the gateway's token: check --verifier_token_file");
    return absl::UnavailableError("the verifier refused the gateway's token");
  }
  return status::FromGrpcStatus(status);
}

http::HttpResponse ResponseForStatus(const absl::Status& status, int retry_after_seconds) {
  return ErrorAnswer(VerifierFailure(status.code()), {.retry_after_seconds = retry_after_seconds});
}

absl::string_view DescriptionForError(absl::string_view error) {
  return RowFor(VerifierRowWithError(error)).description;
}

}  // namespace portcullis::gateway
