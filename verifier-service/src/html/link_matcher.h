#pragma once

// Does the source page link to the target? (Webmention verification, issue 5 §2.)
//
// Pure: no I/O. Reads an HtmlDocument already parsed from the fetched body; the caller passes the
// final URL (after redirects). Calling ParseMf2 on the same document before or after changes
// nothing here (it only rewrites relative URLs to the absolute ones they resolve to).
//
// What counts as a link, each value resolved with common/url (WHATWG) against the document's base
// (the first <base href>, resolved against the final URL; else the final URL, as DocumentBaseUrl):
//   - a[href], area[href], link[href];
//   - img[src], video[src], audio[src], source[src];
//   - the value of a microformats2 u-* property (an element with a u-* class inside an h-* root),
//     read as the mf2 spec reads u-*: a/area/link href, img/audio/video/source/iframe src, video
//     poster, object data, the value-class pattern, abbr title, data/input value, else the text.
//     This covers nested items' url values and `<data class="u-in-reply-to" value="...">`.
// Only HTML elements count (not SVG or MathML). Not links: text, comments, <script>, <style>,
// <template> (left out of the tree by HtmlDocument), attributes not listed above (srcset,
// data-src, poster outside u-*, iframe src outside u-*). <noscript> content counts: it is what a
// reader without scripts sees, and lazy-loading image markup puts the real <img src> there.
// img srcset is deliberately not read: its candidates are resolution variants of the img src
// that is already read, and a page showing the target image has it in src.
//
// A match is exact: the target and the link, both WHATWG-parsed and serialized, fragment dropped
// on both sides, are equal. WHATWG parsing already makes equal what browsers make equal: scheme
// and host case, default ports, "." and ".." segments, percent-encoding of characters that must
// be encoded, IDNA hosts. Nothing more: "%7E" is not "~", "/a" is not "/a/", the query (tracking
// parameters included) must be the same, "/post-1" never matches "/post-10".
//
// Scope (the XRay rule the shared conformance data asserts): when the page marks up its post with
// microformats2 -- at least one h-entry, h-cite, h-event, h-review or h-recipe root (v2 class
// names, not classic "hentry") -- only links inside such a root count, so a blogroll or a nav bar
// beside the post does not mention every page it links to. <link> elements count anywhere (they
// are statements about the whole document). A page without such a root (no microformats, only
// an h-card, only classic microformats) counts links anywhere. The W3C Webmention minimum (a link
// anywhere) is LinkScope::kWholeDocument.

#include <cstddef>
#include <string>
#include <vector>

#include "common/url/url.h"
#include "verifier-service/src/html/html_document.h"

namespace portcullis::verifier::html {

enum class LinkScope {
  // Inside the post's microformats when the page has a post root (see above); the default.
  kPostMicroformatsWhenPresent,
  // Anywhere in the document.
  kWholeDocument,
};

struct LinkMatchOptions {
  LinkScope scope = LinkScope::kPostMicroformatsWhenPresent;
  // The scan stops after this many elements or this many link values, whichever comes first, and
  // says so (LinkMatch::scan_truncated). A 1 MiB page holds at most ~100k links of the smallest
  // form (`<a href=x>`), so the defaults read every real page whole. u-* values read from text
  // (value-class, textContent) visit at most 1024 nodes each and 4 * max_elements in all.
  size_t max_elements = 250'000;
  size_t max_links = 100'000;
  // The diagnostic: at most this many links, each cut to this many bytes.
  size_t max_diagnostic_links = 20;
  size_t max_diagnostic_link_bytes = 2048;
};

struct LinkMatch {
  bool found = false;
  // How the counted link was given: "a[href]", "img[src]", "link[href]", "u-in-reply-to", ...
  // Empty when not found.
  std::string matched_by;

  // Filled only when not found -------------------------------------------------------------------
  // The distinct links to the target's host (same host, any scheme and port), resolved and
  // serialized without fragment, in document order: what the status page shows next to "no
  // link". Each at most max_diagnostic_link_bytes; at most max_diagnostic_links of them.
  std::vector<std::string> links_to_target_host;
  // More distinct links to the target's host existed than were kept.
  bool links_to_target_host_truncated = false;
  // The target itself is linked, but only outside the page's post microformats (LinkScope).
  bool found_outside_post = false;

  // The scan stopped at max_elements or max_links before the end of the document: a "not found"
  // then covers only the part read.
  bool scan_truncated = false;
  size_t elements_scanned = 0;
  size_t links_checked = 0;
};

// Whether `document`, fetched from `document_url` (the final URL after redirects), links to
// `target`, as described at the top of this file. Never fails.
LinkMatch FindLink(const HtmlDocument& document, const url::Url& document_url,
                   const url::Url& target, const LinkMatchOptions& options = {});

}  // namespace portcullis::verifier::html
