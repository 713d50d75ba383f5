#include "verifier-service/src/html/html_document.h"

#include <gumbo.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace portcullis::verifier::html {

// The memory of one document: gumbo's parse and the tree over it, as small blocks from a bump
// allocator over chunks that are all freed together with the document, instead of one malloc and
// one free per token, buffer growth and node (the profile: malloc/free ~18% of the
// verifier), and no walk of gumbo's tree to free it. A free gives back a small block only when it
// is the most recent allocation (gumbo grows a buffer by allocating the larger one, copying and
// freeing the old); large blocks (the buffers that grow with the page: long texts, the children of
// a long body) come from malloc and are freed as gumbo frees them, so the arena's waste stays
// bounded (memory_bytes; the test keeps it near what malloc would hold).
class DocumentArena {
 public:
  DocumentArena() = default;
  DocumentArena(const DocumentArena&) = delete;
  DocumentArena& operator=(const DocumentArena&) = delete;
  ~DocumentArena() {
    for (const auto& [block, size] : large_) {
      std::free(block);
    }
  }

  // gumbo's allocator and deallocator (GumboOptions).
  static void* Allocate(void* arena, size_t size) {
    return static_cast<DocumentArena*>(arena)->Allocate(size);
  }
  static void Free(void* arena, void* pointer) {
    static_cast<DocumentArena*>(arena)->Free(pointer);
  }

  // Uninitialized room for `count` objects of a trivially destructible type (never destroyed).
  template <typename T>
  T* AllocateArray(size_t count) {
    static_assert(std::is_trivially_destructible_v<T> && alignof(T) <= kAlignment);
    void* block = Allocate(std::max<size_t>(count, 1) * sizeof(T));
    if (block == nullptr) {
      throw std::bad_alloc();
    }
    return static_cast<T*>(block);
  }

  absl::string_view Copy(absl::string_view text) {
    if (text.empty()) {
      return {};
    }
    char* copy = AllocateArray<char>(text.size());
    std::memcpy(copy, text.data(), text.size());
    return {copy, text.size()};
  }

  // The memory held: chunks plus the large blocks.
  size_t bytes() const { return chunk_bytes_ + large_bytes_; }

 private:
  static constexpr size_t kAlignment = alignof(std::max_align_t);
  static constexpr size_t kFirstChunk = size_t{16} << 10;
  static constexpr size_t kLargestChunk = size_t{1} << 20;
  static constexpr size_t kLarge = size_t{8} << 10;  // and above: malloc

  void* Allocate(size_t size) {
    if (size >= kLarge) {
      void* block = std::malloc(size);
      if (block != nullptr) {
        large_.emplace(block, size);
        large_bytes_ += size;
      }
      return block;
    }
    size = (std::max<size_t>(size, 1) + kAlignment - 1) & ~(kAlignment - 1);
    if (size > end_ - next_) {
      const size_t chunk = chunks_.empty() ? kFirstChunk : std::min(2 * last_chunk_, kLargestChunk);
      chunks_.push_back(std::make_unique_for_overwrite<std::max_align_t[]>(chunk / kAlignment));
      next_ = reinterpret_cast<uintptr_t>(chunks_.back().get());
      end_ = next_ + chunk;
      last_chunk_ = chunk;
      chunk_bytes_ += chunk;
    }
    last_ = next_;
    next_ += size;
    return reinterpret_cast<void*>(last_);
  }

  void Free(void* pointer) {
    if (pointer == nullptr) {
      return;
    }
    if (reinterpret_cast<uintptr_t>(pointer) == last_) {
      next_ = last_;
      last_ = 0;
      return;
    }
    if (large_.empty()) {
      return;
    }
    if (const auto it = large_.find(pointer); it != large_.end()) {
      large_bytes_ -= it->second;
      large_.erase(it);
      std::free(pointer);
    }
  }

  std::vector<std::unique_ptr<std::max_align_t[]>> chunks_;
  uintptr_t next_ = 0;
  uintptr_t end_ = 0;
  uintptr_t last_ = 0;  // the most recent small allocation, while it may still be given back
  size_t last_chunk_ = 0;
  size_t chunk_bytes_ = 0;
  absl::flat_hash_map<void*, size_t> large_;  // the large blocks held, with their sizes
  size_t large_bytes_ = 0;
};

