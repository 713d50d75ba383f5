#include "verifier-service/src/html/mention_classifier.h"

#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "boost/json/array.hpp"
#include "boost/json/value.hpp"
#include "verifier-service/src/html/html_sanitizer.h"
#include "verifier-service/src/html/mf2_json.h"
#include "verifier-service/src/html/plain_text.h"

namespace portcullis::verifier::html {
namespace {

namespace json = boost::json;

// Whether any `url` of `item` is `page` (fragments ignored).
bool NamesPage(const json::object& item, const std::string& page) {
  for (const json::value& value : PropertyValues(item, "url")) {
    const std::optional<url::Url> url = AbsoluteHttpUrl(ValueText(value));
    if (url.has_value() && HrefWithoutFragment(*url) == page) {
      return true;
    }
  }
  return false;
}

// Whether `value` (a property value: a URL string, or a nested microformat such as an h-cite)
// points at `target` (fragment-free href).
bool PointsAt(const json::value& value, const std::string& target) {
  const auto same = [&](const std::string& text) {
    const std::optional<url::Url> url = AbsoluteHttpUrl(text);
    return url.has_value() && HrefWithoutFragment(*url) == target;
  };
  if (same(ValueText(value))) {
    return true;
  }
  if (value.is_object()) {
    for (const json::value& url : PropertyValues(value.get_object(), "url")) {
      if (same(ValueText(url))) {
        return true;
      }
    }
  }
  return false;
}

// Whether `entry` has property `name`, pointing at `target` when one is given.
bool HasResponseProperty(const json::object& entry, absl::string_view name,
                         const std::optional<std::string>& target) {
  const json::array& values = PropertyValues(entry, name);
  if (!target.has_value()) {
    return !values.empty();
  }
  for (const json::value& value : values) {
    if (PointsAt(value, *target)) {
      return true;
    }
  }
  return false;
}

// The entry's rsvp value when it is one of the four the spec defines (lowercase); else "".
std::string RsvpValue(const json::object& entry) {
  for (const json::value& value : PropertyValues(entry, "rsvp")) {
    const std::string rsvp = absl::AsciiStrToLower(absl::StripAsciiWhitespace(ValueText(value)));
    if (rsvp == "yes" || rsvp == "no" || rsvp == "maybe" || rsvp == "interested") {
      return rsvp;
    }
  }
  return "";
}

// Lowercase, without ASCII whitespace and punctuation: the form in which name and content are
// compared.
std::string ComparableText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (absl::ascii_isspace(c) || absl::ascii_ispunct(c) || absl::ascii_iscntrl(c)) {
      continue;
    }
    out += absl::ascii_tolower(c);
  }
  return out;
}

// Whether `name` is a title of its own rather than the content again (see the header).
bool IsDistinctName(absl::string_view name, absl::string_view content) {
  absl::string_view shortened = absl::StripTrailingAsciiWhitespace(name);
  if (!absl::ConsumeSuffix(&shortened, "...")) {
    absl::ConsumeSuffix(&shortened, "\xE2\x80\xA6");  // U+2026 HORIZONTAL ELLIPSIS
  }
  const std::string comparable_name = ComparableText(shortened);
  const std::string comparable_content = ComparableText(content);
  if (comparable_content.empty()) {
    return true;
  }
  if (comparable_name.empty()) {
    return false;
  }
  return !absl::StartsWith(comparable_content, comparable_name) &&
         !absl::StrContains(comparable_name, comparable_content);
}

struct Content {
  std::string text;
  std::string html;
  bool truncated = false;
};

Content ReadContent(const json::object& entry, const url::Url& page_url, const EntryLimits& limits,
                    const Mf2HtmlSources* sources) {
  Content content;
  const json::array* values = &PropertyValues(entry, "content");
  if (values->empty()) {
    values = &PropertyValues(entry, "summary");
  }
  if (values->empty()) {
    return content;
  }
  const json::value& value = values->front();
  const CappedText text = CapPlainText(ValueText(value), limits.max_text_bytes);
  content.text = text.text;
  content.truncated = text.truncated;
  const json::value* html = value.is_object() ? value.get_object().if_contains("html") : nullptr;
  SanitizeLimits sanitize_limits;
  sanitize_limits.max_output_bytes = limits.max_html_bytes;
  sanitize_limits.max_url_bytes = limits.max_url_bytes;
  // Plain-text content (p-content, summary) becomes HTML as its escaped text; the sanitizer then
  // caps it like any other fragment.
  SanitizedHtml sanitized;
  if (html != nullptr && html->is_string()) {
    const absl::string_view markup = JsonView(html->get_string());
    const HtmlFragment* fragment = sources != nullptr ? sources->Find(markup) : nullptr;
    sanitized = fragment != nullptr
                    ? SanitizeParsedHtml(*fragment, markup, page_url, sanitize_limits)
                    : SanitizeHtml(markup, page_url, sanitize_limits);
  } else {
    sanitized = SanitizeHtml(EscapeHtmlText(content.text), page_url, sanitize_limits);
  }
  content.html = std::move(sanitized.html);
  content.truncated = content.truncated || sanitized.truncated;
  return content;
}

