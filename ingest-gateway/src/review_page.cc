#include "ingest-gateway/src/review_page.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/crypto/hmac.h"
#include "common/logging/log.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/form_decoding.h"
#include "ingest-gateway/src/review_page_css.h"
#include "ingest-gateway/src/status_page.h"

namespace portcullis::gateway {
namespace {

namespace v1 = verifier::v1;
using http::HttpResponse;

constexpr size_t kMaxReviewSessionTokenBytes = 256;
constexpr size_t kMaxReviewSiteBytes = 253;
constexpr size_t kMaxReviewPageTokenBytes = 512;
constexpr size_t kMaxReviewNoteBytes = 1000;
constexpr char kReviewHexDigits[] = "0123456789abcdef";

struct ReviewStateRow {
  v1::ReviewState state;
  absl::string_view query;  // ?state=
  absl::string_view label;
};
constexpr ReviewStateRow kReviewStates[] = {
    {v1::REVIEW_STATE_UNREVIEWED, "unreviewed", "Unreviewed"},
    {v1::REVIEW_STATE_APPROVED, "approved", "Approved"},
    {v1::REVIEW_STATE_REJECTED, "rejected", "Rejected"},
    {v1::REVIEW_STATE_HIDDEN, "hidden", "Hidden"},
};

struct ReviewActionRow {
  absl::string_view form_value;
  v1::ReviewAction action;
  absl::string_view label;
};
constexpr ReviewActionRow kReviewActions[] = {
    {"approve", v1::REVIEW_ACTION_APPROVE, "Approve"},
    {"reject", v1::REVIEW_ACTION_REJECT, "Reject"},
    {"hide", v1::REVIEW_ACTION_HIDE, "Hide"},
    {"unhide", v1::REVIEW_ACTION_UNHIDE, "Unhide"},
};

absl::string_view StateQuery(v1::ReviewState state) {
  for (const ReviewStateRow& row : kReviewStates) {
    if (row.state == state) {
      return row.query;
    }
  }
  return "unreviewed";
}

bool IsReviewTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

bool HasSpaceOrControl(absl::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      return true;
    }
  }
  return false;
}

std::string PercentEncode(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += absl::ascii_toupper(kReviewHexDigits[byte >> 4]);
      out += absl::ascii_toupper(kReviewHexDigits[byte & 0xf]);
    }
  }
  return out;
}

std::string QueueUrl(absl::string_view site, v1::ReviewState state, absl::string_view page = "") {
  std::string url =
      absl::StrCat(kReviewPath, "?site=", PercentEncode(site), "&state=", StateQuery(state));
  if (!page.empty()) {
    absl::StrAppend(&url, "&page=", PercentEncode(page));
  }
  return url;
}

// The single value of `name` in `fields`; nullopt when absent or repeated.
std::optional<std::string> OneField(const std::vector<FormField>& fields, absl::string_view name) {
  const std::vector<absl::string_view> values = FieldValues(fields, name);
  if (values.size() != 1) {
    return std::nullopt;
  }
  return std::string(values.front());
}

bool ValidSite(absl::string_view site) {
  return !site.empty() && site.size() <= kMaxReviewSiteBytes && !HasSpaceOrControl(site);
}

std::string Utc(const google::protobuf::Timestamp& timestamp) {
  const absl::Time time = absl::FromUnixSeconds(timestamp.seconds());
  return absl::FormatTime("%Y-%m-%d %H:%M UTC", time, absl::UTCTimeZone());
}

std::string ReviewLinkHtml(absl::string_view url) {
  const std::string escaped = HtmlEscape(url);
  if (!absl::StartsWithIgnoreCase(url, "http://") && !absl::StartsWithIgnoreCase(url, "https://")) {
    return escaped;
  }
  return absl::StrCat("<a href=\"", escaped, "\" rel=\"nofollow noopener noreferrer\">", escaped,
                      "</a>");
}

std::string HiddenField(absl::string_view name, absl::string_view value) {
  return absl::StrCat("<input type=\"hidden\" name=\"", name, "\" value=\"", HtmlEscape(value),
                      "\">");
}

