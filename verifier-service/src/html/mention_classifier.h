#pragma once

// What kind of mention a source page is, and what its entry says: the primary h-entry of the
// page's microformats2, its type (reply, like, repost, bookmark, rsvp, mention), name, published
// time, URL and content as plain text and as sanitized HTML.
//
// Pure: no I/O. The input is ParseMf2's output for the page as fetched (after redirects).
//
// The primary h-entry (what the IndieWeb consumers — XRay, mf2util, webmention.io — read as the
// page's post, the "representative h-entry" practice):
//   1. the first h-entry whose `url` equals the page URL (fragments ignored), looked for among the
//      top-level items and their children in document order — a permalink page names itself;
//   2. else the first top-level h-entry;
//   3. else the first h-entry child of the first top-level h-feed that has one;
//   4. else the first h-entry nested anywhere among the children of other items;
//   5. else none: the page is a plain mention.
//
// Type, from the primary h-entry's properties, in post-type-discovery order: `in-reply-to` →
// reply (or rsvp when `rsvp` is yes/no/maybe/interested, compared lowercase; other rsvp values are
// ignored), `repost-of` → repost, `like-of` → like, `bookmark-of` → bookmark, otherwise mention.
// When the target is given only a property with a value that points at the target counts (a
// string URL, or a nested h-cite's `url` or `value`; WHATWG-parsed, fragment ignored): a reply to
// someone else that links to our target in its text is a mention of ours, and a reply to someone
// else that likes our target is a like of ours.
//
// Name: the entry's `name`, kept only when it is a title distinct from the content. It is dropped
// when, compared without case, whitespace and ASCII punctuation, the content starts with it (a
// shortened name, "This page has a link..." — a trailing "..." or "…" does not count) or it
// contains the content (a name implied from the entry's whole text contains the content).
// Published: the first `published`, as written (whitespace collapsed, capped).
// URL: the first `url` that is an absolute http(s) URL, else the page URL.
// Content: the first `content` — e-content gives `value` (plain text, whitespace collapsed) and
// `html` (sanitized with html_sanitizer.h against the page URL); a plain string is text and its
// escaped HTML. Without `content`, `summary` is read the same way. Both capped; `content_truncated`
// says whether either was cut.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "boost/json/object.hpp"
#include "common/url/url.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::verifier::html {

// The mention types, as stored (store::MentionContent::type, proto MentionType lowercase).
inline constexpr char kTypeMention[] = "mention";
inline constexpr char kTypeReply[] = "reply";
inline constexpr char kTypeLike[] = "like";
inline constexpr char kTypeRepost[] = "repost";
inline constexpr char kTypeBookmark[] = "bookmark";
inline constexpr char kTypeRsvp[] = "rsvp";

struct EntryLimits {
  size_t max_text_bytes = 10'000;     // content_text
  size_t max_html_bytes = 32 * 1024;  // content_html, after sanitizing
  size_t max_name_bytes = 1'000;      // name
  size_t max_published_bytes = 100;   // published
  size_t max_url_bytes = 4'096;       // url and the URLs inside content_html
};

// What the primary h-entry says; the fields of store::MentionContent that are not authorship.
// Every string is capped; `content_html` is sanitized.
struct MentionEntry {
  std::string type = kTypeMention;
  std::string rsvp;  // "yes", "no", "maybe" or "interested" when type is "rsvp"; else empty.
  std::string name;
  std::string published;
  std::string url;  // Absolute.
  std::string content_text;
  std::string content_html;
  bool content_truncated = false;
};

// The primary h-entry of the page at `page_url` (the rules above), or nullptr when it has none.
// The result points into `mf2`.
const boost::json::object* FindPrimaryEntry(const boost::json::object& mf2,
                                            const url::Url& page_url);

// Reads `entry` (an h-entry of the page at `page_url`). `target` (nullable) is the mention's
// target: with it, only properties pointing at it give the type.
// `sources` (nullable): where the e-* html of `mf2` comes from (ParseMf2), so that the
// sanitizer reads the parsed tree rather than parsing the html again; the result is the same.
MentionEntry ClassifyEntry(const boost::json::object& entry, const url::Url& page_url,
                           const url::Url* target, const EntryLimits& limits = {},
                           const Mf2HtmlSources* sources = nullptr);

// FindPrimaryEntry, then ClassifyEntry; a page without an h-entry gives a "mention" whose url is
// the page URL and nothing else.
MentionEntry ClassifyMention(const boost::json::object& mf2, const url::Url& page_url,
                             const url::Url* target, const EntryLimits& limits = {},
                             const Mf2HtmlSources* sources = nullptr);

}  // namespace portcullis::verifier::html
