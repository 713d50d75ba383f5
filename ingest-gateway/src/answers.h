#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "grpcpp/support/status.h"
#include "ingest-gateway/src/http/http_message.h"

// The gateway's status contract: every answer it can give a sender, in one table (kAnswers in
// answers.cc, read top to bottom). Handlers, the router and the HTTP server decide an `Answer`;
// the table says what that answer looks like on the wire — status, the body's `error` code (or
// its `status` word for decisions), the fixed `error_description`, and the headers.
// ../shared/DESIGN.md ("HTTP contract of the gateway") is the sender's view of the same table.
//
// Failures of a verifier call go through the one absl → gRPC → HTTP mapping in common/status:
// its `http_error` names the kVerifier* row (VerifierFailure), whose status, `error` and
// Retry-After are built from that mapping (VerifierRow in answers.cc). Two special cases, both
// here: the verifier refusing the gateway's own token (FromVerifierStatus) and GetMention's
// NOT_FOUND/INVALID_ARGUMENT (GetMentionFailure).
namespace portcullis::gateway {

enum class Answer {
  // POST /webmention
  kWebmentionAccepted,
  kWebmentionRejected,
  kUnsupportedContentType,
  kInvalidForm,
  kMissingSource,
  kDuplicateSource,
  kMissingTarget,
  kDuplicateTarget,
  // GET /webmention/status/{id}
  kMentionStatus,
  kMentionNotFound,
  kStatusNotAcceptable,
  // Every webmention route and GET /mentions: the client address or the source host over its rate.
  kRateLimited,
  // GET /mentions, OPTIONS /mentions
  kFeed,
  kFeedNotModified,
  kFeedPreflight,
  kInvalidFeedQuery,
  // GET /avatar/{hash} (avatar_proxy.h)
  kAvatar,
  kAvatarNotModified,
  kAvatarNotFound,
  kAvatarRefused,
  // GET /admin/review and its POSTs (review_page.cc), on the admin listener only
  kReviewPage,
  kReviewLogin,
  kReviewRedirect,
  kReviewTokenRefused,
  kReviewForbidden,
  kReviewCsrfRefused,
  kReviewBadRequest,
  kReviewStylesheet,
  // POST /ingest
  kIngestAccepted,
  kIngestQuarantined,
  kIngestDropped,
  kIngestDuplicate,
  kMalformedJson,
  kUnknownPublisher,
  kItemTooLarge,
  kCanonicalTooLarge,
  kUnsupportedMediaType,
  kSchemaViolation,
  // The router
  kNoRoute,
  kMethodNotAllowed,
  // The HTTP server itself, before or instead of a handler
  kBadHttp,
  kBadTarget,
  kBodyTooLarge,
  kHeadersTooLarge,
  kServerBusy,
  kTooManyConnections,
  kHandlerFailed,
  // Probes
  kHealthy,
  kReady,
  kNotReadyDraining,
  kNotReadyVerifier,
  // A verifier call failed (VerifierFailure picks the row through common/status)
  kVerifierUnavailable,
  kVerifierRateLimited,
  kVerifierInvalidRequest,
  kVerifierNotFound,
  kVerifierAlreadyExists,
  kVerifierForbidden,
  kVerifierUnauthenticated,
  kVerifierNotImplemented,
  kVerifierInternal,
};

// Headers an answer carries (bits of AnswerRow::headers).
enum AnswerHeader : uint32_t {
  kNoHeaders = 0,
  // Retry-After: <AnswerDetails::retry_after_seconds>.
  kRetryAfter = 1 << 0,
  // Connection: close; the server closes the connection after writing it.
  kClose = 1 << 1,
  // Location: <AnswerDetails::location>.
  kLocation = 1 << 2,
  // Allow: <AnswerDetails::allow>.
  kAllow = 1 << 3,
};

struct AnswerRow {
  Answer answer;
  int status;
  // The body's `error` for errors, its `status` for decisions; "" when the body has neither.
  // kWebmentionRejected: the verifier's reason (AnswerDetails::error), "rejected" when it has none.
  absl::string_view code;
  // The fixed `error_description`. "" for rows whose description is written per request
  // (AnswerDetails::description; `when` says what it holds) and for rows that are not errors.
  absl::string_view description;
  uint32_t headers;
  // X-Ingest-Action on POST /ingest ("" none).
  absl::string_view ingest_action;
  // When the gateway answers this, in a sender's words.
  absl::string_view when;
};

// Every row, in the order of `Answer`.
absl::Span<const AnswerRow> AnswerTable();
const AnswerRow& RowFor(Answer answer);

// What a row needs from the request it answers.
struct AnswerDetails {
  int retry_after_seconds = 0;    // kRetryAfter rows.
  absl::string_view location;     // kLocation rows.
  absl::string_view allow;        // kAllow rows.
  absl::string_view error;        // kWebmentionRejected: the verifier's reason code.
  absl::string_view description;  // Rows without a fixed description.
  // Answering POST /ingest: the row's X-Ingest-Action is sent.
  bool ingest = false;
};

// The row's status and headers on `response`, whose body the caller built.
http::HttpResponse Answered(Answer answer, http::HttpResponse response,
                            const AnswerDetails& details = {});

// The one error body {"error", "error_description"} of an error row, with its status and headers.
http::HttpResponse ErrorAnswer(Answer answer, const AnswerDetails& details = {});

// The row for a failed verifier call with `code`: common/status's `http_error` for the code names
// the kVerifier* row (OK, "no decision", counts as kInternal).
Answer VerifierFailure(absl::StatusCode code);

// GetMention's failures: an id the verifier does not know, or cannot read as an id, is no such
// mention (kMentionNotFound); anything else as VerifierFailure.
Answer GetMentionFailure(absl::StatusCode code);

// FetchAvatar's failures: a hash the verifier does not know, or cannot read, is no such avatar
// (kAvatarNotFound); FAILED_PRECONDITION (the author's host sent no acceptable image) is
// kAvatarRefused; anything else as VerifierFailure.
Answer AvatarFailure(absl::StatusCode code);

// The verifier's status as the gateway passes it on (status::FromGrpcStatus), except
// UNAUTHENTICATED: it refuses the gateway's own token, never the sender's request — a
// misconfiguration, or a token rotation the verifiers have not picked up yet. A 401 would tell
// the sender to stop; UNAVAILABLE (kVerifierUnavailable: 503 + Retry-After) makes it come back.
absl::Status FromVerifierStatus(const grpc::Status& status);

// The HTTP answer for a failed call to the verifier (VerifierFailure). The status message is never
// put in the body (it may name internal addresses): `error_description` is the row's fixed
// sentence. Retryable codes carry `Retry-After: <retry_after_seconds>`.
http::HttpResponse ResponseForStatus(const absl::Status& status, int retry_after_seconds);

// The fixed sentence of the kVerifier* row whose `error` is `error` (kVerifierInternal's if none).
absl::string_view DescriptionForError(absl::string_view error);

}  // namespace portcullis::gateway