std::string Document(absl::string_view title, absl::string_view body) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
      "<meta name=\"robots\" content=\"noindex\">\n",
      "<meta name=\"referrer\" content=\"no-referrer\">\n<title>", HtmlEscape(title),
      "</title>\n<link rel=\"stylesheet\" href=\"", kReviewStylesheetPath, "\">\n</head>\n<body>\n",
      body, "</body>\n</html>\n");
}

std::string MessageHtml(absl::string_view message) {
  return message.empty()
             ? std::string()
             : absl::StrCat("<p class=\"message\" role=\"status\">", HtmlEscape(message), "</p>\n");
}

// One mention of the queue: who, what, where from, when, the content, then the review form.
std::string MentionHtml(const v1::Mention& mention, const ReviewQuery& query,
                        absl::string_view csrf) {
  const std::string id = HtmlEscape(mention.mention_id());
  const std::string author =
      mention.author().name().empty() ? std::string("Unknown author") : mention.author().name();
  std::string html = absl::StrCat("<li class=\"mention\" id=\"m-", id, "\">\n<article aria-labelledby=\"a-", id,
                                  "\">\n<h2 id=\"a-", id, "\">", HtmlEscape(author), "</h2>\n<dl>\n");
  if (!mention.author().url().empty()) {
    absl::StrAppend(&html, "<dt>Author URL</dt><dd>", ReviewLinkHtml(mention.author().url()),
                    "</dd>\n");
  }
  if (!mention.author().photo().empty()) {
    // Shown as its URL: a hot-linked image would tell the author's host who reviews.
    absl::StrAppend(&html, "<dt>Photo</dt><dd class=\"url\">",
                    HtmlEscape(mention.author().photo()), "</dd>\n");
  }
  absl::StrAppend(&html, "<dt>Type</dt><dd>", HtmlEscape(MentionTypeName(mention.type())),
                  "</dd>\n<dt>Source</dt><dd>", ReviewLinkHtml(mention.source()),
                  "</dd>\n<dt>Target</dt><dd>", ReviewLinkHtml(mention.target()),
                  "</dd>\n<dt>Received</dt><dd><time datetime=\"",
                  absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                   absl::FromUnixSeconds(mention.created_at().seconds()),
                                   absl::UTCTimeZone()),
                  "\">", Utc(mention.created_at()), "</time></dd>\n<dt>Public</dt><dd>",
                  mention.shown() ? "shown in the feed" : "not shown", "</dd>\n");
  if (!mention.review_note().empty()) {
    absl::StrAppend(&html, "<dt>Note</dt><dd>", HtmlEscape(mention.review_note()), "</dd>\n");
  }
  if (mention.review_reason() == "content_changed") {
    absl::StrAppend(&html, "<dt>Why here</dt><dd>its content changed since it was reviewed</dd>\n");
  }
  absl::StrAppend(&html, "</dl>\n");
  // Sanitized by the verifier (allow-listed tags and attributes); the policy blocks the rest.
  if (!mention.content_html().empty()) {
    absl::StrAppend(&html, "<div class=\"content\">", mention.content_html(), "</div>\n");
  } else if (!mention.content_text().empty()) {
    absl::StrAppend(&html, "<div class=\"content\"><p>", HtmlEscape(mention.content_text()),
                    "</p></div>\n");
  }
  absl::StrAppend(&html, "<form method=\"post\" action=\"", kReviewActionPath,
                  "\" class=\"review\" data-mention-id=\"", id, "\">\n",
                  HiddenField("csrf", csrf), HiddenField("site", query.site),
                  HiddenField("state", StateQuery(query.state)),
                  HiddenField("mention_id", mention.mention_id()), "\n<label for=\"n-", id,
                  "\">Note (optional)</label>\n<input id=\"n-", id,
                  "\" name=\"note\" maxlength=\"1000\" autocomplete=\"off\">\n<div class=\"buttons\">");
  for (const ReviewActionRow& row : kReviewActions) {
    const bool hidden = mention.review() == v1::REVIEW_STATE_HIDDEN;
    if ((row.action == v1::REVIEW_ACTION_HIDE && hidden) ||
        (row.action == v1::REVIEW_ACTION_UNHIDE && !hidden)) {
      continue;  // Hide for what is not hidden, Unhide for what is.
    }
    absl::StrAppend(&html, "<button type=\"submit\" name=\"action\" value=\"", row.form_value,
                    "\" class=\"", row.form_value, "\" aria-describedby=\"a-", id, "\">",
                    row.label, "</button>");
  }
  absl::StrAppend(&html, "</div>\n</form>\n</article>\n</li>\n");
  return html;
}