namespace {

// The tree never gets deeper than this, whatever gumbo built (a second belt behind
// CapNestingDepth; gumbo adds a few implied levels such as html, body, tbody).
constexpr int kMaxTreeDepth = kMaxElementDepth + 64;

bool IsOneOf(absl::string_view name, std::initializer_list<absl::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool IsVoidElement(absl::string_view name) {
  return IsOneOf(name,
                 {"area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img",
                  "input", "keygen", "link", "meta", "param", "source", "track", "wbr"});
}

// Elements whose contents the tokenizer reads as text up to the matching end tag.
bool IsRawTextElement(absl::string_view name) {
  return IsOneOf(name, {"script", "style", "textarea", "title", "xmp", "iframe", "noembed",
                        "noframes", "noscript"});
}

// Elements the tree builder closes by itself when a sibling starts (or merges, or ignores when
// nested), so that a run of them does not nest.
bool IsImplicitlyClosed(absl::string_view name) {
  return IsOneOf(name, {"p",     "li",    "dt",    "dd",       "td",     "th",       "tr",
                        "tbody", "thead", "tfoot", "colgroup", "option", "optgroup", "rb",
                        "rt",    "rtc",   "rp",    "html",     "head",   "body",     "frameset"});
}

// HTML elements that end foreign (SVG, MathML) content, where "/>" otherwise self-closes.
bool BreaksOutOfForeignContent(absl::string_view name) {
  return IsOneOf(name, {"b",     "big",     "blockquote", "body", "br",     "center", "code", "dd",
                        "div",   "dl",      "dt",         "em",   "embed",  "font",   "h1",   "h2",
                        "h3",    "h4",      "h5",         "h6",   "head",   "hr",     "i",    "img",
                        "li",    "listing", "menu",       "meta", "nobr",   "ol",     "p",    "pre",
                        "ruby",  "s",       "small",      "span", "strong", "strike", "sub",  "sup",
                        "table", "tt",      "u",          "ul",   "var"});
}

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool IsTagNameEnd(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>';
}

void EscapeInto(absl::string_view text, bool attribute, std::string& out) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '&') {
      out += "&amp;";
    } else if (c == '\xC2' && i + 1 < text.size() && text[i + 1] == '\xA0') {
      out += "&nbsp;";
      ++i;
    } else if (attribute && c == '"') {
      out += "&quot;";
    } else if (!attribute && c == '<') {
      out += "&lt;";
    } else if (!attribute && c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
}

void SerializeChildrenInto(const HtmlNode& node, std::string& out, int depth, size_t max_bytes) {
  if (depth > kMaxTreeDepth || out.size() > max_bytes) {
    return;
  }
  const bool raw_text_parent = node.is_element() && node.html_namespace &&
                               IsOneOf(node.tag, {"style", "script", "xmp", "iframe", "noembed",
                                                  "noframes", "plaintext", "noscript"});
  for (const HtmlNode* child : node.children) {
    if (out.size() > max_bytes) {
      return;
    }
    switch (child->kind) {
      case HtmlNode::Kind::kText:
        if (raw_text_parent) {
          absl::StrAppend(&out, child->text);
        } else {
          EscapeInto(child->text, /*attribute=*/false, out);
        }
        break;
      case HtmlNode::Kind::kComment:
        absl::StrAppend(&out, "<!--", child->text, "-->");
        break;
      case HtmlNode::Kind::kElement:
        absl::StrAppend(&out, "<", child->tag);
        for (const auto& [name, value] : child->attributes) {
          absl::StrAppend(&out, " ", name, "=\"");
          EscapeInto(value, /*attribute=*/true, out);
          out += '"';
        }
        out += '>';
        if (child->html_namespace && IsVoidElement(child->tag)) {
          break;
        }
        SerializeChildrenInto(*child, out, depth + 1, max_bytes);
        absl::StrAppend(&out, "</", child->tag, ">");
        break;
      case HtmlNode::Kind::kDocument:
        break;
    }
  }
}

// gumbo's (static) spelling of an element's name, or nullopt for an unknown tag: its name is only
// in the page's text.
std::optional<absl::string_view> KnownElementName(const GumboNode& node) {
  const GumboElement& element = node.v.element;
  if (element.tag_namespace == GUMBO_NAMESPACE_SVG) {
    GumboStringPiece piece = element.original_tag;
    gumbo_tag_from_original_text(&piece);
    if (const char* svg_name = gumbo_normalize_svg_tagname(&piece); svg_name != nullptr) {
      return svg_name;
    }
  }
  if (element.tag != GUMBO_TAG_UNKNOWN) {
    return gumbo_normalized_tagname(element.tag);
  }
  return std::nullopt;
}

std::string UnknownElementName(const GumboNode& node) {
  // An unknown tag's name is only in its original text, which gumbo starts at any "</>" it
  // ignored just before the tag ("</><x-y>" is the original text of <x-y>): the name follows them.
  GumboStringPiece piece = node.v.element.original_tag;
  while (piece.length > 3 && std::memcmp(piece.data, "</>", 3) == 0) {
    piece.data += 3;
    piece.length -= 3;
  }
  gumbo_tag_from_original_text(&piece);
  // As the tokenizer names it: ASCII lowercased, a NUL read as U+FFFD.
  std::string name = absl::AsciiStrToLower(absl::string_view(piece.data, piece.length));
  if (name.find('\0') != std::string::npos) {
    absl::StrReplaceAll({{absl::string_view("\0", 1), "\xEF\xBF\xBD"}}, &name);
  }
  return name;
}

// The class attribute split on ASCII whitespace (the DOM's classList), in `arena`.
absl::Span<const absl::string_view> SplitClasses(absl::string_view value, DocumentArena& arena) {
  const absl::InlinedVector<absl::string_view, 8> split =
      absl::StrSplit(value, absl::ByAnyChar(" \t\n\r\f"), absl::SkipEmpty());
  if (split.empty()) {
    return {};
  }
  auto* classes = arena.AllocateArray<absl::string_view>(split.size());
  std::copy(split.begin(), split.end(), classes);
  return {classes, split.size()};
}

}  // namespace

