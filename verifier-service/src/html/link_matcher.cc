#include "verifier-service/src/html/link_matcher.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::verifier::html {
namespace {

// A u-* value read from text (the value-class pattern or textContent) longer than this is not a
// URL anyone links with; reading stops there.
constexpr size_t kMaxTextUrlBytes = 8 * 1024;
// Most nodes one u-* text read visits, and all of them together per element of the scan limit
// (u-* elements nest, so their text reads overlap).
constexpr size_t kMaxTextNodesPerValue = 1024;
constexpr size_t kTextNodesPerElementLimit = 4;

bool IsLowerAlpha(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

bool IsLowerAlnum(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

// `rest` matches ([a-z0-9]+-)?([a-z]+-)*[a-z]+ : the name part of h-*, u-*, ... classes (the mf2
// parsing spec's pattern, as mf2_parser reads it).
bool IsMicroformatName(absl::string_view rest) {
  size_t start = 0;
  bool first = true;
  while (true) {
    const size_t dash = rest.find('-', start);
    const absl::string_view part = rest.substr(
        start, dash == absl::string_view::npos ? absl::string_view::npos : dash - start);
    const bool last = dash == absl::string_view::npos;
    if (!((first && !last) ? IsLowerAlnum(part) : IsLowerAlpha(part))) {
      return false;
    }
    if (last) {
      return true;
    }
    first = false;
    start = dash + 1;
  }
}

bool IsRootClass(absl::string_view cls) {
  return absl::StartsWith(cls, "h-") && IsMicroformatName(cls.substr(2));
}

bool IsPropertyClass(absl::string_view cls) {
  for (absl::string_view prefix : {"p-", "u-", "e-", "dt-"}) {
    if (absl::StartsWith(cls, prefix)) {
      return IsMicroformatName(cls.substr(prefix.size()));
    }
  }
  return false;
}

bool IsUrlPropertyClass(absl::string_view cls) {
  return absl::StartsWith(cls, "u-") && IsMicroformatName(cls.substr(2));
}

// The roots that mark up a post: when a page has one, only links inside one count.
bool IsPostRootClass(absl::string_view cls) {
  return cls == "h-entry" || cls == "h-cite" || cls == "h-event" || cls == "h-review" ||
         cls == "h-recipe";
}

struct ElementFacts {
  bool mf2_root = false;
  bool post_root = false;
  bool mf2_property_or_root = false;
  std::optional<absl::string_view> url_property;  // the first u-* class
};

ElementFacts FactsOf(const HtmlNode& node) {
  ElementFacts facts;
  for (const absl::string_view cls : node.classes) {
    if (IsRootClass(cls)) {
      facts.mf2_root = true;
      facts.mf2_property_or_root = true;
      facts.post_root = facts.post_root || IsPostRootClass(cls);
    } else if (IsPropertyClass(cls)) {
      facts.mf2_property_or_root = true;
      if (!facts.url_property.has_value() && IsUrlPropertyClass(cls)) {
        facts.url_property = cls;
      }
    }
  }
  return facts;
}

bool IsOneOf(absl::string_view tag, std::initializer_list<absl::string_view> names) {
  return std::find(names.begin(), names.end(), tag) != names.end();
}

// The link an element gives by its kind ("a[href]" etc.), or nullopt. `label` names it.
std::optional<absl::string_view> ElementLink(const HtmlNode& node, absl::string_view* label) {
  const absl::string_view tag = node.tag;
  if (IsOneOf(tag, {"a", "area", "link"})) {
    const std::optional<absl::string_view> href = node.Attribute("href");
    if (href.has_value()) {
      *label = tag == "a" ? "a[href]" : tag == "area" ? "area[href]" : "link[href]";
    }
    return href;
  }
  if (IsOneOf(tag, {"img", "video", "audio", "source"})) {
    const std::optional<absl::string_view> src = node.Attribute("src");
    if (src.has_value()) {
      *label = tag == "img"     ? "img[src]"
               : tag == "video" ? "video[src]"
               : tag == "audio" ? "audio[src]"
                                : "source[src]";
    }
    return src;
  }
  return std::nullopt;
}

// Collects text under a node for a u-* value, with the bounds above.
class TextReader {
 public:
  explicit TextReader(size_t* budget) : budget_(budget) {}

  // textContent of `node` without <script>/<style>, or nullopt past a bound.
  std::optional<std::string> TextContent(const HtmlNode& node) {
    std::string out;
    if (!Append(node, out)) {
      return std::nullopt;
    }
    return out;
  }

  // The value-class pattern (mf2 spec): the values of the `value` / `value-title` descendants
  // (not inside nested properties or microformats), joined; nullopt when there is none or past a
  // bound.
  std::optional<std::string> ValueClass(const HtmlNode& node) {
    std::string out;
    bool any = false;
    std::vector<const HtmlNode*> stack;
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) {
      stack.push_back(*it);
    }
    while (!stack.empty()) {
      const HtmlNode* current = stack.back();
      stack.pop_back();
      if (!Spend()) {
        return std::nullopt;
      }
      if (!current->is_element()) {
        continue;
      }
      const auto& classes = current->classes;
      const bool value = std::find(classes.begin(), classes.end(), "value") != classes.end();
      const bool value_title =
          std::find(classes.begin(), classes.end(), "value-title") != classes.end();
      if (value_title) {
        any = true;
        if (const std::optional<absl::string_view> title = current->Attribute("title")) {
          absl::StrAppend(&out, *title);
        }
      } else if (value) {
        any = true;
        std::optional<absl::string_view> attribute;
        if (IsOneOf(current->tag, {"img", "area"})) {
          attribute = current->Attribute("alt");
        } else if (current->tag == "data") {
          attribute = current->Attribute("value");
        } else if (current->tag == "abbr") {
          attribute = current->Attribute("title");
        }
        if (attribute.has_value()) {
          absl::StrAppend(&out, *attribute);
        } else if (!Append(*current, out)) {
          return std::nullopt;
        }
      } else if (!FactsOf(*current).mf2_property_or_root) {
        for (auto it = current->children.rbegin(); it != current->children.rend(); ++it) {
          stack.push_back(*it);
        }
      }
      if (out.size() > kMaxTextUrlBytes) {
        return std::nullopt;
      }
    }
    if (!any) {
      return std::nullopt;
    }
    return out;
  }

 private:
  bool Spend() {
    if (*budget_ == 0 || ++visited_ > kMaxTextNodesPerValue) {
      return false;
    }
    --*budget_;
    return true;
  }

  bool Append(const HtmlNode& node, std::string& out) {
    std::vector<const HtmlNode*> stack = {&node};
    while (!stack.empty()) {
      const HtmlNode* current = stack.back();
      stack.pop_back();
      if (!Spend()) {
        return false;
      }
      if (current->kind == HtmlNode::Kind::kText) {
        absl::StrAppend(&out, current->text);
        if (out.size() > kMaxTextUrlBytes) {
          return false;
        }
        continue;
      }
      if (current->kind == HtmlNode::Kind::kComment ||
          (current->is_element() && IsOneOf(current->tag, {"script", "style"}))) {
        continue;
      }
      for (auto it = current->children.rbegin(); it != current->children.rend(); ++it) {
        stack.push_back(*it);
      }
    }
    return true;
  }

  size_t* budget_;
  size_t visited_ = 0;
};

// The value of a u-* property on `node` as the mf2 spec reads it, when it is not the link the
// element already gives by its kind (a/area/link href, img/video/audio/source src). nullopt when
// there is none or it is too long to be a URL.
std::optional<std::string> UrlPropertyValue(const HtmlNode& node, size_t* text_budget) {
  const absl::string_view tag = node.tag;
  if (IsOneOf(tag, {"a", "area", "link"}) && node.Attribute("href").has_value()) {
    return std::nullopt;  // read as the element's own link
  }
  if (IsOneOf(tag, {"img", "video", "audio", "source"}) && node.Attribute("src").has_value()) {
    return std::nullopt;
  }
  if (tag == "iframe") {
    if (const std::optional<absl::string_view> src = node.Attribute("src")) {
      return std::string(*src);
    }
  }
  if (tag == "video") {
    if (const std::optional<absl::string_view> poster = node.Attribute("poster")) {
      return std::string(*poster);
    }
  }
  if (tag == "object") {
    if (const std::optional<absl::string_view> data = node.Attribute("data")) {
      return std::string(*data);
    }
  }
  TextReader reader(text_budget);
  if (std::optional<std::string> value = reader.ValueClass(node)) {
    return value;
  }
  if (tag == "abbr") {
    if (const std::optional<absl::string_view> title = node.Attribute("title")) {
      return std::string(*title);
    }
  }
  if (IsOneOf(tag, {"data", "input"})) {
    if (const std::optional<absl::string_view> value = node.Attribute("value")) {
      return std::string(*value);
    }
  }
  std::optional<std::string> text = reader.TextContent(node);
  if (!text.has_value()) {
    return std::nullopt;
  }
  return std::string(absl::StripAsciiWhitespace(*text));
}

bool IsSchemeChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// Whether the host of an authority (what follows "//") is surely what the URL parser would
// serialize, lowercased: an ASCII name of letters, digits, '-' and '.', that is not an IPv4
// address in any spelling (its last label is no number) and no punycode. nullopt when unsure.
std::optional<absl::string_view> PlainHostOf(absl::string_view rest) {
  // The authority ends at the first '/', '\\', '?' or '#'; the host at ':' (a port follows).
  size_t host_end = absl::string_view::npos;
  size_t i = 0;
  for (; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '/' || c == '\\' || c == '?' || c == '#') {
      break;
    }
    if (c == '@') {
      return std::nullopt;  // userinfo: the parser decides
    }
    if (c == ':' && host_end == absl::string_view::npos) {
      host_end = i;
    }
  }
  const absl::string_view host = rest.substr(0, std::min(host_end, i));
  if (host.empty()) {
    return std::nullopt;
  }
  size_t last_label = 0;  // where the last non-empty label starts
  for (size_t j = 0; j < host.size(); ++j) {
    const char c = host[j];
    if (c == '.') {
      if (j + 1 < host.size()) {
        last_label = j + 1;
      }
    } else if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return std::nullopt;  // '%', '[', '_', non-ASCII, ...: the parser decides
    } else if (j == last_label && host.size() - j >= 4 &&
               absl::StartsWithIgnoreCase(host.substr(j), "xn--")) {
      return std::nullopt;  // punycode: the parser validates it
    }
  }
  absl::string_view last = host.substr(last_label);
  if (!last.empty() && last.back() == '.') {
    last.remove_suffix(1);
  }
  const bool digits = std::all_of(last.begin(), last.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
  if (last.empty() || digits || absl::StartsWithIgnoreCase(last, "0x")) {
    return std::nullopt;  // may be an IPv4 address in one of its spellings
  }
  return host;
}

// False only when `raw`, resolved against `base`, is surely no http(s) URL on `host` (the
// target's): then it can neither match nor belong in the diagnostic, and the full parse (most of
// the cost of a scan) is skipped. True when it may be, or when unsure.
bool MayBeOnHost(absl::string_view raw, const url::Url& base, absl::string_view host) {
  // The parser trims leading and trailing C0 controls and spaces, and removes tabs and newlines
  // anywhere; with any of them inside, let it decide.
  while (!raw.empty() && static_cast<unsigned char>(raw.front()) <= 0x20) {
    raw.remove_prefix(1);
  }
  while (!raw.empty() && static_cast<unsigned char>(raw.back()) <= 0x20) {
    raw.remove_suffix(1);
  }
  for (const char c : raw) {
    if (c == '\t' || c == '\n' || c == '\r') {
      return true;
    }
  }
  size_t colon = absl::string_view::npos;
  if (!raw.empty() && absl::ascii_isalpha(static_cast<unsigned char>(raw[0]))) {
    size_t i = 1;
    while (i < raw.size() && IsSchemeChar(raw[i])) {
      ++i;
    }
    if (i < raw.size() && raw[i] == ':') {
      colon = i;
    }
  }
  absl::string_view rest;
  if (colon == absl::string_view::npos) {
    const bool network_path =
        raw.size() >= 2 && (raw[0] == '/' || raw[0] == '\\') && (raw[1] == '/' || raw[1] == '\\');
    if (!network_path) {
      return base.host() == host;  // path-, query- or fragment-relative: the base's host
    }
    rest = raw.substr(2);
  } else {
    const absl::string_view scheme = raw.substr(0, colon);
    if (!absl::EqualsIgnoreCase(scheme, "http") && !absl::EqualsIgnoreCase(scheme, "https")) {
      return false;  // ParseUrl refuses every other scheme
    }
    if (!absl::StartsWith(raw.substr(colon + 1), "//")) {
      return true;  // "http:path", "https:\\host": the parser decides
    }
    rest = raw.substr(colon + 3);
  }
  const std::optional<absl::string_view> plain = PlainHostOf(rest);
  return !plain.has_value() || absl::EqualsIgnoreCase(*plain, host);
}

// Equal as serialized URLs without their fragments.
bool SameResource(const url::Url& a, const url::Url& b) {
  return a.path() == b.path() && a.host() == b.host() && a.query() == b.query() &&
         a.scheme() == b.scheme() && a.port() == b.port() && a.username() == b.username() &&
         a.password() == b.password();
}

std::string WithoutFragment(const url::Url& url) {
  std::string href = url.href();
  // A serialized URL has no '#' before its fragment: earlier components percent-encode it.
  if (const size_t hash = href.find('#'); hash != std::string::npos) {
    href.resize(hash);
  }
  return href;
}

class Matcher {
 public:
  Matcher(const HtmlDocument& document, const url::Url& document_url, const url::Url& target,
          const LinkMatchOptions& options)
      : document_(document),
        base_(DocumentBaseUrl(document, document_url)),
        target_(target),
        options_(options),
        text_budget_(kTextNodesPerElementLimit * options.max_elements) {}