HttpResponse ReviewHtml(Answer answer, std::string body, const AnswerDetails& details = {}) {
  HttpResponse response;
  response.headers.Set("Content-Type", "text/html; charset=utf-8");
  response.headers.Set("Content-Security-Policy", kReviewContentSecurityPolicy);
  response.headers.Set("X-Content-Type-Options", "nosniff");
  response.headers.Set("X-Frame-Options", "DENY");
  response.headers.Set("Referrer-Policy", "no-referrer");
  response.headers.Set("Cache-Control", "no-store");
  response.body = std::move(body);
  return Answered(answer, std::move(response), details);
}

std::string SessionCookie(absl::string_view token) {
  return absl::StrCat(kReviewCookieName, "=", token, "; Path=", kReviewPath,
                      "; HttpOnly; SameSite=Strict");
}

std::string ClearedCookie() {
  return absl::StrCat(kReviewCookieName, "=; Path=", kReviewPath,
                      "; Max-Age=0; HttpOnly; SameSite=Strict");
}

HttpResponse Redirect(absl::string_view location, std::optional<std::string> cookie) {
  HttpResponse response =
      ReviewHtml(Answer::kReviewRedirect, "", {.location = location});
  if (cookie) {
    response.headers.Set("Set-Cookie", *cookie);
  }
  return response;
}

// The page for a failed verifier call made with the reviewer's token.
HttpResponse ReviewFailure(const absl::Status& status, absl::string_view site,
                           absl::string_view request_id) {
  switch (status.code()) {
    case absl::StatusCode::kUnauthenticated: {
      HttpResponse response = ReviewHtml(
          Answer::kReviewTokenRefused,
          RenderReviewLogin(site, "The verifier does not accept this token (unknown or revoked)."));
      response.headers.Set("Set-Cookie", ClearedCookie());
      return response;
    }
    case absl::StatusCode::kPermissionDenied:
      return ReviewHtml(Answer::kReviewForbidden,
                        RenderReviewMessage("Not allowed",
                                            "This token may not review this site: it needs the "
                                            "review scope and this site among its sites.",
                                            site));
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
      return ReviewHtml(Answer::kReviewBadRequest,
                        RenderReviewMessage("Not found",
                                            "There is no such site or mention, or the request "
                                            "is malformed.",
                                            site));
    default:
      break;
  }
  logging::Warn("request_id={} review page: verifier call failed: {}", std::string(request_id),
                status.ToString());
  const Answer answer = VerifierFailure(status.code());
  return ReviewHtml(answer,
                    RenderReviewMessage("Try again", "The verifier cannot answer now; try again "
                                        "in a moment.", site),
                    {.retry_after_seconds = 5});
}

HttpResponse ReviewBadRequest(absl::string_view message) {
  return ReviewHtml(Answer::kReviewBadRequest, RenderReviewMessage("Bad request", message, ""));
}

}  // namespace

std::optional<std::string> ReviewSessionToken(const http::HeaderMap& headers) {
  for (const auto& [name, value] : headers.fields()) {
    if (!absl::EqualsIgnoreCase(name, "cookie")) {
      continue;
    }
    for (absl::string_view pair : absl::StrSplit(value, ';')) {
      pair = absl::StripAsciiWhitespace(pair);
      if (!absl::ConsumePrefix(&pair, kReviewCookieName) || !absl::ConsumePrefix(&pair, "=")) {
        continue;
      }
      if (pair.empty() || pair.size() > kMaxReviewSessionTokenBytes) {
        return std::nullopt;
      }
      for (const char c : pair) {
        if (!IsReviewTokenChar(c)) {
          return std::nullopt;
        }
      }
      return std::string(pair);
    }
  }
  return std::nullopt;
}

