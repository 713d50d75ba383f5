#include "verifier-service/src/html/html_document.h"

#include <gumbo.h>
#include <sanitizer/asan_interface.h>

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
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"

namespace portcullis::verifier::html {

namespace {

// Freed chunks of document arenas, kept for the next document instead of going back to malloc: a
// chunk handed back to malloc is handed on to the kernel (they are large), and the next page paid
// a page fault for every 4 KiB of it again (measured: ~700 faults and a fifth of the parse's time
// per 100 KiB page). Process-wide, since pages are parsed on whichever thread finished a fetch;
// holds at most kMaxPooledBytes, beyond which chunks are freed.
class ChunkPool {
 public:
  using Chunk = std::unique_ptr<std::max_align_t[]>;
  static constexpr size_t kMaxPooledBytes = size_t{16} << 20;

  static ChunkPool& Instance() {
    static auto* const pool = new ChunkPool();
    return *pool;
  }

  // A chunk of `bytes` (a multiple of alignof(max_align_t)), pooled or new; contents undefined.
  Chunk Take(size_t bytes) {
    {
      absl::MutexLock lock(&mu_);
      if (const auto it = free_.find(bytes); it != free_.end() && !it->second.empty()) {
        Chunk chunk = std::move(it->second.back());
        it->second.pop_back();
        pooled_bytes_ -= bytes;
        ASAN_UNPOISON_MEMORY_REGION(chunk.get(), bytes);
        return chunk;
      }
    }
    return std::make_unique_for_overwrite<std::max_align_t[]>(bytes / alignof(std::max_align_t));
  }

