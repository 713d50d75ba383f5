#include "verifier-service/src/html/html_sanitizer.h"

#include <gumbo.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/plain_text.h"

namespace portcullis::verifier::html {
namespace {

struct GumboOutputDeleter {
  void operator()(GumboOutput* output) const {
    if (output != nullptr) {
      gumbo_destroy_output(&kGumboDefaultOptions, output);
    }
  }
};
using GumboOutputPtr = std::unique_ptr<GumboOutput, GumboOutputDeleter>;

bool IsOneOf(absl::string_view name, std::initializer_list<absl::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Kept, with the attributes AllowedAttribute permits.
bool IsAllowedElement(absl::string_view name) {
  return IsOneOf(
      name,
      {"a",     "abbr",  "b",     "bdi",    "blockquote", "br",  "caption", "cite",       "code",
       "dd",    "del",   "dfn",   "div",    "dl",         "dt",  "em",      "figcaption", "figure",
       "h1",    "h2",    "h3",    "h4",     "h5",         "h6",  "hr",      "i",          "img",
       "ins",   "kbd",   "li",    "mark",   "ol",         "p",   "pre",     "q",          "s",
       "samp",  "small", "span",  "strong", "sub",        "sup", "table",   "tbody",      "td",
       "tfoot", "th",    "thead", "time",   "tr",         "u",   "ul",      "var",        "wbr"});
}

// Dropped together with everything inside them.
bool IsDroppedWithContents(absl::string_view name) {
  return IsOneOf(
      name, {"script",   "style",   "template", "iframe",  "frame",    "frameset",   "object",
             "embed",    "applet",  "noscript", "noembed", "noframes", "xmp",        "plaintext",
             "textarea", "title",   "head",     "meta",    "link",     "base",       "form",
             "input",    "button",  "select",   "option",  "optgroup", "datalist",   "output",
             "canvas",   "audio",   "video",    "source",  "track",    "picture",    "map",
             "area",     "portal",  "dialog",   "svg",     "math",     "param",      "keygen",
             "image",    "isindex", "listing",  "slot",    "marquee",  "fencedframe"});
}

bool IsVoid(absl::string_view name) { return IsOneOf(name, {"br", "hr", "img", "wbr"}); }

bool IsDigits(absl::string_view value, size_t max_digits) {
  return !value.empty() && value.size() <= max_digits &&
         std::all_of(value.begin(), value.end(), [](char c) { return absl::ascii_isdigit(c); });
}

enum class AttributeKind { kDropped, kText, kUrl, kNumber, kSignedNumber };

AttributeKind AllowedAttribute(absl::string_view element, absl::string_view attribute) {
  if (attribute == "title") {
    return AttributeKind::kText;
  }
  if (element == "a" && attribute == "href") {
    return AttributeKind::kUrl;
  }
  if (element == "img") {
    if (attribute == "src") {
      return AttributeKind::kUrl;
    }
    if (attribute == "alt") {
      return AttributeKind::kText;
    }
    if (attribute == "width" || attribute == "height") {
      return AttributeKind::kNumber;
    }
  }
  if (attribute == "cite" && IsOneOf(element, {"blockquote", "q", "del", "ins"})) {
    return AttributeKind::kUrl;
  }
  if (attribute == "datetime" && IsOneOf(element, {"time", "del", "ins"})) {
    return AttributeKind::kText;
  }
  if ((attribute == "colspan" || attribute == "rowspan") && IsOneOf(element, {"td", "th"})) {
    return AttributeKind::kNumber;
  }
  if (element == "ol" && attribute == "start") {
    return AttributeKind::kSignedNumber;
  }
  return AttributeKind::kDropped;
}

void EscapeInto(absl::string_view text, bool attribute, std::string& out) {
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\'':
        out += attribute ? "&#39;" : "'";
        break;
      case '\0':  // gumbo replaces NUL, but never let one through
        out += "\xEF\xBF\xBD";
        break;
      default:
        out += c;
    }
  }
}

// Whether the HTML parser reads `text`, written as it is (escaped), back as the same characters.
// Two kinds of character come back as others: a carriage return (read as a newline), and the
// code points gumbo's input stream replaces with U+FFFD — C0 controls other than tab, newline and
// form feed, DEL, C1 controls, noncharacters (gumbo's utf8_is_invalid_code_point). Only a
// character reference (&#8; &#x81; &#xFDD0;) puts those into a tree: parsing leaves them as
// they are, while the same character written raw reads back as U+FFFD. `text` is gumbo's output
// (valid UTF-8).
bool ReadsBackAsWritten(absl::string_view text) {
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      ++i;
      continue;
    }
    if (c < 0x80) {
      if (c != '\t' && c != '\n' && c != '\f') {
        return false;  // CR, the other C0 controls, DEL
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: its code point.
    const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (i + length > n) {
      return false;  // not gumbo's output; never trust it to read back
    }
    uint32_t code_point = c & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < length; ++k) {
      code_point = (code_point << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    if ((code_point >= 0x80 && code_point <= 0x9F) ||
        (code_point >= 0xFDD0 && code_point <= 0xFDEF) || (code_point & 0xFFFE) == 0xFFFE) {
      return false;
    }
    i += length;
  }
  return true;
}

// ---- when a parsed tree is the tree its serialization parses to ---------------------------------
//
// SanitizeParsedHtml writes a part of HtmlDocument's tree instead of parsing its serialization
// (SerializeChildren) again as SanitizeHtml would. That gives the same result exactly when parsing
// the serialization as a <div>'s innerHTML builds that same tree: then the writer sees the same
// elements, attributes and text either way. The serialization is well nested (every element has
// its end tag), so the parser rebuilds the tree unless a start tag closes an element implicitly,
// the tokenizer reads some text differently, or an element has parsing rules of its own. The
// check below allows only elements whose start tag the parser just inserts (and, for formatting
// elements, records; nothing is ever reconstructed when no element is closed implicitly), and
// refuses the implicit closes by their triggers: a block inside a <p>, a heading directly inside
// a heading, an <li> (<dd>, <dt>) inside another before a list, an <a> inside an <a>. Everything
// else — tables, forms, foreign content, raw text that could end early, a <pre> whose text starts
// with a newline, text or attribute values the tokenizer reads back as other characters (a
// carriage return, a control character or noncharacter from a character reference: see
// ReadsBackAsWritten), comments that end differently, gumbo tags not listed here — is parsed
// again. Unknown (custom) elements parse as <span> does.

// Whether `<name>` written out is read back as a start tag of that same name: an ASCII letter
// first, then nothing that ends the name (whitespace, '/', '>'), that the tokenizer changes
// (uppercase ASCII, NUL) or that ReadsBackAsWritten refuses.
bool TagNameReadsBack(absl::string_view name) {
  if (name.empty() || !absl::ascii_islower(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  for (const char c : name) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '/' || c == '>' ||
        c == '\0' || absl::ascii_isupper(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return ReadsBackAsWritten(name);
}

enum ElementRule : uint16_t {
  kInserted = 1 << 0,   // inserted (and popped by its end tag), nothing else
  kClosesP = 1 << 1,    // closes an open <p> (a block; refused inside a <p>)
  kParagraph = 1 << 2,  // p
  kHeading = 1 << 3,    // h1-h6: closes a heading that is the current node
  kListItem = 1 << 4,   // li: closes an open <li> up to the nearest list
  kDefinition = 1 << 5, // dd, dt: close an open <dd> or <dt> up to the nearest list
  kList = 1 << 6,       // ol ul dl: where the <li>/<dd>/<dt> search stops
  kLink = 1 << 7,       // a: closes an open <a>
  kPre = 1 << 8,        // pre: the parser drops a newline right after its start tag
  kRawText = 1 << 9,    // script style iframe: text up to the matching end tag
};

uint16_t RuleOf(absl::string_view name) {
  static const auto* const kRules = [] {
    auto* rules = new absl::flat_hash_map<absl::string_view, uint16_t>;
    for (absl::string_view inserted :
         {"abbr", "b",     "bdi",    "bdo",  "big",  "cite",    "code",  "data",   "del",
          "dfn",  "em",    "font",   "i",    "ins",  "kbd",     "mark",  "q",      "s",
          "samp", "small", "span",   "strike", "strong", "sub", "sup",   "time",   "tt",
          "u",    "var",   "br",     "img",  "wbr",  "embed",   "source", "track", "meta",
          "link", "picture", "video", "audio", "label"}) {
      (*rules)[inserted] = kInserted;
    }
    for (absl::string_view block :
         {"address", "article", "aside",  "blockquote", "center", "details", "dialog",
          "dir",     "div",     "fieldset", "figcaption", "figure", "footer", "header",
          "hgroup",  "main",    "menu",   "nav",        "search", "section", "summary", "hr"}) {
      (*rules)[block] = kClosesP;
    }
    for (absl::string_view list : {"ol", "ul", "dl"}) {
      (*rules)[list] = kClosesP | kList;
    }
    for (absl::string_view heading : {"h1", "h2", "h3", "h4", "h5", "h6"}) {
      (*rules)[heading] = kClosesP | kHeading;
    }
    (*rules)["p"] = kClosesP | kParagraph;
    (*rules)["li"] = kClosesP | kListItem;
    (*rules)["dd"] = kClosesP | kDefinition;
    (*rules)["dt"] = kClosesP | kDefinition;
    (*rules)["pre"] = kClosesP | kPre;
    (*rules)["a"] = kLink;
    for (absl::string_view raw : {"script", "style", "iframe"}) {
      (*rules)[raw] = kRawText;
    }
    return rules;
  }();
  if (const auto it = kRules->find(name); it != kRules->end()) {
    return it->second;
  }
  // Custom elements: "any other start tag", when the name reads back as itself (see
  // TagNameReadsBack). Every other tag gumbo knows: refused.
  return gumbo_tagn_enum(name.data(), static_cast<unsigned>(name.size())) == GUMBO_TAG_UNKNOWN &&
                 TagNameReadsBack(name)
             ? kInserted
             : 0;
}

enum class NodeKind { kText, kElement, kOther };

// What the writer reads of gumbo's tree (a fragment parse).
struct GumboTree {
  using Node = GumboNode;
  static unsigned ChildCount(const Node& parent) { return parent.v.element.children.length; }
  static const Node& Child(const Node& parent, unsigned k) {
    return *static_cast<const GumboNode*>(parent.v.element.children.data[k]);
  }
  static NodeKind Kind(const Node& node) {
    switch (node.type) {
      case GUMBO_NODE_TEXT:
      case GUMBO_NODE_WHITESPACE:
      case GUMBO_NODE_CDATA:
        return NodeKind::kText;
      case GUMBO_NODE_ELEMENT:
        return NodeKind::kElement;
      default:  // comments, templates (left out with their contents), the document
        return NodeKind::kOther;
    }
  }
  static absl::string_view Text(const Node& node) { return node.v.text.text; }
  static bool IsHtml(const Node& node) {
    return node.v.element.tag_namespace == GUMBO_NAMESPACE_HTML;
  }
  static std::string Name(const Node& node) { return GumboElementName(node); }
  static unsigned AttributeCount(const Node& node) { return node.v.element.attributes.length; }
  // False for an attribute in a namespace (foreign content only; never kept).
  static bool Attribute(const Node& node, unsigned k, absl::string_view& name,
                        absl::string_view& value) {
    const auto& attribute =
        *static_cast<const GumboAttribute*>(node.v.element.attributes.data[k]);
    name = attribute.name;
    value = attribute.value;
    return attribute.attr_namespace == GUMBO_ATTR_NAMESPACE_NONE;
  }
};

// What the writer reads of HtmlDocument's tree (over gumbo's; attributes in a namespace only
// exist on foreign elements, which are never kept).
struct OwnedTree {
  using Node = HtmlNode;
  static unsigned ChildCount(const Node& parent) {
    return static_cast<unsigned>(parent.children.size());
  }
  static const Node& Child(const Node& parent, unsigned k) { return *parent.children[k]; }
  static NodeKind Kind(const Node& node) {
    switch (node.kind) {
      case HtmlNode::Kind::kText:
        return NodeKind::kText;
      case HtmlNode::Kind::kElement:
        return NodeKind::kElement;
      default:
        return NodeKind::kOther;
    }
  }
  static absl::string_view Text(const Node& node) { return node.text; }
  static bool IsHtml(const Node& node) { return node.html_namespace; }
  static absl::string_view Name(const Node& node) { return node.tag; }
  static unsigned AttributeCount(const Node& node) {
    return static_cast<unsigned>(node.attributes.size());
  }
  static bool Attribute(const Node& node, unsigned k, absl::string_view& name,
                        absl::string_view& value) {
    name = node.attributes[k].name;
    value = node.attributes[k].value;
    return true;
  }
};

// An element whose children are being written, and the end tag owed after them ("" when the
// element itself was unwrapped).
template <typename Node>
struct Frame {
  const Node* parent;
  unsigned next = 0;
  std::string close;
  bool is_link = false;
};

// The text of the root's children `index` as written: the fragment's trimmed ends (see
// HtmlFragment) replace whole top-level text nodes' text.
struct TopLevelText {
  unsigned index;
  absl::string_view text;
};

// Writes the sanitized children of a fragment (gumbo's parse of it, or a part of HtmlDocument's
// tree) within a byte budget.
template <typename Tree>
class Writer {
 public:
  using Node = typename Tree::Node;

  Writer(const url::Url& base, const SanitizeLimits& limits) : base_(base), limits_(limits) {}

  // `top_level` overrides the text of some of the root's text children.
  void Write(const Node& root, const std::vector<TopLevelText>& top_level = {}) {
    std::vector<Frame<Node>> stack;  // explicit: the tree may be kMaxElementDepth deep
    stack.push_back({&root});
    while (!stack.empty() && !stopped_) {
      Frame<Node>& frame = stack.back();
      if (frame.next >= Tree::ChildCount(*frame.parent)) {
        Close(frame);
        stack.pop_back();
        continue;
      }
      const unsigned index = frame.next++;
      const Node& node = Tree::Child(*frame.parent, index);
      switch (Tree::Kind(node)) {
        case NodeKind::kText: {
          absl::string_view text = Tree::Text(node);
          if (stack.size() == 1) {
            for (const TopLevelText& replaced : top_level) {
              if (replaced.index == index) {
                text = replaced.text;
              }
            }
          }
          WriteText(text);
          break;
        }
        case NodeKind::kElement:
          if (std::optional<Frame<Node>> child = Open(node); child.has_value()) {
            stack.push_back(std::move(*child));
          }
          break;
        case NodeKind::kOther:
          break;
      }
    }
    // Cut short: close whatever is still open, innermost first.
    while (!stack.empty()) {
      Close(stack.back());
      stack.pop_back();
    }
  }

  std::string TakeOutput() { return std::move(out_); }
  bool truncated() const { return stopped_; }
  // Whether the output may read back as a different tree than the one written: an element was
  // unwrapped or dropped and what was written is not a tree its serialization rebuilds (see
  // RuleOf: unwrapping can put a heading directly into a heading), the output was cut, a text or
  // value holds characters the parser reads back as others (ReadsBackAsWritten: a carriage
  // return, a control character), a URL's serialization is not its own, or the nesting came near
  // the depth cap. When false (and the tree is one the parser builds from its own serialization), the
  // output serializes that tree, less comments and attributes, and reads back as itself.
  bool may_reparse_differently() const {
    return reshaped_ || stopped_ || max_depth_ >= kMaxElementDepth / 2 ||
           (pruned_ && !rebuilds_itself_);
  }

 private:
  // Whether `bytes` more, plus the end tags already owed, stay within the limit; stops the writer
  // otherwise.
  bool Fits(size_t bytes) {
    if (out_.size() + bytes + closing_bytes_ <= limits_.max_output_bytes) {
      return true;
    }
    stopped_ = true;
    return false;
  }

  void Close(const Frame<Node>& frame) {
    out_ += frame.close;
    closing_bytes_ -= frame.close.size();
    if (!frame.close.empty()) {
      --depth_;
      open_paragraphs_ -= (written_.back() & kParagraph) != 0 ? 1 : 0;
      written_.pop_back();
    }
    if (frame.is_link) {
      --open_links_;
    }
  }

  void WriteText(absl::string_view text) {
    if (!ReadsBackAsWritten(text)) {
      reshaped_ = true;
    }
    const size_t before = out_.size();
    // The HTML parser drops a newline right after <pre>; write one more so a leading newline of
    // the text survives a re-parse.
    if (out_.size() == after_pre_start_ && !text.empty() && text[0] == '\n') {
      out_ += '\n';
    }
    EscapeInto(text, /*attribute=*/false, out_);
    if (out_.size() + closing_bytes_ <= limits_.max_output_bytes) {
      return;
    }
    stopped_ = true;
    out_.resize(before);
    // As much as fits, cut at a character boundary.
    const size_t used = out_.size() + closing_bytes_;
    const size_t room = used < limits_.max_output_bytes ? limits_.max_output_bytes - used : 0;
    size_t end = 0;
    std::string partial;
    while (end < text.size()) {
      size_t length = 1;
      while (end + length < text.size() &&
             (static_cast<unsigned char>(text[end + length]) & 0xC0) == 0x80) {
        ++length;
      }
      std::string piece;
      EscapeInto(text.substr(end, length), /*attribute=*/false, piece);
      if (partial.size() + piece.size() > room) {
        break;
      }
      partial += piece;
      end += length;
    }
    out_ += partial;
  }

  // The frame for `node`'s children after writing its start tag, or nothing when the element is
  // dropped with its contents (or does not fit).
  std::optional<Frame<Node>> Open(const Node& node) {
    const auto& name = Tree::Name(node);
    if (!Tree::IsHtml(node) || IsDroppedWithContents(name)) {
      pruned_ = true;
      return std::nullopt;
    }
    Frame<Node> unwrapped{&node};
    if (!IsAllowedElement(name) || (name == "a" && open_links_ > 0)) {
      pruned_ = true;
      return unwrapped;
    }
    std::string start = absl::StrCat("<", name);
    bool has_url = false;
    const unsigned attribute_count = Tree::AttributeCount(node);
    for (unsigned k = 0; k < attribute_count; ++k) {
      absl::string_view attribute_name;
      absl::string_view raw;
      if (!Tree::Attribute(node, k, attribute_name, raw)) {
        continue;
      }
      std::string value;
      switch (AllowedAttribute(name, attribute_name)) {
        case AttributeKind::kDropped:
          continue;
        case AttributeKind::kText:
          value = std::string(raw);
          break;
        case AttributeKind::kNumber:
          if (!IsDigits(raw, 6)) {
            continue;
          }
          value = std::string(raw);
          break;
        case AttributeKind::kSignedNumber:
          if (!IsDigits(absl::StripPrefix(raw, "-"), 6)) {
            continue;
          }
          value = std::string(raw);
          break;
        case AttributeKind::kUrl:
          value = SafeUrl(raw, base_, /*allow_mailto=*/name == "a", limits_.max_url_bytes);
          if (value.empty()) {
            continue;
          }
          has_url = has_url || attribute_name == "href" || attribute_name == "src";
          // Read again, the value is what a second pass would make of it.
          if (value != raw &&
              SafeUrl(value, base_, /*allow_mailto=*/name == "a", limits_.max_url_bytes) != value) {
            reshaped_ = true;
          }
          break;
      }
      if (!ReadsBackAsWritten(value)) {
        reshaped_ = true;
      }
      absl::StrAppend(&start, " ", attribute_name, "=\"");
      EscapeInto(value, /*attribute=*/true, start);
      start += '"';
    }
    if (name == "a") {
      if (!has_url) {
        pruned_ = true;
        return unwrapped;
      }
      start += " rel=\"nofollow noopener ugc\"";
    }
    if (name == "img" && !has_url) {
      pruned_ = true;
      return std::nullopt;
    }
    start += '>';
    Frame<Node> frame{&node};
    if (!IsVoid(name)) {
      frame.close = absl::StrCat("</", name, ">");
    }
    if (!Fits(start.size() + frame.close.size())) {
      return std::nullopt;
    }
    out_ += start;
    if (name == "pre") {
      after_pre_start_ = out_.size();
    }
    const uint16_t rule = RuleOf(name);
    CheckRebuilds(rule);
    if (IsVoid(name)) {
      return std::nullopt;  // no children to write (the parser gives void elements none)
    }
    closing_bytes_ += frame.close.size();
    max_depth_ = std::max(max_depth_, ++depth_);
    written_.push_back(rule);
    open_paragraphs_ += (rule & kParagraph) != 0 ? 1 : 0;
    if (name == "a") {
      frame.is_link = true;
      ++open_links_;
    }
    return frame;
  }

  // Whether the element of `rule` just written keeps the written tree one that its serialization
  // rebuilds (RebuildsItself's rules, over the elements written; the <pre> newline is written
  // twice, and <a> inside <a> unwrapped, already).
  void CheckRebuilds(uint16_t rule) {
    const auto open_before_list = [&](uint16_t rules) {
      for (size_t k = written_.size(); k > 0; --k) {
        if ((written_[k - 1] & rules) != 0) {
          return true;
        }
        if ((written_[k - 1] & kList) != 0) {
          return false;
        }
      }
      return false;
    };
    if (rule == 0 || (rule & kRawText) != 0 || ((rule & kClosesP) != 0 && open_paragraphs_ > 0) ||
        ((rule & kHeading) != 0 && !written_.empty() && (written_.back() & kHeading) != 0) ||
        ((rule & kListItem) != 0 && open_before_list(kListItem)) ||
        ((rule & kDefinition) != 0 && open_before_list(kDefinition))) {
      rebuilds_itself_ = false;
    }
  }

  const url::Url& base_;
  const SanitizeLimits& limits_;
  std::string out_;
  size_t closing_bytes_ = 0;
  int open_links_ = 0;
  // Where the last <pre> start tag ended: text written right there starting with a newline
  // needs one more.
  size_t after_pre_start_ = std::string::npos;
  bool stopped_ = false;
  bool reshaped_ = false;
  bool pruned_ = false;  // an element was unwrapped, or dropped with its contents
  bool rebuilds_itself_ = true;  // see CheckRebuilds
  std::vector<uint16_t> written_;  // RuleOf of the elements written and not yet closed
  int open_paragraphs_ = 0;        // <p> among them
  int depth_ = 0;  // elements written and not yet closed
  int max_depth_ = 0;
};

// One parse and serialization of `fragment`; sets `truncated` when the output was cut, and
// `may_reparse_differently` when the output might not read back as the tree it serializes.
std::string SanitizeOnce(absl::string_view fragment, const url::Url& base,
                         const SanitizeLimits& limits, bool& truncated,
                         bool& may_reparse_differently) {
  // Gumbo's tree building is quadratic in nesting depth: cap it as HtmlDocument does.
  auto [capped, dropped_start_tags] = CapNestingDepth(fragment, kMaxElementDepth);
  may_reparse_differently = dropped_start_tags > 0;
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 1;  // only whether there was one: see below
  options.fragment_context = GUMBO_TAG_DIV;
  options.fragment_namespace = GUMBO_NAMESPACE_HTML;
  const GumboOutputPtr output(gumbo_parse_with_options(&options, capped.data(), capped.size()));
  if (output == nullptr || output->root == nullptr) {
    return "";
  }
  // A parse error is where the parser repairs markup (misnesting, foster parenting, stray end
  // tags), and a repaired tree need not serialize to markup that builds it again (a <dd> fostered
  // into a <dt> is closed by the parser when it reads it back): only an error-free tree counts.
  may_reparse_differently = may_reparse_differently || output->errors.length > 0;
  Writer<GumboTree> writer(base, limits);
  writer.Write(*output->root);
  truncated = truncated || writer.truncated();
  may_reparse_differently = may_reparse_differently || writer.may_reparse_differently();
  return writer.TakeOutput();
}

// Whether a comment with this text serializes to a comment that reads back the same.
bool CommentReadsBack(absl::string_view text) {
  return !absl::StartsWith(text, ">") && !absl::StartsWith(text, "->") &&
         !absl::StrContains(text, "--") && !absl::EndsWith(text, "-");
}

// Whether parsing SerializeChildren(parent) as a <div>'s innerHTML builds parent's children again
// (see above). `parent` itself is the context, never reparsed: it must only not give its children
// rules of their own (raw text, tables, foreign content).
bool RebuildsItself(const HtmlNode& parent) {
  if (!parent.is_element() || !parent.html_namespace) {
    return false;
  }
  const uint16_t parent_rule = RuleOf(parent.tag);
  if ((parent_rule & ~(kInserted | kClosesP | kParagraph | kHeading | kListItem | kDefinition |
                       kList | kLink)) != 0 ||
      (parent_rule == 0 && parent.tag != "td" && parent.tag != "th")) {
    return false;
  }
  struct Open {
    const HtmlNode* node;
    uint16_t rule;
    unsigned next;
  };
  std::vector<Open> stack;  // the elements the reparse has open, innermost last
  stack.reserve(32);
  int open_paragraphs = 0;
  int open_links = 0;
  // Whether an element of `rules` is open above the nearest list (the <li>/<dd>/<dt> search).
  const auto open_before_list = [&](uint16_t rules) {
    for (size_t k = stack.size(); k > 1; --k) {
      const uint16_t rule = stack[k - 1].rule;
      if ((rule & rules) != 0) {
        return true;
      }
      if ((rule & kList) != 0) {
        return false;
      }
    }
    return false;
  };
  stack.push_back({&parent, 0, 0});
  while (!stack.empty()) {
    Open& top = stack.back();
    if (top.next >= top.node->children.size()) {
      open_paragraphs -= (top.rule & kParagraph) != 0 ? 1 : 0;
      open_links -= (top.rule & kLink) != 0 ? 1 : 0;
      stack.pop_back();
      continue;
    }
    const unsigned index = top.next++;
    const HtmlNode& child = *top.node->children[index];
    const uint16_t parent_of_child = top.rule;
    switch (child.kind) {
      case HtmlNode::Kind::kText:
        if (!ReadsBackAsWritten(child.text)) {
          return false;
        }
        if ((parent_of_child & kRawText) != 0 && (absl::StrContains(child.text, "</") ||
                                                   absl::StrContains(child.text, "<!--"))) {
          return false;
        }
        if ((parent_of_child & kPre) != 0 && index == 0 && absl::StartsWith(child.text, "\n")) {
          return false;
        }
        continue;
      case HtmlNode::Kind::kComment:
        if (!CommentReadsBack(child.text)) {
          return false;
        }
        continue;
      case HtmlNode::Kind::kDocument:
        return false;
      case HtmlNode::Kind::kElement:
        break;
    }
    if (!child.html_namespace || stack.size() >= kMaxElementDepth / 2) {
      return false;
    }
    const uint16_t rule = RuleOf(child.tag);
    if (rule == 0 || ((rule & kClosesP) != 0 && open_paragraphs > 0) ||
        ((rule & kHeading) != 0 && stack.size() > 1 && (parent_of_child & kHeading) != 0) ||
        ((rule & kListItem) != 0 && open_before_list(kListItem)) ||
        ((rule & kDefinition) != 0 && open_before_list(kDefinition)) ||
        ((rule & kLink) != 0 && open_links > 0)) {
      return false;
    }
    for (const auto& [name, value] : child.attributes) {
      if (!ReadsBackAsWritten(value)) {
        return false;
      }
    }
    open_paragraphs += (rule & kParagraph) != 0 ? 1 : 0;
    open_links += (rule & kLink) != 0 ? 1 : 0;
    stack.push_back({&child, rule, 0});
  }
  return true;
}

// The text of the fragment's first and last text children with its trimmed ends taken off, or
// false when the trims are longer than those texts (not a fragment SerializeChildren wrote).
bool TrimmedEnds(const HtmlFragment& fragment, std::vector<TopLevelText>& out) {
  const auto& children = fragment.parent->children;
  const auto set = [&](unsigned index, absl::string_view text) {
    for (TopLevelText& replaced : out) {
      if (replaced.index == index) {
        replaced.text = text;
        return;
      }
    }
    out.push_back({index, text});
  };
  const auto text_of = [&](unsigned index) -> absl::string_view {
    for (const TopLevelText& replaced : out) {
      if (replaced.index == index) {
        return replaced.text;
      }
    }
    return children[index]->text;
  };
  size_t front = fragment.trim_front;
  for (unsigned k = 0; front > 0; ++k) {
    if (k >= children.size() || children[k]->kind != HtmlNode::Kind::kText) {
      return false;
    }
    const absl::string_view text = text_of(k);
    const size_t cut = std::min(front, text.size());
    set(k, text.substr(cut));
    front -= cut;
  }
  size_t back = fragment.trim_back;
  for (size_t k = children.size(); back > 0; --k) {
    if (k == 0 || children[k - 1]->kind != HtmlNode::Kind::kText) {
      return false;
    }
    const unsigned index = static_cast<unsigned>(k - 1);
    const absl::string_view text = text_of(index);
    const size_t cut = std::min(back, text.size());
    set(index, text.substr(0, text.size() - cut));
    back -= cut;
  }
  return true;
}

}  // namespace

std::string SafeUrl(absl::string_view value, const url::Url& base, bool allow_mailto,
                    size_t max_bytes) {
  const std::string scheme = url::SchemeOf(value);
  if (scheme == "mailto") {
    if (!allow_mailto) {
      return "";
    }
    std::string mailto = url::PreprocessInput(value);
    const bool has_control = std::any_of(mailto.begin(), mailto.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == '\x7F';
    });
    return has_control || mailto.size() > max_bytes ? "" : mailto;
  }
  if (!scheme.empty() && scheme != "http" && scheme != "https") {
    return "";
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(value, &base);
  if (!parsed.ok()) {
    return "";
  }
  std::string href = parsed->href();
  return href.size() > max_bytes ? "" : href;
}

std::string EscapeHtmlText(absl::string_view text) {
  std::string out;
  EscapeInto(text, /*attribute=*/false, out);
  return out;
}

SanitizedHtml SanitizeHtml(absl::string_view fragment, const url::Url& base,
                           const SanitizeLimits& limits) {
  SanitizedHtml result;
  if (fragment.size() > limits.max_input_bytes) {
    fragment = Utf8Prefix(fragment, limits.max_input_bytes);
    result.truncated = true;
  }
  bool truncated = false;
  bool may_reparse_differently = false;
  std::string once = SanitizeOnce(fragment, base, limits, truncated, may_reparse_differently);
  result.parses = 1;
  // Unwrapping an element can leave markup the parser nests differently when it reads it again
  // (an <h1> or <p> that was inside an unknown element now directly inside another). The second
  // pass serializes the tree a browser builds from the first pass's output, which reads back as
  // itself: the stored HTML means exactly what it says. When the first pass kept the parser's
  // tree as it was (see Writer::may_reparse_differently), its output already is that
  // serialization, and the second pass would only repeat it.
  if (!may_reparse_differently) {
    result.html = std::move(once);
  } else {
    result.html = SanitizeOnce(once, base, limits, truncated, may_reparse_differently);
    result.parses = 2;
  }
  result.truncated = result.truncated || truncated;
  return result;
}

SanitizedHtml SanitizeParsedHtml(const HtmlFragment& fragment, absl::string_view html,
                                 const url::Url& base, const SanitizeLimits& limits) {
  std::vector<TopLevelText> ends;
  if (fragment.parent == nullptr || html.size() > limits.max_input_bytes ||
      !TrimmedEnds(fragment, ends) || !RebuildsItself(*fragment.parent)) {
    return SanitizeHtml(html, base, limits);
  }
  // The tree is the one SanitizeHtml's first parse of `html` would build, with no error to
  // repair: its first pass, without the parse.
  Writer<OwnedTree> writer(base, limits);
  writer.Write(*fragment.parent, ends);
  SanitizedHtml result;
  result.truncated = writer.truncated();
  result.html = writer.TakeOutput();
  if (writer.may_reparse_differently()) {
    bool truncated = false;
    bool may_reparse_differently = false;
    result.html = SanitizeOnce(result.html, base, limits, truncated, may_reparse_differently);
    result.truncated = result.truncated || truncated;
    result.parses = 1;
  }
  return result;
}

}  // namespace portcullis::verifier::html
