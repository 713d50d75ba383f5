#pragma once

// Reading the canonical microformats2 JSON ({items, rels, rel-urls}, as ParseMf2 produces or as a
// caller hands in): shared by the mention classifier and authorship. Pure; never throws on any
// JSON shape (wrong kinds read as absent).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "boost/json/array.hpp"
#include "boost/json/object.hpp"
#include "boost/json/string.hpp"
#include "boost/json/value.hpp"
#include "common/url/url.h"

namespace portcullis::verifier::html {

// A JSON string's bytes as an absl::string_view.
inline absl::string_view JsonView(const boost::json::string& text) {
  return absl::string_view(text.data(), text.size());
}

// Whether `item` is a microformat whose "type" array names `type` ("h-entry").
bool HasMicroformatType(const boost::json::object& item, absl::string_view type);

// The values of property `name` of `item` (empty when absent or malformed).
const boost::json::array& PropertyValues(const boost::json::object& item, absl::string_view name);

// `item`'s "children" microformats (empty when absent).
const boost::json::array& ChildItems(const boost::json::object& item);

// The document's top-level items (empty when absent).
const boost::json::array& TopLevelItems(const boost::json::object& mf2);

// A property value read as text: a string as it is; an object's "value" string (a nested
// microformat, an e-* {value, html}, a u-photo {value, alt}); "" otherwise.
std::string ValueText(const boost::json::value& value);

// The first of `item`'s `name` values, as ValueText; "" when none.
std::string FirstPropertyText(const boost::json::object& item, absl::string_view name);

// Calls `visit` on every microformat of the document in document order: each top-level item,
// then its children, depth first (property values are not visited). Stops when `visit` returns
// false; depth is bounded.
void VisitItems(const boost::json::object& mf2,
                const std::function<bool(const boost::json::object& item)>& visit);

// The strings of mf2["rels"][rel] (empty when absent).
std::vector<std::string> RelUrls(const boost::json::object& mf2, absl::string_view rel);

// `text` parsed as an absolute http(s) URL; nullopt when it is not one.
std::optional<url::Url> AbsoluteHttpUrl(absl::string_view text);

// `url`'s href without its fragment: the form in which two URLs are compared when the fragment
// does not matter.
std::string HrefWithoutFragment(const url::Url& url);

}  // namespace portcullis::verifier::html
