#include "verifier-service/src/html/html_document.h"

#include <gumbo.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace portcullis::verifier::html {
namespace {

// The owned tree never gets deeper than this, whatever gumbo built (a second belt behind
// CapNestingDepth; gumbo adds a few implied levels such as html, body, tbody).
constexpr int kMaxTreeDepth = kMaxElementDepth + 64;

// Gumbo's memory for one parse: small blocks from a bump allocator over chunks that are all freed
// together once the tree has been copied, instead of one malloc and one free per token, buffer
// growth and node (the profile: malloc/free ~18% of the verifier), and no walk of gumbo's
// tree to free it. A free gives back a small block only when it is the most recent allocation
// (gumbo grows a buffer by allocating the larger one, copying and freeing the old); large blocks
// (the buffers that grow with the page: long texts, the children of a long body) come from malloc
// and are freed as gumbo frees them, so the arena's waste stays bounded (parser_bytes; the test
// keeps it near what malloc would hold at the end of the parse).
class GumboArena {
 public:
  GumboArena() = default;
  GumboArena(const GumboArena&) = delete;
  GumboArena& operator=(const GumboArena&) = delete;
  ~GumboArena() {
    for (const auto& [block, size] : large_) {
      std::free(block);
    }
  }

  static void* Allocate(void* arena, size_t size) {
    return static_cast<GumboArena*>(arena)->Allocate(size);
  }
  static void Free(void* arena, void* pointer) { static_cast<GumboArena*>(arena)->Free(pointer); }

