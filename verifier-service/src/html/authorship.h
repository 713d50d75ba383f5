#pragma once

// Who wrote an h-entry: the IndieWeb authorship algorithm (https://indieweb.org/authorship-spec).
//
// Pure: no I/O. The algorithm may need a second page (the author page), which html/ cannot fetch,
// so it runs in two steps:
//
//   AuthorLookup lookup = FindAuthor(mf2, entry, page_url);
//   if (lookup.author)            → done, the entry's page said it all (its own h-card included);
//   else if (!lookup.author_page.empty())
//                                 → the caller fetches lookup.author_page (small budget, cached),
//                                   parses it with ParseMf2 and calls
//                                   AuthorFromPage(page_mf2, lookup.author_page, final_url),
//                                   falling back to lookup.fallback when that finds nothing or the
//                                   fetch fails;
//   else                          → no author.
//
// FindAuthor, for `entry` on the page at `page_url` (spec steps 3–6):
//   - the entry's first `author`, else the first `author` of the h-feed whose child the entry is;
//   - an h-card: used as it is — unless it has a url and neither name nor photo (an
//     `<a class="u-author h-card" href="/"></a>`), then its url is the author page (as mf2util);
//   - a string that is an absolute http(s) URL: the author page;
//   - another string (or a non-h-card microformat's value): the author's name, nothing else;
//   - no author property: the page's first rel=author link (the source of a webmention is read as
//     a permalink page) is the author page.
// Then, when there is an author page: an h-card of the entry's page itself whose url is the author
// page and which has a name or a photo (the most common blog layout: an h-card in the header or
// sidebar, rel=author or u-author pointing at its url) is the author, and the author page is not
// fetched (author_page stays empty) — as XRay, webmention.io's parser, does; one fetch fewer per
// mention. Without such an h-card the author page is fetched.
// `fallback` (spec step 7.4): the first h-card of the entry's page whose url is the author page
// (then a bare one, only a url), else an Author with only that url — the post does name its
// author's URL.
//
// AuthorFromPage, on the author page's microformats (spec step 7; h-cards among the top-level items
// and their children, in document order, the first one matching wins):
//   1. an h-card with a url equal to a uid equal to the author page URL;
//   2. else an h-card with a url that is also a rel=me link of the page;
//   3. else an h-card with a url equal to the author page URL (mf2util; the representative h-card
//      rule);
//   4. else the page's only h-card, if it has exactly one (an additional heuristic the spec
//      invites; its url defaults to the author page URL);
//   5. else nothing.
// The author page URL is the URL requested or, when given, the final URL after redirects (either
// may match). URLs are compared after WHATWG parsing.
//
// Every Author field is capped: name and note are plain text (whitespace collapsed), url and
// photo absolute http(s) URLs (others dropped).

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "boost/json/object.hpp"
#include "common/url/url.h"

namespace portcullis::verifier::html {

// The fields of store::MentionContent's author_* (and verification::AuthorCard); any may be empty.
struct Author {
  std::string name;
  std::string url;    // Absolute http(s).
  std::string photo;  // Absolute http(s).
  std::string note;   // Plain text.

  bool empty() const { return name.empty() && url.empty() && photo.empty() && note.empty(); }
  friend bool operator==(const Author& a, const Author& b) {
    return a.name == b.name && a.url == b.url && a.photo == b.photo && a.note == b.note;
  }
};

struct AuthorLimits {
  size_t max_name_bytes = 500;
  size_t max_note_bytes = 2'000;
  size_t max_url_bytes = 2'048;  // url and photo; longer ones are dropped
};

struct AuthorLookup {
  // The author, when the entry's page gives one.
  std::optional<Author> author;
  // Otherwise the page to fetch for it (absolute http(s)); empty when no author can be found.
  std::string author_page;
  // What to store when author_page gives no author (or cannot be fetched).
  Author fallback;
};

// Steps 3–6 for `entry` (an h-entry inside `mf2`, e.g. FindPrimaryEntry's result) on the page at
// `page_url`.
AuthorLookup FindAuthor(const boost::json::object& mf2, const boost::json::object& entry,
                        const url::Url& page_url, const AuthorLimits& limits = {});

// Step 7 on the author page's microformats: the author it names, or nullopt. `author_page_url` is
// lookup.author_page; `final_url` (may be empty) the URL it was finally fetched from.
std::optional<Author> AuthorFromPage(const boost::json::object& author_page_mf2,
                                     absl::string_view author_page_url,
                                     absl::string_view final_url = {},
                                     const AuthorLimits& limits = {});

// An h-card read as an Author (name, url, photo, note; capped). Relative values, which ParseMf2
// never leaves, resolve against `base`.
Author AuthorFromCard(const boost::json::object& card, const url::Url& base,
                      const AuthorLimits& limits = {});

}  // namespace portcullis::verifier::html
