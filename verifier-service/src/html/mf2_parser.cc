#include "verifier-service/src/html/mf2_parser.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "boost/json/array.hpp"
#include "boost/json/monotonic_resource.hpp"
#include "boost/json/value.hpp"

namespace portcullis::verifier::html {
namespace {

namespace json = boost::json;
using Node = HtmlNode;
using NodeList = std::vector<const Node*>;

// ---- the classic (backcompat) vocabularies --------------------------------------------------

struct ClassicRoot {
  absl::string_view name;
  std::vector<const char*> types;
  std::vector<std::pair<const char*, const char*>> properties;  // class -> mf2 property class
  std::vector<std::pair<const char*, const char*>> rels;        // rel -> mf2 property class
};

const std::vector<ClassicRoot>& ClassicRoots() {
  static const auto* const kRoots = new std::vector<ClassicRoot>{
      {"adr",
       {"h-adr"},
       {{"country-name", "p-country-name"},
        {"locality", "p-locality"},
        {"region", "p-region"},
        {"street-address", "p-street-address"},
        {"postal-code", "p-postal-code"},
        {"extended-address", "p-extended-address"}},
       {}},
      {"geo", {"h-geo"}, {{"latitude", "p-latitude"}, {"longitude", "p-longitude"}}, {}},
      {"hentry",
       {"h-entry"},
       {{"author", "p-author"},
        {"entry-content", "e-content"},
        {"entry-summary", "p-summary"},
        {"entry-title", "p-name"},
        {"published", "dt-published"},
        {"updated", "dt-updated"}},
       {{"bookmark", "u-url"}, {"tag", "p-category"}}},
      {"hfeed",
       {"h-feed"},
       {{"author", "p-author"}, {"photo", "u-photo"}, {"url", "u-url"}},
       {{"tag", "p-category"}}},
      {"hnews",
       {"h-news"},
       {{"entry", "p-entry"},
        {"source-org", "p-source-org"},
        {"dateline", "p-dateline"},
        {"geo", "p-geo"}},
       {{"principles", "u-principles"}}},
      {"hproduct",
       {"h-product"},
       {{"price", "p-price"},
        {"description", "p-description"},
        {"fn", "p-name"},
        {"review", "p-review"},
        {"brand", "p-brand"},
        {"url", "u-url"},
        {"photo", "u-photo"}},
       {{"tag", "p-category"}}},
      {"hreview",
       {"h-review"},
       {{"item", "p-item"},
        {"rating", "p-rating"},
        {"reviewer", "p-author"},
        {"summary", "p-name"},
        {"url", "u-url"},
        {"description", "e-content"}},
       {{"bookmark", "u-url"}, {"tag", "p-category"}}},
      {"vcard",
       {"h-card"},
       {{"fn", "p-name"},
        {"url", "u-url"},
        {"org", "p-org"},
        {"adr", "p-adr"},
        {"tel", "p-tel"},
        {"title", "p-job-title"},
        {"email", "u-email"},
        {"photo", "u-photo"},
        {"agent", "p-agent"},
        {"family-name", "p-family-name"},
        {"given-name", "p-given-name"},
        {"additional-name", "p-additional-name"},
        {"honorific-prefix", "p-honorific-prefix"},
        {"honorific-suffix", "p-honorific-suffix"},
        {"key", "p-key"},
        {"label", "p-label"},
        {"logo", "u-logo"},
        {"mailer", "p-mailer"},
        {"nickname", "p-nickname"},
        {"note", "p-note"},
        {"sound", "u-sound"},
        {"geo", "p-geo"},
        {"bday", "dt-bday"},
        {"class", "p-class"},
        {"rev", "p-rev"},
        {"role", "p-role"},
        {"sort-string", "p-sort-string"},
        {"tz", "p-tz"},
        {"uid", "u-uid"}},
       {{"tag", "p-category"}}},
      {"hresume",
       {"h-resume"},
       {{"contact", "p-contact"},
        {"experience", "p-experience"},
        {"summary", "p-summary"},
        {"skill", "p-skill"},
        {"education", "p-education"},
        {"affiliation", "p-affiliation"}},
       {}},
      {"vevent",
       {"h-event"},
       {{"summary", "p-name"},
        {"dtstart", "dt-start"},
        {"dtend", "dt-end"},
        {"duration", "dt-duration"},
        {"description", "p-description"},
        {"attendee", "p-attendee"},
        {"location", "p-location"},
        {"url", "u-url"}},
       {}},
      {"item", {"h-item"}, {{"fn", "p-name"}, {"photo", "u-photo"}, {"url", "u-url"}}, {}},
      {"hreview-aggregate",
       {"h-review-aggregate"},
       {{"rating", "p-rating"},
        {"average", "p-average"},
        {"best", "p-best"},
        {"count", "p-count"},
        {"item", "p-item"},
        {"url", "u-url"},
        {"fn", "p-name"}},
       {}},
  };
  return *kRoots;
}

const ClassicRoot* FindClassicRoot(absl::string_view name) {
  for (const ClassicRoot& root : ClassicRoots()) {
    if (name == root.name) {
      return &root;
    }
  }
  return nullptr;
}

// ---- attributes, classes, names --------------------------------------------------------------

bool IsOneOf(absl::string_view name, std::initializer_list<absl::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The ASCII-whitespace-separated tokens of `value` (views into it).
std::vector<absl::string_view> Tokens(std::optional<absl::string_view> value) {
  if (!value.has_value()) {
    return {};
  }
  return absl::StrSplit(*value, absl::ByAnyChar(" \t\n\r\f"), absl::SkipEmpty());
}

absl::Span<const absl::string_view> Classes(const Node& node) { return node.classes; }

bool HasClass(const Node& node, absl::string_view name) {
  for (const absl::string_view cls : Classes(node)) {
    if (cls == name) {
      return true;
    }
  }
  return false;
}

// The attribute's value when present and not empty.
std::optional<std::string> Attr(const Node& node, absl::string_view name) {
  const std::optional<absl::string_view> value = node.Attribute(name);
  if (!value.has_value() || value->empty()) {
    return std::nullopt;
  }
  return std::string(*value);
}

// Attr() when the element is one of `tags`.
std::optional<std::string> AttrOf(const Node& node, std::initializer_list<absl::string_view> tags,
                                  absl::string_view name) {
  if (!IsOneOf(node.tag, tags)) {
    return std::nullopt;
  }
  return Attr(node, name);
}

// The attribute's value when the element is one of `tags` and has it, even empty (the spec's
// "abbr.p-x[title]"; the reference parser skips empty values).
std::optional<std::string> PresentAttrOf(const Node& node,
                                         std::initializer_list<absl::string_view> tags,
                                         absl::string_view name) {
  if (!IsOneOf(node.tag, tags)) {
    return std::nullopt;
  }
  const std::optional<absl::string_view> value = node.Attribute(name);
  return value.has_value() ? std::optional<std::string>(*value) : std::nullopt;
}

bool IsLowerAlpha(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

bool IsLowerAlnum(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

// `rest` matches ([a-z0-9]+-)?([a-z]+-)*[a-z]+ : the name part of h-*, p-*, ... classes.
// (Split on '-' in place: this runs for every class of every element, more than once.)
bool IsMicroformatName(absl::string_view rest) {
  const bool several = rest.find('-') != absl::string_view::npos;
  size_t start = 0;
  for (bool first = true;; first = false) {
    const size_t end = rest.find('-', start);
    const absl::string_view part =
        rest.substr(start, end == absl::string_view::npos ? absl::string_view::npos : end - start);
    if (!((first && several) ? IsLowerAlnum(part) : IsLowerAlpha(part))) {
      return false;
    }
    if (end == absl::string_view::npos) {
      return true;
    }
    start = end + 1;
  }
}

bool IsRootClass(absl::string_view cls) {
  return absl::StartsWith(cls, "h-") && IsMicroformatName(cls.substr(2));
}

// The prefix ("p", "u", "e", "dt") of a property class, or "" when `cls` has none.
absl::string_view PropertyPrefix(absl::string_view cls) {
  for (absl::string_view prefix : {"p-", "u-", "e-", "dt-"}) {
    if (absl::StartsWith(cls, prefix)) {
      return prefix.substr(0, prefix.size() - 1);
    }
  }
  return "";
}

bool IsPropertyClass(absl::string_view cls) {
  const absl::string_view prefix = PropertyPrefix(cls);
  return !prefix.empty() && IsMicroformatName(cls.substr(prefix.size() + 1));
}

// What an element's classes make it, noted in HtmlNode::marks by Mf2Parser::Prepare (every walk
// asks it of every element it passes, some elements many times).
enum ClassMark : uint8_t {
  kMarked = 1,
  kMf2Root = 2,         // an h-* class
  kClassicRoot = 4,     // a classic root class (hentry, vcard, ...)
  kPropertyClass = 8,   // a p-*, u-*, e-* or dt-* class
};

uint8_t ClassMarksOf(const Node& node) {
  uint8_t marks = kMarked;
  if (!node.is_element()) {
    return marks;
  }
  for (const absl::string_view cls : Classes(node)) {
    if (IsRootClass(cls)) {
      marks |= kMf2Root;
    } else if (IsPropertyClass(cls)) {
      marks |= kPropertyClass;
    } else if (FindClassicRoot(cls) != nullptr) {
      marks |= kClassicRoot;
    }
  }
  return marks;
}

// The marks Prepare left, or worked out now for an element it did not mark.
uint8_t ClassMarks(const Node& node) {
  return (node.marks & kMarked) != 0 ? node.marks : ClassMarksOf(node);
}

// Has an h-* class (a microformats2 root).
bool IsMf2Root(const Node& node) { return (ClassMarks(node) & kMf2Root) != 0; }

// The classic root classes of `node`, in class order.
std::vector<std::string> ClassicRootsOf(const Node& node) {
  std::vector<std::string> roots;
  if ((ClassMarks(node) & kClassicRoot) == 0) {
    return roots;
  }
  for (const absl::string_view cls : Classes(node)) {
    if (FindClassicRoot(cls) != nullptr) {
      roots.emplace_back(cls);
    }
  }
  return roots;
}

// IsMf2Root(node) || !ClassicRootsOf(node).empty().
bool IsRoot(const Node& node) { return (ClassMarks(node) & (kMf2Root | kClassicRoot)) != 0; }

bool HasPropertyClass(const Node& node) { return (ClassMarks(node) & kPropertyClass) != 0; }

// Is `node` a property of one of the classic `roots` (by class or by rel)?
bool IsClassicProperty(const Node& node, const std::vector<std::string>& roots) {
  if (roots.empty()) {
    return false;  // (before splitting rel: this is asked of every element a walk passes)
  }
  const absl::Span<const absl::string_view> classes = Classes(node);
  const std::vector<absl::string_view> rels = Tokens(node.Attribute("rel"));
  for (const std::string& name : roots) {
    const ClassicRoot* root = FindClassicRoot(name);
    for (const auto& [cls, unused] : root->properties) {
      if (std::find(classes.begin(), classes.end(), cls) != classes.end()) {
        return true;
      }
    }
    for (const auto& [rel, unused] : root->rels) {
      if (std::find(rels.begin(), rels.end(), rel) != rels.end()) {
        return true;
      }
    }
  }
  return false;
}

NodeList ElementChildren(const Node& node) {
  NodeList children;
  for (const auto& child : node.children) {
    if (child->is_element()) {
      children.push_back(child);
    }
  }
  return children;
}

// ---- text ---------------------------------------------------------------------------------------

// String.prototype.trim(): ASCII whitespace and the Unicode spaces (UTF-8), as a view into `s`.
absl::string_view JsTrimView(absl::string_view s) {
  const auto space_at_start = [](absl::string_view t) -> size_t {
    if (t.empty()) {
      return 0;
    }
    const unsigned char c = t[0];
    if (c == ' ' || (c >= 0x09 && c <= 0x0D)) {
      return 1;
    }
    if (t.size() >= 2 && c == 0xC2 && static_cast<unsigned char>(t[1]) == 0xA0) {
      return 2;
    }
    if (t.size() >= 3) {
      const unsigned c1 = static_cast<unsigned char>(t[1]);
      const unsigned c2 = static_cast<unsigned char>(t[2]);
      const unsigned cp = ((c & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F);
      if ((c & 0xF0) == 0xE0 &&
          (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000 || cp == 0xFEFF)) {
        return 3;
      }
    }
    return 0;
  };
  while (size_t k = space_at_start(s)) {
    s.remove_prefix(k);
  }
  while (!s.empty()) {
    size_t k = 0;
    for (size_t len : {1, 2, 3}) {
      if (s.size() >= len) {
        const absl::string_view tail = s.substr(s.size() - len);
        // Only a whole code point counts.
        if (space_at_start(tail) == len) {
          k = len;
          break;
        }
      }
    }
    if (k == 0) {
      break;
    }
    s.remove_suffix(k);
  }
  return s;
}

std::string JsTrim(absl::string_view s) { return std::string(JsTrimView(s)); }

bool IsScriptOrStyle(const Node& node) { return IsOneOf(node.tag, {"script", "style"}); }

// What the result may still grow by. Text extraction is where a small page becomes a large result
// (every level of nested properties repeats the text below it), so all extracted text is charged
// here; extraction stops early once over.
class Budget {
 public:
  explicit Budget(size_t bytes) : remaining_(bytes) {}
  // How long a piece of text may get before extraction can stop.
  size_t limit() const { return remaining_ + 1; }
  bool exhausted() const { return exhausted_; }
  // `text`, charged; empty once the budget is exhausted.
  std::string Take(std::string text) {
    if (exhausted_ || text.size() > remaining_) {
      exhausted_ = true;
      remaining_ = 0;
      return {};
    }
    remaining_ -= text.size();
    return text;
  }

 private:
  size_t remaining_;
  bool exhausted_ = false;
};

// textContent without script/style, an <img> read as its alt (the p-* and name text).
void AltText(const Node& node, std::string& out, size_t limit) {
  for (const auto& child : node.children) {
    if (out.size() > limit) {
      return;
    }
    if (child->kind == Node::Kind::kText) {
      absl::StrAppend(&out, child->text);
    } else if (child->is_element() && !IsScriptOrStyle(*child)) {
      if (child->tag == "img") {
        out += Attr(*child, "alt").value_or("");
      } else {
        AltText(*child, out, limit);
      }
    }
  }
}

std::string TrimmedAltText(const Node& node, Budget& budget) {
  std::string text;
  AltText(node, text, budget.limit());
  return budget.Take(JsTrim(text));
}

// textContent without script/style, an <img> read as " alt " or " src " (the e-* value text).
void ImageText(const Node& node, std::string& out, size_t limit) {
  for (const auto& child : node.children) {
    if (out.size() > limit) {
      return;
    }
    if (child->kind == Node::Kind::kText) {
      absl::StrAppend(&out, child->text);
    } else if (child->is_element() && !IsScriptOrStyle(*child)) {
      if (child->tag == "img") {
        std::optional<std::string> image = Attr(*child, "alt");
        image = image.has_value() ? JsTrim(*image) : Attr(*child, "src");
        if (image.has_value()) {
          image = JsTrim(*image);
        }
        if (image.has_value() && !image->empty()) {
          absl::StrAppend(&out, " ", *image, " ");
          continue;
        }
      }
      ImageText(*child, out, limit);
    }
  }
}

std::string TrimmedImageText(const Node& node, Budget& budget) {
  std::string text;
  ImageText(node, text, budget.limit());
  return budget.Take(JsTrim(text));
}

// ---- URLs ---------------------------------------------------------------------------------------

// Relative in the reference parser's sense: resolved against the base.
bool IsRelative(absl::string_view value) {
  return !absl::StrContains(value, "://") && !absl::StartsWith(value, "#");
}

std::string Resolve(absl::string_view value, const url::Url& base) {
  absl::StatusOr<url::Url> parsed = url::ParseUrl(value, &base);
  if (parsed.ok()) {
    return parsed->href();
  }
  // Another scheme (mailto:, tel:) or not a URL: as written, without the spaces a URL parser
  // would strip.
  std::string kept;
  for (char c : absl::StripAsciiWhitespace(value)) {
    if (c != '\t' && c != '\n' && c != '\r') {
      kept += c;
    }
  }
  return kept;
}

// ---- the parser ---------------------------------------------------------------------------------

// The microformats below `node`, not looking inside microformats.
void CollectRootsInto(const Node& node, NodeList& out) {
  if (IsRoot(node)) {
    out.push_back(&node);
    return;
  }
  for (const auto& child : node.children) {
    if (child->is_element()) {
      CollectRootsInto(*child, out);
    }
  }
}

NodeList CollectRoots(const Node& node) {
  NodeList out;
  for (const auto& child : node.children) {
    if (child->is_element()) {
      CollectRootsInto(*child, out);
    }
  }
  return out;
}

// What an item needs from its subtree, in one walk (it took three: the microformats, the property
// elements, the child microformats; each visited the same elements, all of them but the insides
// of microformats), each list in document order.
struct ItemParts {
  bool has_root = false;  // some microformat below (else properties are implied)
  NodeList properties;
  NodeList children;
};

void CollectItemPartsInto(const Node& node, const std::vector<std::string>& property_roots,
                          const std::vector<std::string>& classic_roots, ItemParts& out) {
  const bool root = IsRoot(node);
  const bool property_class = HasPropertyClass(node);
  const bool property = property_roots.empty() ? property_class
                                               : IsClassicProperty(node, property_roots);
  if (property) {
    out.properties.push_back(&node);
  }
  if (root) {
    out.has_root = true;
    if (!property_class && !IsClassicProperty(node, classic_roots)) {
      out.children.push_back(&node);
    }
    return;
  }
  for (const auto& child : node.children) {
    if (child->is_element()) {
      CollectItemPartsInto(*child, property_roots, classic_roots, out);
    }
  }
}

// `property_roots`: the classic roots properties are read by (none: mf2 properties).
ItemParts CollectItemParts(const Node& item, const std::vector<std::string>& property_roots) {
  const std::vector<std::string> classic_roots = ClassicRootsOf(item);
  ItemParts out;
  for (const auto& child : item.children) {
    if (child->is_element()) {
      CollectItemPartsInto(*child, property_roots, classic_roots, out);
    }
  }
  return out;
}

struct Context {
  std::vector<std::string> roots;  // the classic roots of the microformat being read
  std::string value_type;          // for a microformat that is a property value: p, u, e, dt
  std::string value_key;
};

struct Property {
  std::string type;
  std::string key;
  json::value value;
};

bool StartsWithYear(absl::string_view s) {
  return s.size() >= 4 && std::all_of(s.begin(), s.begin() + 4, absl::ascii_isdigit);
}

// The value-class pattern: nullopt when `node` has no value/value-title descendants.
// The value/value-title elements of a property: not inside another value element, another
// property or a microformat (the spec; the reference parser looks inside all but microformats).
void CollectValueParts(const Node& node, NodeList& out) {
  for (const auto& child : node.children) {
    if (!child->is_element()) {
      continue;
    }
    if (HasClass(*child, "value") || HasClass(*child, "value-title")) {
      out.push_back(child);
    } else if (!IsRoot(*child) && !HasPropertyClass(*child)) {
      CollectValueParts(*child, out);
    }
  }
}

// One part's value: value-title's title, img/area alt, data value, abbr title, (for dates)
// del/ins/time datetime, else its text (the spec's value class pattern).
std::string ValuePart(const Node& part, bool datetime, Budget& budget) {
  std::optional<std::string> value;
  if (HasClass(part, "value-title")) {
    value = PresentAttrOf(part, {part.tag}, "title");
  }
  if (!value) value = PresentAttrOf(part, {"img", "area"}, "alt");
  if (!value) value = PresentAttrOf(part, {"data"}, "value");
  if (!value) value = PresentAttrOf(part, {"abbr"}, "title");
  if (!value && datetime) value = PresentAttrOf(part, {"del", "ins", "time"}, "datetime");
  return value.has_value() ? *value : TrimmedImageText(part, budget);
}

bool IsDigitIn(char c, char last) { return c >= '0' && c <= last; }

// `s` ends in [+-][0-2][0-9]:[0-5][0-9].
bool EndsWithColonZone(absl::string_view s) {
  if (s.size() < 6) {
    return false;
  }
  const absl::string_view z = s.substr(s.size() - 6);
  return (z[0] == '+' || z[0] == '-') && IsDigitIn(z[1], '2') && IsDigitIn(z[2], '9') &&
         z[3] == ':' && IsDigitIn(z[4], '5') && IsDigitIn(z[5], '9');
}

// Some a/A/p/P follows a digit (a necessary condition for the meridiem regex to match).
bool MayHaveMeridiem(absl::string_view s) {
  for (size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    if ((c == 'a' || c == 'A' || c == 'p' || c == 'P') && IsDigitIn(s[i - 1], '9')) {
      return true;
    }
  }
  return false;
}

std::optional<std::string> ValueClass(const Node& node, bool datetime, Budget& budget) {
  NodeList parts;
  CollectValueParts(node, parts);
  if (parts.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> values;
  for (const Node* part : parts) {
    values.push_back(ValuePart(*part, datetime, budget));
  }
  if (!datetime) {
    return absl::StrJoin(values, "");
  }
  std::stable_partition(values.begin(), values.end(), StartsWithYear);
  std::string joined = JsTrim(absl::StrJoin(values, " "));
  // "+05:00" at the end -> "+0500" (the regex ([+-][0-2][0-9]):([0-5][0-9])$, by hand: std::regex
  // costs more than the rest of the parse).
  if (EndsWithColonZone(joined)) {
    joined.erase(joined.size() - 3, 1);
  }
  // "5pm", "5:30p.m." -> 24-hour time. Every match has a digit right before its a/p, so a date
  // without one (all of ISO 8601) skips the regex.
  static const std::regex kMeridiem(
      "([0-2]?[0-9])(:[0-5][0-9])?(:[0-5][0-9])?(a\\.?m\\.?|p\\.?m\\.?)", std::regex::icase);
  std::smatch match;
  if (MayHaveMeridiem(joined) && std::regex_search(joined, match, kMeridiem)) {
    std::string hour = match[1].str();
    const bool am = match[4].str()[0] == 'a' || match[4].str()[0] == 'A';
    if (am) {
      if (hour.size() < 2) {
        hour = "0" + hour;
      }
    } else {
      hour = std::to_string(std::atoi(hour.c_str()) + 12);
    }
    const std::string minutes = match[2].matched ? match[2].str() : ":00";
    const std::string seconds = match[3].matched ? match[3].str() : "";
    joined = absl::StrCat(match.prefix().str(), hour, minutes, seconds, match.suffix().str());
  }
  return absl::AsciiStrToUpper(joined);
}

class Mf2Parser {
 public:
  Mf2Parser(url::Url base, size_t max_output_bytes, Mf2HtmlSources* sources)
      : base_(std::move(base)), budget_(max_output_bytes), sources_(sources) {}

  absl::StatusOr<json::object> Run(HtmlDocument& document) {
    HtmlNode& root = document.mutable_root();
    Prepare(document, root, 0);
    json::array items(storage_);
    for (const Node* node : CollectRoots(root)) {
      items.push_back(ParseItem(*node, Context{}));
    }
    json::object result(storage_);
    result["items"] = std::move(items);
    result["rels"] = std::move(rels_);
    result["rel-urls"] = std::move(rel_urls_);
    if (budget_.exhausted()) {
      return absl::ResourceExhaustedError(
          "the microformats in this document would parse to more text than the output limit");
    }
    return result;
  }

 private:
  // Resolves href/src (object: data) attributes, marks what each element's classes make it and
  // collects rels, in document order. One pass over each element's attributes.
  void Prepare(HtmlDocument& document, Node& node, int depth) {
    for (const auto& child : node.children) {
      if (!child->is_element()) {
        continue;
      }
      child->marks = ClassMarksOf(*child);
      const bool object = child->tag == "object";
      bool rel = false;
      bool href = false;
      for (HtmlAttribute& attribute : child->attributes) {
        const absl::string_view name = attribute.name;
        rel = rel || name == "rel";
        href = href || name == "href";
        if (object ? name == "data" : (name == "href" || name == "src")) {
          attribute.value = IsRelative(attribute.value)
                                ? document.Keep(Resolve(attribute.value, base_))
                                : JsTrimView(attribute.value);
        }
      }
      if (rel && href) {
        AddRel(*child);
      }
      if (depth < kMaxElementDepth * 2) {
        Prepare(document, *child, depth + 1);
      }
    }
  }

  // The e-* `html` of `node`: its children serialized, trimmed, charged; recorded in sources_.
  std::string EmbeddedHtml(const Node& node) {
    std::string serialized = SerializeChildren(node, budget_.limit());
    const absl::string_view trimmed = JsTrimView(serialized);
    const size_t front = static_cast<size_t>(trimmed.data() - serialized.data());
    const size_t back = serialized.size() - front - trimmed.size();
    std::string html = budget_.Take(front + back == 0 ? std::move(serialized)
                                                      : std::string(trimmed));
    if (sources_ != nullptr && !budget_.exhausted()) {
      sources_->Add(html, HtmlFragment{&node, front, back});
    }
    return html;
  }

  void AddRel(const Node& node) {
    std::string text;
    AltText(node, text, budget_.limit());
    text = budget_.Take(std::move(text));
    const std::optional<std::string> rel = Attr(node, "rel");
    std::optional<std::string> href = Attr(node, "href");
    if (!rel.has_value() || !href.has_value()) {
      return;
    }
    *href = JsTrim(*href);
    for (const absl::string_view rel_token : Tokens(*rel)) {
      const json::string_view token(rel_token.data(), rel_token.size());
      json::value& slot = rels_[token];
      json::array& urls = slot.is_array() ? slot.as_array() : slot.emplace_array();
      // Seen before under this rel? A set, not a search of `urls`: a page of n rel="tag" links
      // would cost n^2/2 comparisons.
      if (rel_urls_seen_.emplace(rel_token, *href).second) {
        urls.emplace_back(*href);
      }
      json::value& entry = rel_urls_[*href];
      if (!entry.is_object()) {
        json::object fresh(storage_);
        fresh["rels"] = json::array({json::value(token)}, storage_);
        fresh["text"] = text;
        entry = std::move(fresh);
      } else {
        json::array& entry_rels = entry.as_object()["rels"].as_array();
        if (std::find(entry_rels.begin(), entry_rels.end(), json::value(token)) ==
            entry_rels.end()) {
          entry_rels.emplace_back(token);
          std::sort(entry_rels.begin(), entry_rels.end(),
                    [](const json::value& a, const json::value& b) {
                      return a.as_string() < b.as_string();
                    });
        }
      }
      json::object& fields = entry.as_object();
      if (!text.empty() && fields["text"].as_string().empty()) {
        fields["text"] = text;
      }
      for (const char* name : {"title", "media", "hreflang", "type"}) {
        if (std::optional<std::string> value = Attr(node, name);
            value.has_value() && !fields.contains(name)) {
          fields[name] = *value;
        }
      }
    }
  }

  static std::vector<std::string> TypesOf(const Node& node) {
    std::vector<std::string> types;
    for (const absl::string_view cls : Classes(node)) {
      if (IsRootClass(cls)) {
        types.emplace_back(cls);
      }
    }
    if (types.empty()) {
      for (const std::string& name : ClassicRootsOf(node)) {
        for (const char* type : FindClassicRoot(name)->types) {
          types.push_back(type);
        }
      }
      if (types.size() > 1) {
        types.erase(std::remove(types.begin(), types.end(), "h-item"), types.end());
      }
    }
    std::sort(types.begin(), types.end());
    types.erase(std::unique(types.begin(), types.end()), types.end());
    return types;
  }

  json::object ParseItem(const Node& node, const Context& context) {
    const bool mf2 = IsMf2Root(node);
    Context inner;
    inner.roots = mf2 ? std::vector<std::string>{} : ClassicRootsOf(node);
    json::object item(storage_);
    json::array types(storage_);
    for (const std::string& type : TypesOf(node)) {
      types.emplace_back(type);
    }
    item["type"] = std::move(types);
    const ItemParts parts = CollectItemParts(node, inner.roots);
    item["properties"] = ParseProperties(node, inner, !parts.has_root, parts.properties);
    if (mf2) {
      if (std::optional<std::string> id = Attr(node, "id")) {
        item["id"] = *id;
      }
    }
    const NodeList& children = parts.children;
    if (!children.empty()) {
      json::array parsed(storage_);
      for (const Node* child : children) {
        parsed.push_back(ParseItem(*child, Context{}));
      }
      item["children"] = std::move(parsed);
    }
    const json::object& properties = item["properties"].as_object();
    const auto first_string = [&](const std::string& key) -> std::optional<std::string> {
      const json::value* values = properties.if_contains(key);
      if (values == nullptr || values->as_array().empty()) {
        return std::nullopt;
      }
      const json::value& first = values->as_array().front();
      if (first.is_string()) {
        return std::string(first.as_string());
      }
      if (const json::value* value = first.as_object().if_contains("value");
          value != nullptr && value->is_string()) {
        return std::string(value->as_string());
      }
      return std::nullopt;
    };
    std::optional<std::string> value;
    if (context.value_type == "p") {
      value = first_string("name");
      if (!value.has_value()) {
        value = Attr(node, "title");
      }
      if (!value.has_value()) {
        value = TrimmedImageText(node, budget_);
      }
    } else if (context.value_type == "u") {
      // The first url as it is ({value, alt} included), else the element read as a u-* property
      // (a URL resolved against the base; the reference parser takes the bare text).
      const json::value* urls = properties.if_contains("url");
      if (urls != nullptr && !urls->as_array().empty()) {
        item["value"] = urls->as_array().front();
        return item;
      }
      json::value own = PropertyValue(node, "u", Context{});
      if (own.is_string() && !own.as_string().empty()) {
        item["value"] = std::move(own);
        return item;
      }
      value = own.is_string() ? std::string(own.as_string()) : std::string();
    } else if (context.value_type == "dt") {
      value = DateTimeValue(node);
    } else if (context.value_type == "e") {
      item["value"] = TrimmedImageText(node, budget_);
      item["html"] = EmbeddedHtml(node);
      return item;
    }
    if (!context.value_key.empty() && (!value.has_value() || value->empty())) {
      if (std::optional<std::string> own = first_string(context.value_key)) {
        value = own;
      }
    }
    if (value.has_value() && !context.value_type.empty()) {
      item["value"] = *value;
    }
    return item;
  }

  // `elements`: the item's property elements (ItemParts::properties).
  json::object ParseProperties(const Node& node, const Context& context, bool imply,
                               const NodeList& elements) {
    std::vector<Property> found;
    found.reserve(elements.size());
    for (const Node* element : elements) {
      AppendPropertiesOf(*element, context, found);
    }
    // dt-end with only a time takes its date from dt-start.
    for (Property& property : found) {
      if (property.type != "dt" || property.key != "end" || !property.value.is_string()) {
        continue;
      }
      const std::string end(property.value.as_string());
      static const std::regex kDate("^[0-9]{4}-[0-9]{2}-[0-9]{2}");
      static const std::regex kTime("^[0-9]{2}:[0-9]{2}");
      if (std::regex_search(end, kDate) || !std::regex_search(end, kTime)) {
        continue;
      }
      for (const Property& start : found) {
        if (start.type == "dt" && start.key == "start" && start.value.is_string()) {
          const std::string start_value(start.value.as_string());
          std::smatch date;
          if (std::regex_search(start_value, date, kDate)) {
            property.value = absl::StrCat(date.str(), " ", end);
          }
          break;
        }
      }
    }
    json::object properties(storage_);
    for (Property& property : found) {
      json::value& values = properties[property.key];
      if (!values.is_array()) {
        values.emplace_array();
      }
      values.as_array().push_back(std::move(property.value));
    }
    if (imply && context.roots.empty()) {
      const auto any_class = [&](std::initializer_list<absl::string_view> prefixes) {
        for (const Node* element : elements) {
          for (const absl::string_view cls : Classes(*element)) {
            for (absl::string_view prefix : prefixes) {
              if (absl::StartsWith(cls, prefix)) {
                return true;
              }
            }
          }
        }
        return false;
      };
      if (!properties.contains("name") && !any_class({"p-", "e-", "h-"})) {
        properties["name"] = json::array({json::value(ImpliedName(node))}, storage_);
      }
      if (!properties.contains("url") && !any_class({"u-"})) {
        if (std::optional<std::string> url = ImpliedUrl(node)) {
          properties["url"] = json::array({json::value(*url)}, storage_);
        }
      }
      if (!properties.contains("photo") && !any_class({"u-"})) {
        if (std::optional<json::value> photo = ImpliedPhoto(node)) {
          properties["photo"] = json::array({std::move(*photo)}, storage_);
        }
      }
    }
    return properties;
  }

  void AppendPropertiesOf(const Node& element, const Context& context,
                          std::vector<Property>& properties) {
    std::vector<std::string> names;
    if (!context.roots.empty()) {
      const absl::Span<const absl::string_view> classes = Classes(element);
      const std::vector<absl::string_view> rels = Tokens(element.Attribute("rel"));
      for (const std::string& root_name : context.roots) {
        const ClassicRoot* root = FindClassicRoot(root_name);
        for (const absl::string_view cls : classes) {
          for (const auto& [from, to] : root->properties) {
            if (cls == from) {
              names.push_back(to);
            }
          }
        }
        for (const absl::string_view rel : rels) {
          for (const auto& [from, to] : root->rels) {
            if (rel == from) {
              names.push_back(to);
            }
          }
        }
      }
      std::vector<std::string> unique;
      for (std::string& name : names) {
        if (std::find(unique.begin(), unique.end(), name) == unique.end()) {
          unique.push_back(std::move(name));
        }
      }
      names = std::move(unique);
    } else {
      for (const absl::string_view cls : Classes(element)) {
        if (IsPropertyClass(cls)) {
          names.emplace_back(cls);
        }
      }
    }
    for (const std::string& name : names) {
      Property property{.value = json::value(storage_)};
      property.type = std::string(PropertyPrefix(name));
      property.key = name.substr(property.type.size() + 1);
      if (IsRoot(element)) {
        Context nested;
        nested.value_type = property.type;
        nested.value_key = property.key;
        property.value = ParseItem(element, nested);
      } else {
        property.value = PropertyValue(element, property.type, context);
      }
      properties.push_back(std::move(property));
    }
  }

  // <img>: its src, or {value: src, alt} when it has an alt (not for classic properties).
  // An alt attribute counts even when empty, and an image without src is no URL (the spec; the
  // reference parser drops empty alts and keeps {alt} without a value).
  static std::optional<json::value> ImageValue(const Node& node, bool allow_alt,
                                               const json::storage_ptr& storage = {}) {
    if (node.tag != "img") {
      return std::nullopt;
    }
    const std::optional<absl::string_view> alt =
        allow_alt ? node.Attribute("alt") : std::nullopt;
    const std::optional<std::string> src = Attr(node, "src");
    if (!src.has_value()) {
      return std::nullopt;
    }
    if (alt.has_value()) {
      json::object object(storage);
      object["value"] = *src;
      object["alt"] = json::string_view(alt->data(), alt->size());
      return json::value(std::move(object));
    }
    return json::value(*src, storage);
  }

  std::string DateTimeValue(const Node& node) {
    std::optional<std::string> value = ValueClass(node, /*datetime=*/true, budget_);
    if (!value) value = PresentAttrOf(node, {"time", "ins", "del"}, "datetime");
    if (!value) value = PresentAttrOf(node, {"abbr"}, "title");
    if (!value) value = PresentAttrOf(node, {"data", "input"}, "value");
    if (!value) value = PresentAttrOf(node, {"meta"}, "content");
    return value.has_value() ? *value : TrimmedImageText(node, budget_);
  }

  json::value PropertyValue(const Node& node, absl::string_view type, const Context& context) {
    if (type == "p") {
      std::optional<std::string> value = ValueClass(node, /*datetime=*/false, budget_);
      if (!value) value = PresentAttrOf(node, {"abbr", "link"}, "title");
      if (!value) value = PresentAttrOf(node, {"input", "data"}, "value");
      if (!value) value = PresentAttrOf(node, {"img", "area"}, "alt");
      if (!value) value = PresentAttrOf(node, {"meta"}, "content");
      return json::value(value.has_value() ? *value : TrimmedAltText(node, budget_), storage_);
    }
    if (type == "e") {
      json::object object(storage_);
      object["value"] = TrimmedImageText(node, budget_);
      object["html"] = EmbeddedHtml(node);
      return object;
    }
    if (type == "u") {
      std::optional<json::value> value;
      const auto from = [&](std::optional<std::string> text) {
        if (!value.has_value() && text.has_value()) {
          value = json::value(*text, storage_);
        }
      };
      from(PresentAttrOf(node, {"a", "area", "link"}, "href"));
      if (!value) value = ImageValue(node, /*allow_alt=*/context.roots.empty(), storage_);
      from(PresentAttrOf(node, {"audio", "source", "iframe", "video"}, "src"));
      from(PresentAttrOf(node, {"video"}, "poster"));
      from(PresentAttrOf(node, {"object"}, "data"));
      from(ValueClass(node, /*datetime=*/false, budget_));
      from(PresentAttrOf(node, {"abbr"}, "title"));
      from(PresentAttrOf(node, {"data", "input"}, "value"));
      from(PresentAttrOf(node, {"meta"}, "content"));
      from(TrimmedImageText(node, budget_));
      if (value->is_string()) {
        const std::string text(value->as_string());
        return json::value(IsRelative(text) ? Resolve(text, base_) : JsTrim(text), storage_);
      }
      return std::move(*value);
    }
    return json::value(DateTimeValue(node), storage_);
  }

  // img/area alt or abbr title, trimmed; on the microformat itself even when empty, on a child
  // only when not (the spec; the reference parser skips empty ones and does not trim).
  static std::optional<std::string> ImpliedNameOf(const Node& node, bool allow_empty) {
    std::optional<absl::string_view> value;
    if (node.tag == "img" || node.tag == "area") {
      value = node.Attribute("alt");
    } else if (node.tag == "abbr") {
      value = node.Attribute("title");
    }
    if (!value.has_value() || (value->empty() && !allow_empty)) {
      return std::nullopt;
    }
    return JsTrim(*value);
  }

  // The only element child, when there is exactly one and it is not a microformat.
  static const Node* OnlyChild(const Node& node) {
    const NodeList children = ElementChildren(node);
    return children.size() == 1 && !IsMf2Root(*children.front()) ? children.front() : nullptr;
  }

  // .h-x>img:only-child, .h-x>:only-child>img:only-child and the same for area and abbr (the
  // spec; the reference parser reads the first child whatever its siblings).
  std::string ImpliedName(const Node& node) {
    std::optional<std::string> name = ImpliedNameOf(node, /*allow_empty=*/true);
    if (const Node* child = OnlyChild(node); !name && child != nullptr) {
      name = ImpliedNameOf(*child, /*allow_empty=*/false);
      if (const Node* grandchild = OnlyChild(*child); !name && grandchild != nullptr) {
        name = ImpliedNameOf(*grandchild, /*allow_empty=*/false);
      }
    }
    return name.has_value() ? *name : TrimmedAltText(node, budget_);
  }

  static std::optional<std::string> LinkOf(const Node& node) {
    return AttrOf(node, {"a", "area"}, "href");
  }

  static std::optional<json::value> PhotoOf(const Node& node) {
    if (node.tag == "img") {
      return ImageValue(node, /*allow_alt=*/true);
    }
    if (node.tag == "object") {
      if (std::optional<std::string> data = Attr(node, "data")) {
        return json::value(*data);
      }
    }
    return std::nullopt;
  }

  // The implied url / photo rule: `of` the element itself; else `of` its only child with the
  // first of `tags` that it has exactly one of (not itself a microformat); else the same rule one
  // level down, through an only element child.
  template <typename Value>
  static std::optional<Value> Implied(const Node& node,
                                      std::initializer_list<absl::string_view> tags,
                                      std::optional<Value> (*of)(const Node&)) {
    std::optional<Value> value = of(node);
    if (!value) {
      value = OfOnlyChildTagged(node, tags, of);
    }
    if (!value) {
      const NodeList children = ElementChildren(node);
      if (children.size() == 1) {
        value = OfOnlyChildTagged(*children.front(), tags, of);
      }
    }
    return value;
  }

  template <typename Value>
  static std::optional<Value> OfOnlyChildTagged(const Node& node,
                                                std::initializer_list<absl::string_view> tags,
                                                std::optional<Value> (*of)(const Node&)) {
    const NodeList children = ElementChildren(node);
    for (absl::string_view tag : tags) {
      NodeList matching;
      for (const Node* child : children) {
        if (child->tag == tag) {
          matching.push_back(child);
        }
      }
      if (matching.size() == 1 && !IsMf2Root(*matching.front())) {
        return of(*matching.front());
      }
    }
    return std::nullopt;
  }

  static std::optional<std::string> ImpliedUrl(const Node& node) {
    return Implied<std::string>(node, {"a", "area"}, &LinkOf);
  }

  static std::optional<json::value> ImpliedPhoto(const Node& node) {
    return Implied<json::value>(node, {"img", "object"}, &PhotoOf);
  }

  url::Url base_;
  Budget budget_;
  // Where every value of the result is allocated: one arena, freed with the result (no malloc and
  // free per string, array and object).
  json::storage_ptr storage_ = json::make_shared_resource<json::monotonic_resource>();
  json::object rels_{storage_};
  json::object rel_urls_{storage_};
  absl::flat_hash_set<std::pair<std::string, std::string>> rel_urls_seen_;  // (rel, url) in rels_
  Mf2HtmlSources* sources_;  // nullable
};

// The first <base href> in document order.
const Node* FindBase(const Node& node, int depth) {
  for (const auto& child : node.children) {
    if (!child->is_element()) {
      continue;
    }
    if (child->tag == "base" && child->Attribute("href").has_value()) {
      return child;
    }
    if (depth < kMaxElementDepth * 2) {
      if (const Node* found = FindBase(*child, depth + 1)) {
        return found;
      }
    }
  }
  return nullptr;
}

}  // namespace

url::Url DocumentBaseUrl(const HtmlDocument& document, const url::Url& document_url) {
  if (const Node* base_element = FindBase(document.root(), 0)) {
    if (std::optional<std::string> href = Attr(*base_element, "href")) {
      if (absl::StatusOr<url::Url> parsed = url::ParseUrl(*href, &document_url); parsed.ok()) {
        return *std::move(parsed);
      }
    }
  }
  return document_url;
}

const HtmlFragment* Mf2HtmlSources::Find(absl::string_view html) const {
  const auto it = fragments_.find(std::make_pair(html.size(), absl::HashOf(html)));
  return it == fragments_.end() ? nullptr : &it->second;
}

void Mf2HtmlSources::Add(absl::string_view html, const HtmlFragment& fragment) {
  fragments_.try_emplace(std::make_pair(html.size(), absl::HashOf(html)), fragment);
}

absl::StatusOr<json::object> ParseMf2(HtmlDocument& document, const url::Url& document_url,
                                      const Mf2Limits& limits, Mf2HtmlSources* sources) {
  url::Url base = DocumentBaseUrl(document, document_url);
  return Mf2Parser(std::move(base), limits.max_output_bytes, sources)
      .Run(document);
}

absl::StatusOr<json::object> ParseMf2(absl::string_view html, absl::string_view document_url,
                                      const Mf2Limits& limits) {
  absl::StatusOr<url::Url> url = url::ParseUrl(document_url);
  if (!url.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("document URL is not an absolute http(s) URL: ", url.status().message()));
  }
  HtmlDocument document = HtmlDocument::Parse(html);
  return ParseMf2(document, *url, limits);
}

}  // namespace portcullis::verifier::html