std::string GumboElementName(const GumboNode& node) {
  if (const std::optional<absl::string_view> known = KnownElementName(node)) {
    return std::string(*known);
  }
  return UnknownElementName(node);
}

std::optional<absl::string_view> HtmlNode::Attribute(absl::string_view name) const {
  for (const HtmlAttribute& attribute : attributes) {
    if (attribute.name == name) {
      return attribute.value;
    }
  }
  return std::nullopt;
}

absl::string_view* HtmlNode::MutableAttribute(absl::string_view name) {
  for (HtmlAttribute& attribute : attributes) {
    if (attribute.name == name) {
      return &attribute.value;
    }
  }
  return nullptr;
}

namespace {

// At least how many start tags `html` holds: every '<' followed by an ASCII letter (some are in
// comments or attribute values, which only makes the bound looser).
size_t StartTagBound(absl::string_view html) {
  size_t count = 0;
  const char* p = html.data();
  const char* const end = p + html.size();
  while (p < end) {
    const void* lt = std::memchr(p, '<', static_cast<size_t>(end - p));
    if (lt == nullptr) {
      break;
    }
    p = static_cast<const char*>(lt) + 1;
    if (p < end && IsAsciiAlpha(*p)) {
      ++count;
    }
  }
  return count;
}

}  // namespace