std::string ReviewCsrfToken(absl::string_view key, absl::string_view session_token) {
  const crypto::HmacSha256Digest digest =
      crypto::HmacSha256(key, absl::StrCat("review-csrf:", session_token));
  std::string hex;
  for (const unsigned char byte : digest) {
    hex += kReviewHexDigits[byte >> 4];
    hex += kReviewHexDigits[byte & 0xf];
  }
  return hex;
}

std::optional<ReviewQuery> ParseReviewQuery(absl::string_view query) {
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(query);
  if (!fields.ok()) {
    return std::nullopt;
  }
  ReviewQuery parsed;
  const std::optional<std::string> site = OneField(*fields, "site");
  if (!site || !ValidSite(*site)) {
    return std::nullopt;
  }
  parsed.site = *site;
  const std::vector<absl::string_view> states = FieldValues(*fields, "state");
  if (states.size() > 1) {
    return std::nullopt;
  }
  if (!states.empty()) {
    bool known = false;
    for (const ReviewStateRow& row : kReviewStates) {
      if (states.front() == row.query) {
        parsed.state = row.state;
        known = true;
      }
    }
    if (!known) {
      return std::nullopt;
    }
  }
  const std::vector<absl::string_view> pages = FieldValues(*fields, "page");
  if (pages.size() > 1 || (!pages.empty() && (pages.front().size() > kMaxReviewPageTokenBytes ||
                                              HasSpaceOrControl(pages.front())))) {
    return std::nullopt;
  }
  if (!pages.empty()) {
    parsed.page = std::string(pages.front());
  }
  return parsed;
}

std::string RenderReviewLogin(absl::string_view site, absl::string_view message) {
  return Document(
      "Review mentions: log in",
      absl::StrCat(
          "<main>\n<h1>Review the mentions of ", HtmlEscape(site), "</h1>\n", MessageHtml(message),
          "<form method=\"post\" action=\"", kReviewLoginPath, "\" class=\"login\">\n",
          HiddenField("site", site),
          "\n<label for=\"token\">API token with the review scope</label>\n"
          "<input id=\"token\" name=\"token\" type=\"password\" required autocomplete=\"off\" "
          "spellcheck=\"false\" maxlength=\"256\" autofocus>\n"
          "<p class=\"hint\">Given once; kept in a cookie this browser sends to this page only.</p>\n"
          "<button type=\"submit\">Log in</button>\n</form>\n</main>\n"));
}

std::string RenderReviewMessage(absl::string_view title, absl::string_view message,
                                absl::string_view site) {
  std::string back;
  if (!site.empty()) {
    back = absl::StrCat("<p><a href=\"", HtmlEscape(QueueUrl(site, v1::REVIEW_STATE_UNREVIEWED)),
                        "\">Back to the review queue</a></p>\n");
  }
  return Document(title, absl::StrCat("<main>\n<h1>", HtmlEscape(title), "</h1>\n",
                                      MessageHtml(message), back, "</main>\n"));
}

