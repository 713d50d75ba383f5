#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/review_client.h"
#include "portcullis/verifier/v1/verifier.pb.h"

// The review page (issue 16), on the gateway's ADMIN listener only: a site owner approves,
// rejects, hides and unhides mentions. Server-rendered HTML that works without JavaScript (there
// is none): one form per mention, buttons and labelled fields reachable by keyboard.
//
// Security: the reviewer gives an API token (`review` scope) once, in a form; it is kept in an
// HttpOnly, SameSite=Strict cookie scoped to kReviewPath and sent by the gateway to the
// verifier with each call (the verifier decides what the token may see and change). Every change
// is a POST carrying a CSRF token, an HMAC of the session token under a key of this process,
// compared in constant time. Responses carry kReviewContentSecurityPolicy (no script at all, no
// images — an author's photo is shown as its URL, never hot-linked), no-store, nosniff, no
// referrer, no framing. Nothing from the verifier's error messages reaches the page.
namespace portcullis::gateway {

inline constexpr char kReviewPath[] = "/admin/review";
inline constexpr char kReviewLoginPath[] = "/admin/review/login";
inline constexpr char kReviewActionPath[] = "/admin/review/action";
inline constexpr char kReviewLogoutPath[] = "/admin/review/logout";
// Outside the cookie's path (a cookie for /admin/review is not sent to /admin/review.css).
inline constexpr char kReviewStylesheetPath[] = "/admin/review.css";
inline constexpr char kReviewCookieName[] = "portcullis_review";

inline constexpr char kReviewContentSecurityPolicy[] =
    "default-src 'none'; style-src 'self'; img-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

// Mentions per page of the queue.
inline constexpr int kReviewPageSize = 50;

// The session token of `headers`' Cookie: the value of kReviewCookieName when it has the form
// of an API token (1 to 256 characters of [A-Za-z0-9_-]); nullopt otherwise.
std::optional<std::string> ReviewSessionToken(const http::HeaderMap& headers);

// The CSRF token of a session: lowercase hex HMAC-SHA256 of `session_token` under `key`.
std::string ReviewCsrfToken(absl::string_view key, absl::string_view session_token);

// The query of GET kReviewPath: site (required: 1 to 253 bytes without spaces or controls),
// state (unreviewed, approved, rejected, hidden; default unreviewed), page (a page token).
struct ReviewQuery {
  std::string site;
  verifier::v1::ReviewState state = verifier::v1::REVIEW_STATE_UNREVIEWED;
  std::string page;
};
std::optional<ReviewQuery> ParseReviewQuery(absl::string_view query);

// The documents (complete UTF-8 HTML, loading kReviewStylesheetPath only). `message` is a plain
// sentence shown above the content (escaped), empty for none.
std::string RenderReviewLogin(absl::string_view site, absl::string_view message);
std::string RenderReviewQueue(const ReviewQuery& query,
                              const verifier::v1::ListReviewQueueResponse& queue,
                              absl::string_view csrf, absl::string_view message);
std::string RenderReviewMessage(absl::string_view title, absl::string_view message,
                                absl::string_view site);

http::HttpResponse ReviewStylesheetResponse();

class ReviewPage {
 public:
  // `client` must outlive the page. `csrf_key`: random bytes of this process.
  ReviewPage(ReviewClient& client, std::string csrf_key)
      : client_(client), csrf_key_(std::move(csrf_key)) {}

  void Show(const http::HttpRequest& request, http::Respond respond) const;    // GET kReviewPath
  void LogIn(const http::HttpRequest& request, http::Respond respond) const;   // POST login
  void Act(const http::HttpRequest& request, http::Respond respond) const;     // POST action
  void LogOut(const http::HttpRequest& request, http::Respond respond) const;  // POST logout

 private:
  ReviewClient& client_;
  const std::string csrf_key_;
};

}  // namespace portcullis::gateway
