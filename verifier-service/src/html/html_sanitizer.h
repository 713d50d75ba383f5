#pragma once

// Sanitizes an HTML fragment a stranger wrote (the e-content of a webmention source) into HTML that
// any consumer may insert into a page: no script can run, no style can leak, every link is an
// absolute http(s) or mailto URL.
//
// Pure: no I/O. The fragment is parsed as a browser parses innerHTML of a <div> (gumbo fragment
// parsing, after HtmlDocument's nesting cap), then serialized from an allow-list:
//
//   - elements kept (HTML namespace only): a abbr b bdi blockquote br caption cite code dd del dfn
//     div dl dt em figcaption figure h1-h6 hr i img ins kbd li mark ol p pre q s samp small span
//     strong sub sup table tbody td tfoot th thead time tr u ul var wbr;
//   - elements dropped WITH their contents: everything whose contents a browser does not read as
//     ordinary markup or that can run, load or submit anything — script style template iframe
//     frame frameset object embed applet noscript noembed noframes xmp plaintext textarea title
//     head meta link base form input button select option optgroup datalist output canvas audio
//     video source track picture map area portal dialog marquee listing param keygen isindex
//     slot fencedframe, and svg / math (foreign content, the home of mutation XSS) and any
//     element outside the HTML namespace;
//   - every other element is unwrapped: dropped, its contents kept;
//   - comments, doctypes and processing instructions are dropped;
//   - attributes kept: title (any element); href (a); src alt width height (img); cite
//     (blockquote q del ins); datetime (time del ins); colspan rowspan (td th); start (ol).
//     Numbers must be digits; nothing else survives — no style, class, id, on*, srcset, target;
//   - URLs (href, src, cite) are resolved against `base` with common/url and written back as the
//     parser serializes them (tabs, newlines and entities cannot hide a scheme). Only http and
//     https survive (and mailto for href); javascript:, data:, vbscript: and everything else is
//     dropped: an <a> without a usable href is unwrapped, an <img> without one is dropped;
//   - every kept <a> gets rel="nofollow noopener ugc"; an <a> inside another is unwrapped;
//   - text and attribute values are escaped (& < > in text; & " ' < > in attribute values) and
//     attribute values are always double-quoted.
// Because the output holds only these elements, no raw-text element, no foreign content and no
// comment, a browser re-parsing it builds nothing outside the allow-list. Unwrapping can leave
// markup a parser nests differently (an <h1> that was inside an unknown element, now inside
// another <h1>), so then the fragment goes through twice: the second pass writes the tree a
// browser builds from the first, and that reads back as itself — SanitizeHtml(x) is a fixed point.
// One pass is enough when the parse needed no repair and what was written is a tree that its
// serialization builds again (html_sanitizer.cc: no element the parser would close implicitly).
// The property tests in tests/ re-parse the output of generated corpora for both.

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "common/url/url.h"
#include "verifier-service/src/html/html_document.h"

namespace portcullis::verifier::html {

struct SanitizeLimits {
  // Input beyond this many bytes is not read (the fetcher caps pages at 1 MiB already).
  size_t max_input_bytes = size_t{1} << 20;
  // Most bytes of output. The result is cut before the element or text that would pass it (text at
  // a UTF-8 boundary) and every open element is closed, so a cut result is still well formed.
  size_t max_output_bytes = 32 * 1024;
  // Longest URL kept; longer ones are dropped like invalid ones.
  size_t max_url_bytes = 4096;
};

struct SanitizedHtml {
  std::string html;
  // True when the input or the output was cut at a limit.
  bool truncated = false;
  // How many times HTML text was parsed: 1 or 2 for SanitizeHtml (see above); 0 when
  // SanitizeParsedHtml wrote the parsed tree as it was.
  int parses = 0;
};

// Sanitizes `fragment` (any bytes; read as UTF-8, invalid sequences replaced). Never fails.
SanitizedHtml SanitizeHtml(absl::string_view fragment, const url::Url& base,
                           const SanitizeLimits& limits = {});

// SanitizeHtml(html, base, limits) for `html`, the serialization of `fragment` (SerializeChildren of
// fragment.parent, its ends trimmed as `fragment` says: an mf2 e-* `html` value), without parsing
// `html` again when parsing it would build the fragment's tree as it is — every element one the
// parser inserts as it reads it, nothing it closes implicitly (see html_sanitizer.cc for the
// rules), the usual case for an e-content. Otherwise, and when `html` is not what fragment
// serializes to, `html` is parsed as SanitizeHtml does. The result is SanitizeHtml's either way.
SanitizedHtml SanitizeParsedHtml(const HtmlFragment& fragment, absl::string_view html,
                                 const url::Url& base, const SanitizeLimits& limits = {});

// The value of a URL attribute as the sanitizer keeps it: `value` resolved against `base` when it
// is (or resolves to) an http or https URL, or a mailto: URL as written (trimmed, tabs and
// newlines removed, when `allow_mailto`); empty when the URL is refused or longer than
// `max_bytes`. For callers that store a URL a stranger wrote (author url, photo).
std::string SafeUrl(absl::string_view value, const url::Url& base, bool allow_mailto,
                    size_t max_bytes = 4096);

// `text` escaped for an HTML text node (& < >).
std::string EscapeHtmlText(absl::string_view text);

}  // namespace portcullis::verifier::html