std::string RenderReviewQueue(const ReviewQuery& query, const v1::ListReviewQueueResponse& queue,
                              absl::string_view csrf, absl::string_view message) {
  std::string nav = "<nav aria-label=\"Review state\"><ul>";
  for (const ReviewStateRow& row : kReviewStates) {
    absl::StrAppend(&nav, "<li><a href=\"", HtmlEscape(QueueUrl(query.site, row.state)), "\"",
                    row.state == query.state ? " aria-current=\"page\"" : "", ">", row.label,
                    "</a></li>");
  }
  absl::StrAppend(&nav, "</ul></nav>\n");
  std::string label;
  for (const ReviewStateRow& row : kReviewStates) {
    if (row.state == query.state) {
      label = std::string(row.label);
    }
  }
  std::string items;
  for (const v1::Mention& mention : queue.mentions()) {
    absl::StrAppend(&items, MentionHtml(mention, query, csrf));
  }
  std::string list = queue.mentions().empty()
                         ? std::string("<p class=\"empty\">Nothing here.</p>\n")
                         : absl::StrCat("<ol class=\"queue\">\n", items, "</ol>\n");
  if (!queue.next_page_token().empty()) {
    absl::StrAppend(&list, "<p><a rel=\"next\" href=\"",
                    HtmlEscape(QueueUrl(query.site, query.state, queue.next_page_token())),
                    "\">Next page</a></p>\n");
  }
  return Document(
      absl::StrCat("Review: ", query.site),
      absl::StrCat("<header>\n<h1>Mentions of ", HtmlEscape(query.site), ": ", label, "</h1>\n",
                   nav, "<form method=\"post\" action=\"", kReviewLogoutPath,
                   "\" class=\"logout\">", HiddenField("csrf", csrf), HiddenField("site", query.site),
                   "<button type=\"submit\">Log out</button></form>\n</header>\n<main>\n",
                   MessageHtml(message), list, "</main>\n"));
}

HttpResponse ReviewStylesheetResponse() {
  HttpResponse response;
  response.headers.Set("Content-Type", "text/css; charset=utf-8");
  response.headers.Set("X-Content-Type-Options", "nosniff");
  response.headers.Set("Cache-Control", "public, max-age=604800");
  response.body = std::string(kReviewPageCss);
  return Answered(Answer::kReviewStylesheet, std::move(response));
}

void ReviewPage::Show(const http::HttpRequest& request, http::Respond respond) const {
  const std::optional<ReviewQuery> query = ParseReviewQuery(request.query);
  if (!query) {
    respond(ReviewBadRequest(
        "Open this page as /admin/review?site=DOMAIN (state: unreviewed, approved, rejected or "
        "hidden)."));
    return;
  }
  const std::optional<std::string> token = ReviewSessionToken(request.headers);
  if (!token) {
    respond(ReviewHtml(Answer::kReviewLogin, RenderReviewLogin(query->site, "")));
    return;
  }
  v1::ListReviewQueueRequest list;
  list.set_site(query->site);
  list.set_state(query->state);
  list.set_page_size(kReviewPageSize);
  list.set_page_token(query->page);
  client_.ListReviewQueue(
      request.request_id, *token, list,
      [respond = std::move(respond), query = *query, request_id = request.request_id,
       csrf = ReviewCsrfToken(csrf_key_, *token)](
          absl::StatusOr<v1::ListReviewQueueResponse> result) {
        if (!result.ok()) {
          respond(ReviewFailure(result.status(), query.site, request_id));
          return;
        }
        respond(ReviewHtml(Answer::kReviewPage, RenderReviewQueue(query, *result, csrf, "")));
      });
}

void ReviewPage::LogIn(const http::HttpRequest& request, http::Respond respond) const {
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(request.body);
  if (!fields.ok()) {
    respond(ReviewBadRequest("The form does not decode."));
    return;
  }
  const std::optional<std::string> site = OneField(*fields, "site");
  const std::optional<std::string> token = OneField(*fields, "token");
  if (!site || !ValidSite(*site)) {
    respond(ReviewBadRequest("The form names no site."));
    return;
  }
  http::HeaderMap cookie;
  if (token) {
    cookie.Set("Cookie", absl::StrCat(kReviewCookieName, "=", absl::StripAsciiWhitespace(*token)));
  }
  const std::optional<std::string> session = ReviewSessionToken(cookie);
  if (!session) {
    respond(ReviewHtml(Answer::kReviewTokenRefused,
                       RenderReviewLogin(*site, "That is not an API token.")));
    return;
  }
  // The token is checked by asking for the queue once; only then is it kept.
  v1::ListReviewQueueRequest probe;
  probe.set_site(*site);
  probe.set_page_size(1);
  client_.ListReviewQueue(
      request.request_id, *session, probe,
      [respond = std::move(respond), site = *site, session = *session,
       request_id = request.request_id](absl::StatusOr<v1::ListReviewQueueResponse> result) {
        if (!result.ok()) {
          respond(ReviewFailure(result.status(), site, request_id));
          return;
        }
        respond(Redirect(QueueUrl(site, v1::REVIEW_STATE_UNREVIEWED), SessionCookie(session)));
      });
}