std::pair<std::string, size_t> CapNestingDepth(absl::string_view html, int max_depth) {
  // A start tag is dropped only when max_depth elements are open before it: a page with no more
  // start tags than that (most pages) is kept as it is without tokenizing it.
  if (StartTagBound(html) <= static_cast<size_t>(std::max(max_depth, 0))) {
    return {std::string(html), 0};
  }
  // The output is the input less the dropped tags: their [begin, end) ranges, in order.
  std::vector<std::pair<size_t, size_t>> dropped_tags;
  std::unordered_map<std::string, int> open;     // counted open elements by name
  std::unordered_map<std::string, int> dropped;  // dropped start tags awaiting their end tag
  int depth = 0;
  int foreign = 0;  // open svg + math
  size_t dropped_total = 0;
  size_t i = 0;
  const size_t n = html.size();
  while (i < n) {
    const size_t lt = html.find('<', i);
    if (lt == absl::string_view::npos) {
      break;
    }
    i = lt;
    if (html.substr(i, 4) == "<!--") {
      const size_t end = html.find("-->", i + 4);
      i = end == absl::string_view::npos ? n : end + 3;
      continue;
    }
    const bool end_tag = i + 1 < n && html[i + 1] == '/';
    const size_t name_start = i + (end_tag ? 2 : 1);
    if (name_start >= n || !IsAsciiAlpha(html[name_start])) {
      if (i + 1 < n && (html[i + 1] == '!' || html[i + 1] == '?')) {
        const size_t end = html.find('>', i);
        i = end == absl::string_view::npos ? n : end + 1;
      } else {
        ++i;
      }
      continue;
    }
    size_t name_end = name_start;
    while (name_end < n && !IsTagNameEnd(html[name_end])) {
      ++name_end;
    }
    const std::string name = absl::AsciiStrToLower(html.substr(name_start, name_end - name_start));
    // The end of the tag: the first '>' outside an attribute value quoted after '='.
    size_t j = name_end;
    char last_significant = 0;
    while (j < n && html[j] != '>') {
      const char c = html[j];
      if ((c == '"' || c == '\'') && last_significant == '=') {
        const size_t close = html.find(c, j + 1);
        j = close == absl::string_view::npos ? n : close + 1;
        last_significant = c;
        continue;
      }
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f') {
        last_significant = c;
      }
      ++j;
    }
    const bool self_closing = j < n && j > name_end && html[j - 1] == '/';
    const size_t tag_end = j < n ? j + 1 : n;
    const size_t tag_begin = i;
    i = tag_end;
    if (end_tag) {
      // (No lookup while nothing was dropped: every page under the cap.)
      if (auto it = dropped_total == 0 ? dropped.end() : dropped.find(name);
          it != dropped.end() && it->second > 0) {
        --it->second;
        dropped_tags.emplace_back(tag_begin, tag_end);
        continue;
      }
      if (auto it = open.find(name); it != open.end() && it->second > 0) {
        --it->second;
        --depth;
        if (name == "svg" || name == "math") {
          --foreign;
        }
      }
      continue;
    }
    if (name == "plaintext") {
      break;
    }
    if (IsRawTextElement(name)) {
      // Contents up to the matching end tag are text.
      size_t k = i;
      while (true) {
        const size_t close = html.find("</", k);
        if (close == absl::string_view::npos) {
          k = n;
          break;
        }
        if (absl::EqualsIgnoreCase(html.substr(close + 2, name.size()), name)) {
          k = close;
          break;
        }
        k = close + 2;
      }
      i = k;
      continue;
    }
    const bool closes_itself = IsVoidElement(name) || IsImplicitlyClosed(name) ||
                               (self_closing && foreign > 0 && !BreaksOutOfForeignContent(name));
    if (closes_itself) {
      continue;
    }
    if (depth >= max_depth) {
      ++dropped[name];
      ++dropped_total;
      dropped_tags.emplace_back(tag_begin, tag_end);
      continue;
    }
    ++depth;
    ++open[name];
    if (name == "svg" || name == "math") {
      ++foreign;
    }
  }
  std::string out;
  out.reserve(html.size());
  size_t kept_from = 0;
  for (const auto& [begin, end] : dropped_tags) {
    out.append(html.data() + kept_from, begin - kept_from);
    kept_from = end;
  }
  out.append(html.data() + kept_from, html.size() - kept_from);
  return {std::move(out), dropped_total};
}

HtmlDocument::HtmlDocument() : arena_(std::make_unique<DocumentArena>()) {}
HtmlDocument::HtmlDocument(HtmlDocument&&) noexcept = default;
HtmlDocument& HtmlDocument::operator=(HtmlDocument&&) noexcept = default;
HtmlDocument::~HtmlDocument() = default;

absl::string_view HtmlDocument::Keep(absl::string_view text) { return arena_->Copy(text); }

