#pragma once

// A microformats2 parser (https://microformats.org/wiki/microformats2-parsing) over HtmlDocument.
//
// Pure: no I/O. Follows the reference JavaScript parser (npm `microformats-parser`), which passes
// the whole microformats-v2 suite, rule for rule: roots h-*, properties p-/u-/dt-/e- with the
// value-class pattern (dt date and time parts joined), implied name/photo/url, nested
// microformats as `children` or as property values with `value` (and `html` for e-*), rels and
// rel-urls, backcompat for the classic roots (hentry, vcard, hfeed, hreview, vevent, adr, geo,
// hproduct, hresume, hnews, item, hreview-aggregate) with their property and rel maps.
// Known, deliberate differences from the reference (each a spec rule it does not follow):
//   - hentry `published` is mapped to dt-published (the reference's map lacks it);
//   - `children` of a microformat that is itself a property value carry no `value`;
//   - class and rel attributes are split on any ASCII whitespace, and duplicate types dropped;
//   - a URL that does not parse stays as written (the reference throws and parses nothing);
//   - a relative <base href> is resolved against the document URL;
//   - types are only h-* names the spec allows ("h-1" is no type);
//   - implied name: img/area alt and abbr title count when empty and are trimmed; the child rules
//     need an only child (CSS :only-child), not the first one;
//   - an <img> alt counts when empty ({"value", "alt": ""}); an <img> without src is no URL;
//   - attributes that give a property its value (title, value, datetime, alt, content) count when
//     present but empty;
//   - value-class parts are not looked for inside another part or property, and a part reads as
//     the spec says (img/area alt, data value, abbr title, del/ins/time datetime, else text);
//     joined parts are not trimmed again (text parts are trimmed one by one).
//   - property class names must match the spec's pattern ("p-1" is no property);
//   - a u-* microformat's value is its first url as it is, else the element read as a u-* URL.
// None of these changes a microformats-v2 result (the differential test holds both to it).
//
// URLs: href/src/data attributes that are relative (no "://" and not a "#fragment") are resolved
// with common/url against <base href> (itself resolved against the document URL) or the document
// URL, before anything is read, so e-* `html` carries absolute links; absolute URLs are kept as
// written (trimmed), as the reference does.
//
// Text: "classic" plain-text extraction (textContent without <script>/<style>, trimmed): for p-*
// and implied names an <img> reads as its alt; for e-* `value`, u-*/dt-* fallbacks and `value`
// of nested microformats it reads as " alt " or, without alt, " src ".

#include <cstddef>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "boost/json/object.hpp"
#include "common/url/url.h"
#include "verifier-service/src/html/html_document.h"

namespace portcullis::verifier::html {

// The URL relative references in `document` resolve against: the first <base href> resolved
// against `document_url` (the final URL after redirects), or `document_url` when there is none or
// it does not parse. For link matching and authorship, which must resolve as ParseMf2 does.
url::Url DocumentBaseUrl(const HtmlDocument& document, const url::Url& document_url);

struct Mf2Limits {
  // Most bytes of text (property values, `value`, `html`, rel text) one parse may produce. Nested
  // properties repeat the text below them, so without a cap a 1 MiB page of 512 nested
  // properties parses to half a gigabyte. Typical pages produce less text than their size.
  size_t max_output_bytes = size_t{16} << 20;
};

// Where the e-* `html` values of one ParseMf2 result come from: the fragment of the document each
// serializes, so that a reader of the html (the sanitizer) can use the parsed tree instead of
// parsing the text again. Points into the document: valid while it lives and is not changed.
class Mf2HtmlSources {
 public:
  // The fragment whose serialization `html` is (an e-* `html` value of the result, by its
  // content), or nullptr.
  const HtmlFragment* Find(absl::string_view html) const;
  // Records that `html` serializes `fragment`.
  void Add(absl::string_view html, const HtmlFragment& fragment);
  size_t size() const { return fragments_.size(); }

 private:
  // By the html's length and hash: most pages have one e-content, none two of one hash.
  absl::flat_hash_map<std::pair<size_t, size_t>, HtmlFragment> fragments_;
};

// Parses `document` as fetched from `document_url` into {"items", "rels", "rel-urls"}.
// kResourceExhausted when the result would exceed `limits`.
// Rewrites the document's relative href/src/data attributes to absolute URLs (as the reference
// parser does: "#fragment" values and values containing "://" are only trimmed); the document
// stays usable for other readers.
// With `sources`, records where each e-* `html` value comes from.
absl::StatusOr<boost::json::object> ParseMf2(HtmlDocument& document, const url::Url& document_url,
                                             const Mf2Limits& limits = {},
                                             Mf2HtmlSources* sources = nullptr);

// Parses `html` fetched from `document_url`. kInvalidArgument when `document_url` is not an
// absolute http(s) URL; kResourceExhausted as above.
absl::StatusOr<boost::json::object> ParseMf2(absl::string_view html, absl::string_view document_url,
                                             const Mf2Limits& limits = {});

}  // namespace portcullis::verifier::html