void ReviewPage::Act(const http::HttpRequest& request, http::Respond respond) const {
  const std::optional<std::string> token = ReviewSessionToken(request.headers);
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(request.body);
  if (!fields.ok()) {
    respond(ReviewBadRequest("The form does not decode."));
    return;
  }
  const std::optional<std::string> site = OneField(*fields, "site");
  if (!site || !ValidSite(*site)) {
    respond(ReviewBadRequest("The form names no site."));
    return;
  }
  if (!token) {
    respond(ReviewHtml(Answer::kReviewTokenRefused,
                       RenderReviewLogin(*site, "Log in again: this browser has no session.")));
    return;
  }
  const std::optional<std::string> csrf = OneField(*fields, "csrf");
  if (!csrf || !crypto::ConstantTimeEquals(*csrf, ReviewCsrfToken(csrf_key_, *token))) {
    respond(ReviewHtml(Answer::kReviewCsrfRefused,
                       RenderReviewMessage("Nothing changed",
                                           "The form did not come from this review page (its "
                                           "CSRF token is missing or stale); nothing changed.",
                                           *site)));
    return;
  }
  const std::optional<std::string> mention_id = OneField(*fields, "mention_id");
  const std::optional<std::string> action_name = OneField(*fields, "action");
  const std::optional<std::string> state_name = OneField(*fields, "state");
  const std::optional<std::string> note = OneField(*fields, "note");
  std::optional<v1::ReviewAction> action;
  for (const ReviewActionRow& row : kReviewActions) {
    if (action_name && *action_name == row.form_value) {
      action = row.action;
    }
  }
  v1::ReviewState state = v1::REVIEW_STATE_UNREVIEWED;
  for (const ReviewStateRow& row : kReviewStates) {
    if (state_name && *state_name == row.query) {
      state = row.state;
    }
  }
  if (!mention_id || mention_id->empty() || mention_id->size() > 64 || !action ||
      (note && note->size() > kMaxReviewNoteBytes)) {
    respond(ReviewBadRequest("The form needs a mention, an action and a note of at most 1000 "
                             "bytes."));
    return;
  }
  v1::ReviewMentionRequest review;
  review.set_mention_id(*mention_id);
  review.set_action(*action);
  review.set_note(note.value_or(""));
  client_.ReviewMention(
      request.request_id, *token, review,
      [respond = std::move(respond), site = *site, state,
       request_id = request.request_id](absl::StatusOr<v1::ReviewMentionResponse> result) {
        if (!result.ok()) {
          respond(ReviewFailure(result.status(), site, request_id));
          return;
        }
        respond(Redirect(QueueUrl(site, state), std::nullopt));
      });
}

void ReviewPage::LogOut(const http::HttpRequest& request, http::Respond respond) const {
  const std::optional<std::string> token = ReviewSessionToken(request.headers);
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(request.body);
  const std::optional<std::string> site =
      fields.ok() ? OneField(*fields, "site") : std::optional<std::string>();
  const std::optional<std::string> csrf =
      fields.ok() ? OneField(*fields, "csrf") : std::optional<std::string>();
  if (!site || !ValidSite(*site)) {
    respond(ReviewBadRequest("The form names no site."));
    return;
  }
  if (token && (!csrf || !crypto::ConstantTimeEquals(*csrf, ReviewCsrfToken(csrf_key_, *token)))) {
    respond(ReviewHtml(Answer::kReviewCsrfRefused,
                       RenderReviewMessage("Nothing changed",
                                           "The form did not come from this review page.", *site)));
    return;
  }
  respond(Redirect(QueueUrl(*site, v1::REVIEW_STATE_UNREVIEWED), ClearedCookie()));
}

}  // namespace portcullis::gateway