size_t HtmlDocument::memory_bytes() const { return arena_->bytes(); }

HtmlDocument HtmlDocument::Parse(absl::string_view html) {
  HtmlDocument document;
  DocumentArena& arena = *document.arena_;
  auto [capped, dropped] = CapNestingDepth(html, kMaxElementDepth);
  document.dropped_start_tags_ = dropped;
  document.root_ = new (arena.AllocateArray<HtmlNode>(1)) HtmlNode{};
  document.root_->kind = HtmlNode::Kind::kDocument;

  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;  // errors are not read; do not spend memory on them
  options.allocator = &DocumentArena::Allocate;
  options.deallocator = &DocumentArena::Free;
  options.userdata = &arena;
  const GumboOutput* output = gumbo_parse_with_options(&options, capped.data(), capped.size());
  if (output == nullptr || output->document == nullptr) {
    return document;
  }
  // Depth first with an explicit stack: (gumbo node, parent, room for the parent's children,
  // depth). A parent's array has room for all of gumbo's children; `children` grows over it as
  // they are built (templates and nodes past kMaxTreeDepth are left out).
  struct Pending {
    const GumboNode* node;
    HtmlNode* parent;
    HtmlNode** slots;
    int depth;
  };
  std::vector<Pending> stack;
  const auto push_children = [&](const GumboVector& children, HtmlNode* parent, int depth) {
    if (children.length == 0) {
      return;
    }
    auto** slots = arena.AllocateArray<HtmlNode*>(children.length);
    for (unsigned k = children.length; k > 0; --k) {
      stack.push_back({static_cast<const GumboNode*>(children.data[k - 1]), parent, slots, depth});
    }
  };
  push_children(output->document->v.document.children, document.root_, 1);
  while (!stack.empty()) {
    const Pending pending = stack.back();
    stack.pop_back();
    const GumboNode& node = *pending.node;
    HtmlNode::Kind kind;
    switch (node.type) {
      case GUMBO_NODE_TEXT:
      case GUMBO_NODE_WHITESPACE:
      case GUMBO_NODE_CDATA:
        kind = HtmlNode::Kind::kText;
        break;
      case GUMBO_NODE_COMMENT:
        kind = HtmlNode::Kind::kComment;
        break;
      case GUMBO_NODE_ELEMENT:
        if (pending.depth > kMaxTreeDepth) {
          continue;
        }
        kind = HtmlNode::Kind::kElement;
        break;
      case GUMBO_NODE_TEMPLATE:  // left out with its contents
      case GUMBO_NODE_DOCUMENT:
      default:
        continue;
    }
    auto* self = new (arena.AllocateArray<HtmlNode>(1)) HtmlNode{};
    self->kind = kind;
    if (kind != HtmlNode::Kind::kElement) {
      self->text = node.v.text.text;
    } else {
      const GumboElement& element = node.v.element;
      const std::optional<absl::string_view> known = KnownElementName(node);
      self->tag = known.has_value() ? *known : arena.Copy(UnknownElementName(node));
      self->html_namespace = element.tag_namespace == GUMBO_NAMESPACE_HTML;
      if (element.attributes.length > 0) {
        auto* attributes = arena.AllocateArray<HtmlAttribute>(element.attributes.length);
        for (unsigned k = 0; k < element.attributes.length; ++k) {
          const auto* attribute = static_cast<const GumboAttribute*>(element.attributes.data[k]);
          attributes[k] = {attribute->name, attribute->value};
        }
        self->attributes = {attributes, element.attributes.length};
        if (const std::optional<absl::string_view> cls = self->Attribute("class")) {
          self->classes = SplitClasses(*cls, arena);
        }
      }
      push_children(element.children, self, pending.depth + 1);
    }
    HtmlNode& parent = *pending.parent;
    pending.slots[parent.children.size()] = self;
    parent.children = {pending.slots, parent.children.size() + 1};
  }
  return document;
}

std::string SerializeChildren(const HtmlNode& node, size_t max_bytes) {
  std::string out;
  SerializeChildrenInto(node, out, 0, max_bytes);
  return out;
}

}  // namespace portcullis::verifier::html
