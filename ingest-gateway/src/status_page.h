#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ingest-gateway/src/http/http_message.h"
#include "portcullis/verifier/v1/verifier.pb.h"

// GET /webmention/status/{id} for people and for programs: the representation chosen by
// `Accept`, and the HTML page for the person who sent the webmention: what happened and what to
// do next, in plain sentences; every value from the sender escaped; no script and no inline
// style — one stylesheet from the gateway, so a strict Content-Security-Policy holds.
namespace portcullis::gateway {

// The page's stylesheet (source: status_page.css), long-cached.
inline constexpr char kStatusStylesheetPath[] = "/webmention/status.css";

// The status page's policy: nothing but the gateway's own stylesheet loads; no script, no
// images, no forms, no framing.
inline constexpr char kStatusPageContentSecurityPolicy[] =
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

enum class StatusFormat { kJson, kHtml, kNotAcceptable };

// Chooses by the q-values of RFC 9110 §12.5.1: text/html when the client prefers it
// (browsers do), JSON otherwise — also with no Accept header, for */*, and on a tie. Media-range
// specificity decides which range gives a type its q ("text/html;q=0" beats "*/*"). A header that
// accepts neither is kNotAcceptable.
StatusFormat NegotiateStatusFormat(std::optional<absl::string_view> accept);

// `text` with &, <, >, " and ' replaced by character references.
std::string HtmlEscape(absl::string_view text);

// "reply" for MENTION_TYPE_REPLY; empty for UNSPECIFIED.
std::string MentionTypeName(verifier::v1::MentionType type);

// What a state (and, for FAILED, its reason) means to the sender, and what to do next: one plain
// sentence each. The README's "When a webmention fails" table says the same.
struct StatusAdvice {
  std::string summary;
  std::string next_step;
};
StatusAdvice AdviceFor(verifier::v1::MentionState state, absl::string_view reason);

// "just now", "5 minutes ago", "3 hours ago", "2 days ago": how long before `now` `then` was.
std::string RelativeTime(absl::Time then, absl::Time now);

// The status page of `mention` at `now`: state, the advice (for no_link, the links to the
// target's site the source has instead), then type, author, source and target as links,
// timestamps absolute and relative to `now`, and the mention id; a complete UTF-8 HTML document
// that loads kStatusStylesheetPath and nothing else.
std::string RenderStatusHtml(const verifier::v1::Mention& mention, absl::Time now);
std::string RenderStatusHtml(const verifier::v1::Mention& mention);

// The page's headers and body (text/html, kStatusPageContentSecurityPolicy, no-store).
http::HttpResponse StatusHtmlResponse(const verifier::v1::Mention& mention);

// GET kStatusStylesheetPath: text/css, cacheable for a week.
http::HttpResponse StatusStylesheetResponse();

}  // namespace portcullis::gateway