std::string EntryUrl(const json::object& entry, const url::Url& page_url,
                     const EntryLimits& limits) {
  for (const json::value& value : PropertyValues(entry, "url")) {
    const std::optional<url::Url> url = AbsoluteHttpUrl(ValueText(value));
    if (url.has_value() && url->href().size() <= limits.max_url_bytes) {
      return url->href();
    }
  }
  return page_url.href();
}

}  // namespace

const json::object* FindPrimaryEntry(const json::object& mf2, const url::Url& page_url) {
  const std::string page = HrefWithoutFragment(page_url);
  const json::object* found = nullptr;
  VisitItems(mf2, [&](const json::object& item) {
    if (HasMicroformatType(item, "h-entry") && NamesPage(item, page)) {
      found = &item;
      return false;
    }
    return true;
  });
  if (found != nullptr) {
    return found;
  }
  const json::array& items = TopLevelItems(mf2);
  for (const json::value& item : items) {
    if (item.is_object() && HasMicroformatType(item.get_object(), "h-entry")) {
      return &item.get_object();
    }
  }
  for (const json::value& item : items) {
    if (!item.is_object() || !HasMicroformatType(item.get_object(), "h-feed")) {
      continue;
    }
    for (const json::value& child : ChildItems(item.get_object())) {
      if (child.is_object() && HasMicroformatType(child.get_object(), "h-entry")) {
        return &child.get_object();
      }
    }
  }
  VisitItems(mf2, [&](const json::object& item) {
    if (HasMicroformatType(item, "h-entry")) {
      found = &item;
      return false;
    }
    return true;
  });
  return found;
}

MentionEntry ClassifyEntry(const json::object& entry, const url::Url& page_url,
                           const url::Url* target, const EntryLimits& limits,
                           const Mf2HtmlSources* sources) {
  MentionEntry result;
  std::optional<std::string> target_href;
  if (target != nullptr) {
    target_href = HrefWithoutFragment(*target);
  }
  if (HasResponseProperty(entry, "in-reply-to", target_href)) {
    result.rsvp = RsvpValue(entry);
    result.type = result.rsvp.empty() ? kTypeReply : kTypeRsvp;
  } else if (HasResponseProperty(entry, "repost-of", target_href)) {
    result.type = kTypeRepost;
  } else if (HasResponseProperty(entry, "like-of", target_href)) {
    result.type = kTypeLike;
  } else if (HasResponseProperty(entry, "bookmark-of", target_href)) {
    result.type = kTypeBookmark;
  }

  Content content = ReadContent(entry, page_url, limits, sources);
  const std::string name = CollapseWhitespace(FirstPropertyText(entry, "name"));
  if (!name.empty() && IsDistinctName(name, content.text)) {
    result.name = CapPlainText(name, limits.max_name_bytes).text;
  }
  result.published =
      CapPlainText(FirstPropertyText(entry, "published"), limits.max_published_bytes).text;
  result.url = EntryUrl(entry, page_url, limits);
  result.content_text = std::move(content.text);
  result.content_html = std::move(content.html);
  result.content_truncated = content.truncated;
  return result;
}

MentionEntry ClassifyMention(const json::object& mf2, const url::Url& page_url,
                             const url::Url* target, const EntryLimits& limits,
                             const Mf2HtmlSources* sources) {
  if (const json::object* entry = FindPrimaryEntry(mf2, page_url); entry != nullptr) {
    return ClassifyEntry(*entry, page_url, target, limits, sources);
  }
  MentionEntry result;
  result.url = page_url.href();
  return result;
}

}  // namespace portcullis::verifier::html
