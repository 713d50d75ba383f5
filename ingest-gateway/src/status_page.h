#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "portcullis/verifier/v1/verifier.pb.h"

// GET /webmention/status/{id} for people and for programs: the representation chosen by
// `Accept`, and the HTML page (every value escaped; no script, no links, nothing loaded).
namespace portcullis::gateway {

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

// The status page of `mention`: state, reason, type, author, source, target, timestamps and the
// no_link diagnostic; a complete UTF-8 HTML document.
std::string RenderStatusHtml(const verifier::v1::Mention& mention);

}  // namespace portcullis::gateway