  LinkMatch Run() {
    Walk();
    if (!result_.found && !outside_match_by_.empty()) {
      if (!page_has_post_root_) {
        result_.found = true;
        result_.matched_by = outside_match_by_;
      } else {
        result_.found_outside_post = true;
      }
    }
    if (result_.found) {
      result_.links_to_target_host.clear();
      result_.links_to_target_host_truncated = false;
      result_.found_outside_post = false;
    }
    return std::move(result_);
  }

 private:
  struct Frame {
    const HtmlNode* node;
    size_t next_child;
    bool post_root;
    bool mf2_root;
  };

  void Walk() {
    std::vector<Frame> stack;
    stack.push_back({&document_.root(), 0, false, false});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next_child == frame.node->children.size()) {
        posts_open_ -= frame.post_root ? 1 : 0;
        roots_open_ -= frame.mf2_root ? 1 : 0;
        stack.pop_back();
        continue;
      }
      const HtmlNode& child = *frame.node->children[frame.next_child++];
      if (!child.is_element()) {
        continue;
      }
      if (result_.elements_scanned == options_.max_elements) {
        result_.scan_truncated = true;
        return;
      }
      ++result_.elements_scanned;
      const ElementFacts facts = FactsOf(child);
      page_has_post_root_ = page_has_post_root_ || facts.post_root;
      // A property belongs to an enclosing root (opened before this element is pushed).
      const bool is_property_of_a_root = roots_open_ > 0;
      posts_open_ += facts.post_root ? 1 : 0;
      roots_open_ += facts.mf2_root ? 1 : 0;
      stack.push_back({&child, 0, facts.post_root, facts.mf2_root});
      if (!child.html_namespace) {
        continue;
      }
      const bool in_scope =
          options_.scope == LinkScope::kWholeDocument || posts_open_ > 0 || child.tag == "link";
      absl::string_view label;
      if (const std::optional<absl::string_view> link = ElementLink(child, &label)) {
        if (!Check(*link, label, in_scope) || result_.found) {
          return;
        }
      }
      if (facts.url_property.has_value() && is_property_of_a_root) {
        if (std::optional<std::string> value = UrlPropertyValue(child, &text_budget_)) {
          if (!Check(*value, *facts.url_property, in_scope) || result_.found) {
            return;
          }
        } else if (text_budget_ == 0) {
          result_.scan_truncated = true;
          return;
        }
      }
    }
  }

  // Checks one link value. False when the scan must stop at max_links.
  bool Check(absl::string_view value, absl::string_view label, bool in_scope) {
    if (result_.links_checked == options_.max_links) {
      result_.scan_truncated = true;
      return false;
    }
    ++result_.links_checked;
    if (!MayBeOnHost(value, base_, target_.host())) {
      return true;
    }
    const absl::StatusOr<url::Url> link = url::ParseUrl(value, &base_);
    if (!link.ok()) {
      return true;
    }
    if (SameResource(*link, target_)) {
      if (in_scope) {
        result_.found = true;
        result_.matched_by = std::string(label);
      } else if (outside_match_by_.empty()) {
        outside_match_by_ = std::string(label);
      }
      return true;
    }
    if (link->host() == target_.host()) {
      Note(*link);
    }
    return true;
  }

  void Note(const url::Url& link) {
    if (result_.links_to_target_host_truncated) {
      return;  // full, and known to be
    }
    std::string href = WithoutFragment(link);
    if (href.size() > options_.max_diagnostic_link_bytes) {
      href.resize(options_.max_diagnostic_link_bytes);  // serialized URLs are ASCII
    }
    if (seen_.contains(href)) {
      return;
    }
    if (result_.links_to_target_host.size() == options_.max_diagnostic_links) {
      result_.links_to_target_host_truncated = true;
      return;
    }
    seen_.insert(href);
    result_.links_to_target_host.push_back(std::move(href));
  }

  const HtmlDocument& document_;
  const url::Url base_;
  const url::Url& target_;
  const LinkMatchOptions& options_;
  size_t text_budget_;
  LinkMatch result_;
  int posts_open_ = 0;
  int roots_open_ = 0;
  bool page_has_post_root_ = false;
  std::string outside_match_by_;
  absl::flat_hash_set<std::string> seen_;
};

}  // namespace

LinkMatch FindLink(const HtmlDocument& document, const url::Url& document_url,
                   const url::Url& target, const LinkMatchOptions& options) {
  return Matcher(document, document_url, target, options).Run();
}

}  // namespace portcullis::verifier::html