  // The most memory the parse held: chunks plus the peak of the large blocks.
  size_t peak_bytes() const { return chunk_bytes_ + large_peak_; }

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
        large_peak_ = std::max(large_peak_, large_bytes_);
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
  size_t large_peak_ = 0;
};

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

void AppendTo(std::string& out, absl::string_view text) { out.append(text.data(), text.size()); }

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
  for (const std::unique_ptr<HtmlNode>& child : node.children) {
    if (out.size() > max_bytes) {
      return;
    }
    switch (child->kind) {
      case HtmlNode::Kind::kText:
        if (raw_text_parent) {
          out += child->text;
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

}  // namespace

std::string GumboElementName(const GumboNode& node) {
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
  // An unknown tag's name is only in its original text, which gumbo starts at any "</>" it
  // ignored just before the tag ("</><x-y>" is the original text of <x-y>): the name follows them.
  GumboStringPiece piece = element.original_tag;
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

const std::string* HtmlNode::Attribute(absl::string_view name) const {
  for (const auto& [key, value] : attributes) {
    if (key == name) {
      return &value;
    }
  }
  return nullptr;
}

std::string* HtmlNode::MutableAttribute(absl::string_view name) {
  for (auto& [key, value] : attributes) {
    if (key == name) {
      return &value;
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
  std::string out;
  out.reserve(html.size());
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
      AppendTo(out, html.substr(i));
      break;
    }
    AppendTo(out, html.substr(i, lt - i));
    i = lt;
    if (html.substr(i, 4) == "<!--") {
      size_t end = html.find("-->", i + 4);
      end = end == absl::string_view::npos ? n : end + 3;
      AppendTo(out, html.substr(i, end - i));
      i = end;
      continue;
    }
    const bool end_tag = i + 1 < n && html[i + 1] == '/';
    const size_t name_start = i + (end_tag ? 2 : 1);
    if (name_start >= n || !IsAsciiAlpha(html[name_start])) {
      if (i + 1 < n && (html[i + 1] == '!' || html[i + 1] == '?')) {
        size_t end = html.find('>', i);
        end = end == absl::string_view::npos ? n : end + 1;
        AppendTo(out, html.substr(i, end - i));
        i = end;
      } else {
        out += '<';
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
    const absl::string_view tag = html.substr(i, tag_end - i);
    i = tag_end;
    if (end_tag) {
      // (No lookup while nothing was dropped: every page under the cap.)
      if (auto it = dropped_total == 0 ? dropped.end() : dropped.find(name);
          it != dropped.end() && it->second > 0) {
        --it->second;
        continue;
      }
      if (auto it = open.find(name); it != open.end() && it->second > 0) {
        --it->second;
        --depth;
        if (name == "svg" || name == "math") {
          --foreign;
        }
      }
      AppendTo(out, tag);
      continue;
    }
    if (name == "plaintext") {
      AppendTo(out, tag);
      AppendTo(out, html.substr(i));
      break;
    }
    if (IsRawTextElement(name)) {
      AppendTo(out, tag);
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
      AppendTo(out, html.substr(i, k - i));
      i = k;
      continue;
    }
    const bool closes_itself = IsVoidElement(name) || IsImplicitlyClosed(name) ||
                               (self_closing && foreign > 0 && !BreaksOutOfForeignContent(name));
    if (closes_itself) {
      AppendTo(out, tag);
      continue;
    }
    if (depth >= max_depth) {
      ++dropped[name];
      ++dropped_total;
      continue;
    }
    ++depth;
    ++open[name];
    if (name == "svg" || name == "math") {
      ++foreign;
    }
    AppendTo(out, tag);
  }
  return {std::move(out), dropped_total};
}

HtmlDocument HtmlDocument::Parse(absl::string_view html) {
  HtmlDocument document;
  auto [capped, dropped] = CapNestingDepth(html, kMaxElementDepth);
  document.dropped_start_tags_ = dropped;
  document.root_ = std::make_unique<HtmlNode>();
  document.root_->kind = HtmlNode::Kind::kDocument;

  GumboArena arena;  // frees gumbo's tree after the copy, without walking it
  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;  // errors are not read; do not spend memory on them
  options.allocator = &GumboArena::Allocate;
  options.deallocator = &GumboArena::Free;
  options.userdata = &arena;
  const GumboOutput* output = gumbo_parse_with_options(&options, capped.data(), capped.size());
  if (output == nullptr || output->document == nullptr) {
    return document;
  }
  // Depth-first copy with an explicit stack: (gumbo node, owned parent, depth).
  struct Pending {
    const GumboNode* node;
    HtmlNode* parent;
    int depth;
  };
  std::vector<Pending> stack;
  const GumboVector& top = output->document->v.document.children;
  for (unsigned k = top.length; k > 0; --k) {
    stack.push_back({static_cast<const GumboNode*>(top.data[k - 1]), document.root_.get(), 1});
  }
  while (!stack.empty()) {
    const Pending pending = stack.back();
    stack.pop_back();
    const GumboNode& node = *pending.node;
    auto owned = std::make_unique<HtmlNode>();
    switch (node.type) {
      case GUMBO_NODE_TEXT:
      case GUMBO_NODE_WHITESPACE:
      case GUMBO_NODE_CDATA:
        owned->kind = HtmlNode::Kind::kText;
        owned->text = node.v.text.text;
        break;
      case GUMBO_NODE_COMMENT:
        owned->kind = HtmlNode::Kind::kComment;
        owned->text = node.v.text.text;
        break;
      case GUMBO_NODE_ELEMENT: {
        if (pending.depth > kMaxTreeDepth) {
          continue;
        }
        owned->kind = HtmlNode::Kind::kElement;
        owned->tag = GumboElementName(node);
        owned->html_namespace = node.v.element.tag_namespace == GUMBO_NAMESPACE_HTML;
        const GumboVector& attributes = node.v.element.attributes;
        owned->attributes.reserve(attributes.length);
        for (unsigned k = 0; k < attributes.length; ++k) {
          const auto* attribute = static_cast<const GumboAttribute*>(attributes.data[k]);
          owned->attributes.emplace_back(attribute->name, attribute->value);
        }
        if (const std::string* cls = owned->Attribute("class"); cls != nullptr) {
          owned->classes = absl::StrSplit(*cls, absl::ByAnyChar(" \t\n\r\f"), absl::SkipEmpty());
        }
        const GumboVector& children = node.v.element.children;
        owned->children.reserve(children.length);  // one allocation, not log2(n) regrowths
        HtmlNode* self = owned.get();
        for (unsigned k = children.length; k > 0; --k) {
          stack.push_back(
              {static_cast<const GumboNode*>(children.data[k - 1]), self, pending.depth + 1});
        }
        break;
      }
      case GUMBO_NODE_TEMPLATE:  // left out with its contents
      case GUMBO_NODE_DOCUMENT:
        continue;
    }
    pending.parent->children.push_back(std::move(owned));
  }
  document.parser_bytes_ = arena.peak_bytes();
  return document;
}

std::string SerializeChildren(const HtmlNode& node, size_t max_bytes) {
  std::string out;
  SerializeChildrenInto(node, out, 0, max_bytes);
  return out;
}

}  // namespace portcullis::verifier::html