  // Takes `chunk` (of `bytes`) back: pooled while there is room, else freed.
  void Give(Chunk chunk, size_t bytes) {
    absl::MutexLock lock(&mu_);
    if (pooled_bytes_ + bytes <= kMaxPooledBytes) {
      // (Under AddressSanitizer a pooled chunk stays poisoned: a view into a freed document is
      // still reported.)
      ASAN_POISON_MEMORY_REGION(chunk.get(), bytes);
      pooled_bytes_ += bytes;
      free_[bytes].push_back(std::move(chunk));
    }
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<size_t, std::vector<Chunk>> free_ ABSL_GUARDED_BY(mu_);  // by size
  size_t pooled_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

// The memory of one document: gumbo's parse and the tree over it, as small blocks from a bump
// allocator over chunks that are all freed together with the document, instead of one malloc and
// one free per token, buffer growth and node (the profile: malloc/free ~18% of the
// verifier), and no walk of gumbo's tree to free it. A free gives back a small block only when it
// is the most recent allocation (gumbo grows a buffer by allocating the larger one, copying and
// freeing the old); large blocks (the buffers that grow with the page: long texts, the children of
// a long body) come from malloc and are freed as gumbo frees them, so the arena's waste stays
// bounded (memory_bytes; the test keeps it near what malloc would hold). Chunks come from and go
// back to ChunkPool.
class DocumentArena {
 public:
  DocumentArena() = default;
  DocumentArena(const DocumentArena&) = delete;
  DocumentArena& operator=(const DocumentArena&) = delete;
  ~DocumentArena() {
    for (const auto& [block, size] : large_) {
      std::free(block);
    }
    ChunkPool& pool = ChunkPool::Instance();
    for (auto& [chunk, bytes] : chunks_) {
      pool.Give(std::move(chunk), bytes);
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

  // The common case inline, the rare ones out of line: gumbo calls this for every token.
  void* Allocate(size_t size) {
    if (size >= kLarge) [[unlikely]] {
      return AllocateLarge(size);
    }
    size = (std::max<size_t>(size, 1) + kAlignment - 1) & ~(kAlignment - 1);
    if (size > end_ - next_) [[unlikely]] {
      StartChunk();
    }
    last_ = next_;
    next_ += size;
    return reinterpret_cast<void*>(last_);
  }

  ABSL_ATTRIBUTE_NOINLINE void* AllocateLarge(size_t size) {
    void* block = std::malloc(size);
    if (block != nullptr) {
      large_.emplace(block, size);
      large_bytes_ += size;
    }
    return block;
  }

  // A fresh chunk, twice the last (sizes stay below kLarge, so one always has room).
  ABSL_ATTRIBUTE_NOINLINE void StartChunk() {
    const size_t bytes = chunks_.empty() ? kFirstChunk : std::min(2 * last_chunk_, kLargestChunk);
    chunks_.emplace_back(ChunkPool::Instance().Take(bytes), bytes);
    next_ = reinterpret_cast<uintptr_t>(chunks_.back().first.get());
    end_ = next_ + bytes;
    last_chunk_ = bytes;
    chunk_bytes_ += bytes;
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

  std::vector<std::pair<ChunkPool::Chunk, size_t>> chunks_;  // with their sizes
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

// What the depth cap's tokenizer (and the serializer) need to know of an element by its name.
enum TagTrait : uint8_t {
  kVoid = 1,
  // The tokenizer reads the contents as text up to the matching end tag.
  kRawText = 2,
  // The tree builder closes it by itself when a sibling starts (or merges, or ignores it when
  // nested), so that a run of them does not nest.
  kImplicitlyClosed = 4,
  // An HTML element that ends foreign (SVG, MathML) content, where "/>" otherwise self-closes.
  kBreaksOutOfForeignContent = 8,
  kForeignRoot = 16,  // svg, math
};

constexpr size_t kMaxKnownTags = 160;

// An element name the table below knows: its traits, and a small number for counting by name.
struct KnownTag {
  uint8_t traits = 0;
  uint8_t id = 0;
};

// The known tags: an open-addressed table over a cheap hash of the name, compared exactly on a
// hit (the tokenizer looks up every tag, the serializer every element).
class KnownTagTable {
 public:
  KnownTagTable() {
    Add(kVoid, {"area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img",
                "input", "keygen", "link", "meta", "param", "source", "track", "wbr"});
    Add(kRawText, {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
                   "noscript"});
    Add(kImplicitlyClosed, {"p",     "li",    "dt",    "dd",       "td",     "th",       "tr",
                            "tbody", "thead", "tfoot", "colgroup", "option", "optgroup", "rb",
                            "rt",    "rtc",   "rp",    "html",     "head",   "body",     "frameset"});
    Add(kBreaksOutOfForeignContent,
        {"b",     "big",     "blockquote", "body", "br",     "center", "code", "dd",
         "div",   "dl",      "dt",         "em",   "embed",  "font",   "h1",   "h2",
         "h3",    "h4",      "h5",         "h6",   "head",   "hr",     "i",    "img",
         "li",    "listing", "menu",       "meta", "nobr",   "ol",     "p",    "pre",
         "ruby",  "s",       "small",      "span", "strong", "strike", "sub",  "sup",
         "table", "tt",      "u",          "ul",   "var"});
    Add(kForeignRoot, {"svg", "math"});
    // Common elements without traits, so that they are counted without a lookup by string.
    Add(0, {"a",      "abbr",   "article", "aside",  "button",  "cite",  "data",   "del",
            "details", "dfn",   "figure",  "figcaption", "footer", "form", "header", "ins",
            "label",  "main",   "mark",    "nav",    "object",  "q",     "section", "select",
            "summary", "time",  "video"});
  }

  const KnownTag* Find(absl::string_view name) const {
    if (name.empty()) {
      return nullptr;
    }
    for (size_t i = Hash(name);; i = (i + 1) % kSlots) {
      const Slot& slot = slots_[i];
      if (slot.name.empty()) {
        return nullptr;
      }
      if (slot.name == name) {
        return &slot.tag;
      }
    }
  }

 private:
  static constexpr size_t kSlots = 512;  // a quarter full at most: short probes
  struct Slot {
    absl::string_view name;  // empty: free
    KnownTag tag;
  };

  static size_t Hash(absl::string_view name) {
    size_t hash = name.size();
    hash = hash * 33 + static_cast<unsigned char>(name.front());
    hash = hash * 33 + static_cast<unsigned char>(name[name.size() / 2]);
    hash = hash * 33 + static_cast<unsigned char>(name.back());
    return hash % kSlots;
  }

  void Add(uint8_t trait, std::initializer_list<absl::string_view> names) {
    for (absl::string_view name : names) {
      size_t i = Hash(name);
      while (!slots_[i].name.empty() && slots_[i].name != name) {
        i = (i + 1) % kSlots;
      }
      Slot& slot = slots_[i];
      if (slot.name.empty()) {
        slot.name = name;
        slot.tag.id = static_cast<uint8_t>(count_++);
      }
      slot.tag.traits |= trait;
    }
    if (count_ > kMaxKnownTags || 4 * count_ > kSlots) {
      std::abort();  // (a list above grew: raise kMaxKnownTags and kSlots)
    }
  }

  std::array<Slot, kSlots> slots_{};
  size_t count_ = 0;
};

// The known tag named `lowercase_name`, or nullptr.
const KnownTag* FindKnownTag(absl::string_view lowercase_name) {
  static const auto* const kTable = new KnownTagTable();
  return kTable->Find(lowercase_name);
}

uint8_t TagTraits(absl::string_view lowercase_name) {
  const KnownTag* known = FindKnownTag(lowercase_name);
  return known == nullptr ? 0 : known->traits;
}

bool IsVoidElement(absl::string_view name) { return (TagTraits(name) & kVoid) != 0; }

bool IsOneOf(absl::string_view name, std::initializer_list<absl::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool IsHtmlSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool IsTagNameEnd(char c) { return IsHtmlSpace(c) || c == '/' || c == '>'; }

void EscapeInto(absl::string_view text, bool attribute, std::string& out) {
  size_t plain_from = 0;  // the characters since the last escape are appended as one run
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    absl::string_view escaped;
    size_t length = 1;
    if (c == '&') {
      escaped = "&amp;";
    } else if (c == '\xC2' && i + 1 < text.size() && text[i + 1] == '\xA0') {
      escaped = "&nbsp;";
      length = 2;
    } else if (attribute && c == '"') {
      escaped = "&quot;";
    } else if (!attribute && c == '<') {
      escaped = "&lt;";
    } else if (!attribute && c == '>') {
      escaped = "&gt;";
    } else {
      continue;
    }
    out.append(text.data() + plain_from, i - plain_from);
    out.append(escaped.data(), escaped.size());
    i += length - 1;
    plain_from = i + 1;
  }
  out.append(text.data() + plain_from, text.size() - plain_from);
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
  if (element.tag != GUMBO_TAG_UNKNOWN && element.tag < GUMBO_TAG_LAST) {
    // gumbo's names as views, measured once (not a strlen per element).
    static const auto* const kNames = [] {
      auto* names = new std::array<absl::string_view, GUMBO_TAG_LAST>();
      for (int tag = 0; tag < GUMBO_TAG_LAST; ++tag) {
        (*names)[tag] = gumbo_normalized_tagname(static_cast<GumboTag>(tag));
      }
      return names;
    }();
    return (*kNames)[element.tag];
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

// The class attribute split on ASCII whitespace (the DOM's classList), in `arena`: counted, then
// copied (no vector per element).
absl::Span<const absl::string_view> SplitClasses(absl::string_view value, DocumentArena& arena) {
  const auto for_each_class = [value](auto&& take) {
    size_t i = 0;
    while (true) {
      while (i < value.size() && IsHtmlSpace(value[i])) {
        ++i;
      }
      if (i == value.size()) {
        return;
      }
      const size_t start = i;
      while (i < value.size() && !IsHtmlSpace(value[i])) {
        ++i;
      }
      take(value.substr(start, i - start));
    }
  };
  size_t count = 0;
  for_each_class([&count](absl::string_view) { ++count; });
  if (count == 0) {
    return {};
  }
  auto* classes = arena.AllocateArray<absl::string_view>(count);
  size_t k = 0;
  for_each_class([&](absl::string_view cls) { classes[k++] = cls; });
  return {classes, count};
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

namespace {

// The tags CapNestingDepth drops: their [begin, end) ranges in order, and how many are start tags.
struct DeepTags {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t start_tags = 0;
};

// Counts by element name: known names in an array, others in a map.
class CountsByName {
 public:
  // The count for `name` (`known`: FindKnownTag(name)), or nullptr when there is none yet.
  int* Find(const KnownTag* known, absl::string_view name) {
    if (known != nullptr) {
      return &known_[known->id];
    }
    const auto it = other_.find(name);
    return it == other_.end() ? nullptr : &it->second;
  }
  int& Get(const KnownTag* known, absl::string_view name) {
    return known != nullptr ? known_[known->id] : other_[name];
  }

 private:
  std::array<int, kMaxKnownTags> known_{};
  absl::flat_hash_map<std::string, int> other_;
};

DeepTags FindDeepTags(absl::string_view html, int max_depth) {
  DeepTags deep;
  // A start tag is dropped only when max_depth elements are open before it: a page with no more
  // start tags than that (most pages) is kept as it is without tokenizing it.
  if (StartTagBound(html) <= static_cast<size_t>(std::max(max_depth, 0))) {
    return deep;
  }
  CountsByName open;     // counted open elements
  CountsByName dropped;  // dropped start tags awaiting their end tag
  std::string name;  // the current tag's name, lowercase (reused: no allocation per tag)
  int depth = 0;
  int foreign = 0;  // open svg + math
  size_t i = 0;
  const size_t n = html.size();
  while (i < n) {
    const void* lt = std::memchr(html.data() + i, '<', n - i);
    if (lt == nullptr) {
      break;
    }
    i = static_cast<const char*>(lt) - html.data();
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
    name.assign(html.data() + name_start, name_end - name_start);
    absl::AsciiStrToLower(&name);
    // The end of the tag: the first '>' outside an attribute value quoted after '='.
    size_t j = name_end;
    char last_significant = 0;
    while (j < n && html[j] != '>') {
      const char c = html[j];
      if ((c == '"' || c == '\'') && last_significant == '=') {
        const void* close = std::memchr(html.data() + j + 1, c, n - j - 1);
        j = close == nullptr ? n : static_cast<const char*>(close) - html.data() + 1;
        last_significant = c;
        continue;
      }
      if (!IsHtmlSpace(c)) {
        last_significant = c;
      }
      ++j;
    }
    const bool self_closing = j < n && j > name_end && html[j - 1] == '/';
    const size_t tag_end = j < n ? j + 1 : n;
    const size_t tag_begin = i;
    i = tag_end;
    const KnownTag* known = FindKnownTag(name);
    const uint8_t traits = known == nullptr ? 0 : known->traits;
    if (end_tag) {
      // (No lookup while nothing was dropped: every page under the cap.)
      if (int* count = deep.start_tags == 0 ? nullptr : dropped.Find(known, name);
          count != nullptr && *count > 0) {
        --*count;
        deep.ranges.emplace_back(tag_begin, tag_end);
        continue;
      }
      if (int* count = open.Find(known, name); count != nullptr && *count > 0) {
        --*count;
        --depth;
        if (traits & kForeignRoot) {
          --foreign;
        }
      }
      continue;
    }
    if (name == "plaintext") {
      break;
    }
    if (traits & kRawText) {
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
    const bool closes_itself =
        (traits & (kVoid | kImplicitlyClosed)) != 0 ||
        (self_closing && foreign > 0 && (traits & kBreaksOutOfForeignContent) == 0);
    if (closes_itself) {
      continue;
    }
    if (depth >= max_depth) {
      ++dropped.Get(known, name);
      ++deep.start_tags;
      deep.ranges.emplace_back(tag_begin, tag_end);
      continue;
    }
    ++depth;
    ++open.Get(known, name);
    if (traits & kForeignRoot) {
      ++foreign;
    }
  }
  return deep;
}

// `html` less the `ranges` it holds.
std::string WithoutRanges(absl::string_view html, absl::Span<const std::pair<size_t, size_t>> ranges) {
  std::string out;
  out.reserve(html.size());
  size_t kept_from = 0;
  for (const auto& [begin, end] : ranges) {
    out.append(html.data() + kept_from, begin - kept_from);
    kept_from = end;
  }
  out.append(html.data() + kept_from, html.size() - kept_from);
  return out;
}

}  // namespace

std::pair<std::string, size_t> CapNestingDepth(absl::string_view html, int max_depth) {
  const DeepTags deep = FindDeepTags(html, max_depth);
  return {WithoutRanges(html, deep.ranges), deep.start_tags};
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
  // The page as it is, unless some tags nest too deep (no copy of every page).
  const DeepTags deep = FindDeepTags(html, kMaxElementDepth);
  std::string capped;
  if (!deep.ranges.empty()) {
    capped = WithoutRanges(html, deep.ranges);
    html = capped;
  }
  document.dropped_start_tags_ = deep.start_tags;
  document.root_ = new (arena.AllocateArray<HtmlNode>(1)) HtmlNode{};
  document.root_->kind = HtmlNode::Kind::kDocument;

  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;  // errors are not read; do not spend memory on them
  options.allocator = &DocumentArena::Allocate;
  options.deallocator = &DocumentArena::Free;
  options.userdata = &arena;
  const GumboOutput* output = gumbo_parse_with_options(&options, html.data(), html.size());
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
