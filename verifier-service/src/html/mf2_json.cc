#include "verifier-service/src/html/mf2_json.h"

#include <utility>

#include "boost/json/string.hpp"

namespace portcullis::verifier::html {
namespace {

namespace json = boost::json;

// Nesting of children followed at most (ParseMf2 output is bounded by the HTML depth cap; JSON a
// caller hands in is not).
constexpr int kMaxItemDepth = 600;

const json::array& EmptyArray() {
  static const auto* const kEmpty = new json::array();
  return *kEmpty;
}

const json::array& ArrayMember(const json::object& object, absl::string_view key) {
  const json::value* member = object.if_contains(json::string_view(key.data(), key.size()));
  return member != nullptr && member->is_array() ? member->get_array() : EmptyArray();
}

}  // namespace

bool HasMicroformatType(const json::object& item, absl::string_view type) {
  for (const json::value& name : ArrayMember(item, "type")) {
    if (name.is_string() && JsonView(name.get_string()) == type) {
      return true;
    }
  }
  return false;
}

const json::array& PropertyValues(const json::object& item, absl::string_view name) {
  const json::value* properties = item.if_contains("properties");
  if (properties == nullptr || !properties->is_object()) {
    return EmptyArray();
  }
  return ArrayMember(properties->get_object(), name);
}

const json::array& ChildItems(const json::object& item) { return ArrayMember(item, "children"); }

const json::array& TopLevelItems(const json::object& mf2) { return ArrayMember(mf2, "items"); }

std::string ValueText(const json::value& value) {
  if (value.is_string()) {
    return std::string(value.get_string());
  }
  if (value.is_object()) {
    const json::value* inner = value.get_object().if_contains("value");
    if (inner != nullptr && inner->is_string()) {
      return std::string(inner->get_string());
    }
  }
  return "";
}

std::string FirstPropertyText(const json::object& item, absl::string_view name) {
  const json::array& values = PropertyValues(item, name);
  return values.empty() ? "" : ValueText(values.front());
}

void VisitItems(const json::object& mf2, const std::function<bool(const json::object&)>& visit) {
  // Explicit stack of (array, next index): children may nest deeply in JSON a caller hands in.
  std::vector<std::pair<const json::array*, size_t>> stack;
  stack.emplace_back(&TopLevelItems(mf2), 0);
  while (!stack.empty()) {
    auto& [array, next] = stack.back();
    if (next >= array->size()) {
      stack.pop_back();
      continue;
    }
    const json::value& value = (*array)[next++];
    if (!value.is_object()) {
      continue;
    }
    if (!visit(value.get_object())) {
      return;
    }
    const json::array& children = ChildItems(value.get_object());
    if (!children.empty() && stack.size() < kMaxItemDepth) {
      stack.emplace_back(&children, 0);
    }
  }
}

std::vector<std::string> RelUrls(const json::object& mf2, absl::string_view rel) {
  std::vector<std::string> urls;
  const json::value* rels = mf2.if_contains("rels");
  if (rels == nullptr || !rels->is_object()) {
    return urls;
  }
  for (const json::value& value : ArrayMember(rels->get_object(), rel)) {
    if (value.is_string()) {
      urls.emplace_back(value.get_string());
    }
  }
  return urls;
}

std::optional<url::Url> AbsoluteHttpUrl(absl::string_view text) {
  absl::StatusOr<url::Url> parsed = url::ParseUrl(text);
  if (!parsed.ok()) {
    return std::nullopt;
  }
  return *std::move(parsed);
}

std::string HrefWithoutFragment(const url::Url& url) {
  std::string href = url.href();
  // Only the fragment's delimiter can be a '#' in a serialized URL before the fragment.
  if (const size_t hash = href.find('#'); hash != std::string::npos) {
    href.resize(hash);
  }
  return href;
}

}  // namespace portcullis::verifier::html
