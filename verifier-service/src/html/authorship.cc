#include "verifier-service/src/html/authorship.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "boost/json/array.hpp"
#include "boost/json/value.hpp"
#include "verifier-service/src/html/html_sanitizer.h"
#include "verifier-service/src/html/mf2_json.h"
#include "verifier-service/src/html/plain_text.h"

namespace portcullis::verifier::html {
namespace {

namespace json = boost::json;

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The hrefs of `item`'s `name` values that are absolute http(s) URLs.
std::vector<std::string> UrlValues(const json::object& item, absl::string_view name) {
  std::vector<std::string> hrefs;
  for (const json::value& value : PropertyValues(item, name)) {
    if (const std::optional<url::Url> url = AbsoluteHttpUrl(ValueText(value)); url.has_value()) {
      hrefs.push_back(url->href());
    }
  }
  return hrefs;
}

std::string FirstSafeUrl(const json::object& card, absl::string_view name, const url::Url& base,
                         const AuthorLimits& limits) {
  for (const json::value& value : PropertyValues(card, name)) {
    std::string url = SafeUrl(ValueText(value), base, /*allow_mailto=*/false, limits.max_url_bytes);
    if (!url.empty()) {
      return url;
    }
  }
  return "";
}

// The h-entry's parent h-feed, or nullptr.
const json::object* ParentFeed(const json::object& mf2, const json::object& entry) {
  const json::object* parent = nullptr;
  VisitItems(mf2, [&](const json::object& item) {
    if (!HasMicroformatType(item, "h-feed")) {
      return true;
    }
    for (const json::value& child : ChildItems(item)) {
      if (child.is_object() && &child.get_object() == &entry) {
        parent = &item;
        return false;
      }
    }
    return true;
  });
  return parent;
}

std::vector<const json::object*> Cards(const json::object& mf2) {
  std::vector<const json::object*> cards;
  VisitItems(mf2, [&](const json::object& item) {
    if (HasMicroformatType(item, "h-card")) {
      cards.push_back(&item);
    }
    return true;
  });
  return cards;
}

}  // namespace

Author AuthorFromCard(const json::object& card, const url::Url& base, const AuthorLimits& limits) {
  Author author;
  author.name = CapPlainText(FirstPropertyText(card, "name"), limits.max_name_bytes).text;
  author.url = FirstSafeUrl(card, "url", base, limits);
  author.photo = FirstSafeUrl(card, "photo", base, limits);
  author.note = CapPlainText(FirstPropertyText(card, "note"), limits.max_note_bytes).text;
  return author;
}

AuthorLookup FindAuthor(const json::object& mf2, const json::object& entry,
                        const url::Url& page_url, const AuthorLimits& limits) {
  AuthorLookup lookup;
  // Steps 3 and 4: the entry's author property, else its parent h-feed's.
  const json::array* authors = &PropertyValues(entry, "author");
  if (authors->empty()) {
    if (const json::object* feed = ParentFeed(mf2, entry); feed != nullptr) {
      authors = &PropertyValues(*feed, "author");
    }
  }
  // Step 5.
  if (!authors->empty()) {
    const json::value& author = authors->front();
    if (author.is_object() && HasMicroformatType(author.get_object(), "h-card")) {
      Author card = AuthorFromCard(author.get_object(), page_url, limits);
      if (card.url.empty() || !card.name.empty() || !card.photo.empty()) {
        lookup.author = std::move(card);
        return lookup;
      }
      lookup.author_page = card.url;  // a bare link: the author page says more
    } else {
      const std::string text = CollapseWhitespace(ValueText(author));
      const std::string scheme = url::SchemeOf(text);
      if (scheme == "http" || scheme == "https") {
        lookup.author_page = SafeUrl(text, page_url, /*allow_mailto=*/false, limits.max_url_bytes);
      }
      if (lookup.author_page.empty() && !text.empty()) {
        lookup.author = Author{CapPlainText(text, limits.max_name_bytes).text, "", "", ""};
        return lookup;
      }
    }
  }
  // Step 6: the page's rel=author.
  if (lookup.author_page.empty()) {
    for (const std::string& rel_author : RelUrls(mf2, "author")) {
      lookup.author_page =
          SafeUrl(rel_author, page_url, /*allow_mailto=*/false, limits.max_url_bytes);
      if (!lookup.author_page.empty()) {
        break;
      }
    }
  }
  if (lookup.author_page.empty()) {
    return lookup;
  }
  // An h-card of this page whose url is the author page (step 7.4): with a name or a photo it
  // is the author, and the author page is not fetched (as XRay); a bare one (only a url, such as
  // the entry's own `<a class="u-author h-card" href="/">`) is kept for after the fetch.
  lookup.fallback.url = lookup.author_page;
  bool have_fallback = false;
  for (const json::object* card : Cards(mf2)) {
    if (!Contains(UrlValues(*card, "url"), lookup.author_page)) {
      continue;
    }
    Author author = AuthorFromCard(*card, page_url, limits);
    if (!author.name.empty() || !author.photo.empty()) {
      lookup.author = std::move(author);
      lookup.author_page.clear();
      lookup.fallback = Author();
      return lookup;
    }
    if (!have_fallback) {
      lookup.fallback = std::move(author);
      have_fallback = true;
    }
  }
  return lookup;
}

std::optional<Author> AuthorFromPage(const json::object& author_page_mf2,
                                     absl::string_view author_page_url, absl::string_view final_url,
                                     const AuthorLimits& limits) {
  std::vector<std::string> page_urls;
  std::optional<url::Url> base;
  for (const absl::string_view candidate : {author_page_url, final_url}) {
    if (std::optional<url::Url> url = AbsoluteHttpUrl(candidate); url.has_value()) {
      page_urls.push_back(url->href());
      base = std::move(url);  // the final URL, when given, is what relative values resolve against
    }
  }
  if (!base.has_value()) {
    return std::nullopt;
  }
  std::vector<std::string> rel_me;
  for (const std::string& me : RelUrls(author_page_mf2, "me")) {
    if (std::optional<url::Url> url = AbsoluteHttpUrl(me); url.has_value()) {
      rel_me.push_back(url->href());
    }
  }
  const std::vector<const json::object*> cards = Cards(author_page_mf2);
  const auto first_card = [&](const auto& matches) -> const json::object* {
    for (const json::object* card : cards) {
      if (matches(*card)) {
        return card;
      }
    }
    return nullptr;
  };
  const json::object* chosen = first_card([&](const json::object& card) {
    const std::vector<std::string> uids = UrlValues(card, "uid");
    for (const std::string& url : UrlValues(card, "url")) {
      if (Contains(page_urls, url) && Contains(uids, url)) {
        return true;
      }
    }
    return false;
  });
  if (chosen == nullptr) {
    chosen = first_card([&](const json::object& card) {
      for (const std::string& url : UrlValues(card, "url")) {
        if (Contains(rel_me, url)) {
          return true;
        }
      }
      return false;
    });
  }
  if (chosen == nullptr) {
    chosen = first_card([&](const json::object& card) {
      for (const std::string& url : UrlValues(card, "url")) {
        if (Contains(page_urls, url)) {
          return true;
        }
      }
      return false;
    });
  }
  if (chosen == nullptr && cards.size() == 1) {
    chosen = cards.front();
  }
  if (chosen == nullptr) {
    return std::nullopt;
  }
  Author author = AuthorFromCard(*chosen, *base, limits);
  if (author.url.empty()) {
    author.url = page_urls.front();
  }
  return author;
}

}  // namespace portcullis::verifier::html
