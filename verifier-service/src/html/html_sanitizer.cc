#include "verifier-service/src/html/html_sanitizer.h"

#include <gumbo.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
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

std::string ElementName(const GumboNode& node) {
  const GumboElement& element = node.v.element;
  if (element.tag != GUMBO_TAG_UNKNOWN) {
    return gumbo_normalized_tagname(element.tag);
  }
  GumboStringPiece piece = element.original_tag;
  gumbo_tag_from_original_text(&piece);
  return absl::AsciiStrToLower(absl::string_view(piece.data, piece.length));
}

// An element whose children are being written, and the end tag owed after them ("" when the
// element itself was unwrapped).
struct Frame {
  const GumboVector* children;
  unsigned next = 0;
  std::string close;
  bool is_link = false;
};

// Writes the sanitized children of a gumbo fragment within a byte budget.
class Writer {
 public:
  Writer(const url::Url& base, const SanitizeLimits& limits) : base_(base), limits_(limits) {}

  void Write(const GumboNode& root) {
    std::vector<Frame> stack;  // explicit: the tree may be kMaxElementDepth deep
    stack.push_back({&root.v.element.children});
    while (!stack.empty() && !stopped_) {
      Frame& frame = stack.back();
      if (frame.next >= frame.children->length) {
        Close(frame);
        stack.pop_back();
        continue;
      }
      const auto& node = *static_cast<const GumboNode*>(frame.children->data[frame.next++]);
      switch (node.type) {
        case GUMBO_NODE_TEXT:
        case GUMBO_NODE_WHITESPACE:
        case GUMBO_NODE_CDATA:
          WriteText(node.v.text.text);
          break;
        case GUMBO_NODE_ELEMENT:
          if (std::optional<Frame> child = Open(node); child.has_value()) {
            stack.push_back(std::move(*child));
          }
          break;
        case GUMBO_NODE_COMMENT:
        case GUMBO_NODE_TEMPLATE:
        case GUMBO_NODE_DOCUMENT:
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
  // unwrapped or dropped, the output was cut, a value holds a carriage return (the parser turns
  // it into a newline), a URL's serialization is not its own, or the nesting came near the depth
  // cap. When false (and the parse had no error), the output serializes the tree the parser built
  // from well-formed input, less comments and attributes, and reads back as itself.
  bool may_reparse_differently() const {
    return reshaped_ || stopped_ || max_depth_ >= kMaxElementDepth / 2;
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

  void Close(const Frame& frame) {
    out_ += frame.close;
    closing_bytes_ -= frame.close.size();
    if (!frame.close.empty()) {
      --depth_;
    }
    if (frame.is_link) {
      --open_links_;
    }
  }

  void WriteText(absl::string_view text) {
    if (text.find('\r') != absl::string_view::npos) {
      reshaped_ = true;
    }
    std::string escaped;
    // The HTML parser drops a newline right after <pre>; write one more so a leading newline of
    // the text survives a re-parse.
    if (out_.size() == after_pre_start_ && !text.empty() && text[0] == '\n') {
      escaped += '\n';
    }
    EscapeInto(text, /*attribute=*/false, escaped);
    if (Fits(escaped.size())) {
      out_ += escaped;
      return;
    }
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
  std::optional<Frame> Open(const GumboNode& node) {
    const GumboElement& element = node.v.element;
    const std::string name = ElementName(node);
    if (element.tag_namespace != GUMBO_NAMESPACE_HTML || IsDroppedWithContents(name)) {
      reshaped_ = true;
      return std::nullopt;
    }
    Frame unwrapped{&element.children};
    if (!IsAllowedElement(name) || (name == "a" && open_links_ > 0)) {
      reshaped_ = true;
      return unwrapped;
    }
    std::string start = absl::StrCat("<", name);
    bool has_url = false;
    for (unsigned k = 0; k < element.attributes.length; ++k) {
      const auto& attribute = *static_cast<const GumboAttribute*>(element.attributes.data[k]);
      if (attribute.attr_namespace != GUMBO_ATTR_NAMESPACE_NONE) {
        continue;
      }
      const absl::string_view attribute_name = attribute.name;
      const absl::string_view raw = attribute.value;
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
      if (value.find('\r') != std::string::npos) {
        reshaped_ = true;
      }
      absl::StrAppend(&start, " ", attribute_name, "=\"");
      EscapeInto(value, /*attribute=*/true, start);
      start += '"';
    }
    if (name == "a") {
      if (!has_url) {
        reshaped_ = true;
        return unwrapped;
      }
      start += " rel=\"nofollow noopener ugc\"";
    }
    if (name == "img" && !has_url) {
      reshaped_ = true;
      return std::nullopt;
    }
    start += '>';
    Frame frame{&element.children};
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
    if (IsVoid(name)) {
      return std::nullopt;  // no children to write (the parser gives void elements none)
    }
    closing_bytes_ += frame.close.size();
    max_depth_ = std::max(max_depth_, ++depth_);
    if (name == "a") {
      frame.is_link = true;
      ++open_links_;
    }
    return frame;
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
  Writer writer(base, limits);
  writer.Write(*output->root);
  truncated = truncated || writer.truncated();
  may_reparse_differently = may_reparse_differently || writer.may_reparse_differently();
  return writer.TakeOutput();
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
  }
  result.truncated = result.truncated || truncated;
  return result;
}

}  // namespace portcullis::verifier::html
