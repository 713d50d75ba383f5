#pragma once

// An HTML5 document parsed by gumbo, and a small tree over gumbo's output that the rest of html/
// reads.
//
// Pure: no I/O. The caller bounds the input size (the fetcher caps bodies at 1 MiB); this file
// bounds what that size can cost. Gumbo's tree construction is quadratic in nesting depth and its
// tree teardown is recursive, so a hostile page of a million nested start tags would take minutes
// or overflow the stack: before gumbo sees the input, start tags that would nest deeper than
// kMaxElementDepth (and their end tags) are dropped; their text stays. The tree is built
// iteratively and never deeper than kMaxElementDepth + a few implied elements.
//
// Nothing is copied out of gumbo's output: the document keeps gumbo's per-page memory, and the
// tree's nodes, names, texts and attribute values are views into it (or into gumbo's static tag
// names; an unknown tag's name, which gumbo has only in the page's text, is copied into it). The
// nodes and their arrays live in that same memory, which is freed as a whole with the document.
//
// `<template>` elements and their contents are left out of the tree (the microformats2 suite
// ignores them, as a browser's DOM keeps them out of the document's children).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

struct GumboInternalNode;  // gumbo.h's GumboNode

namespace portcullis::verifier::html {

// Start tags nesting deeper than this are dropped before parsing. Browsers cap the DOM depth the
// parser builds at 512 too (Blink's kMaximumHTMLParserDOMTreeDepth).
inline constexpr int kMaxElementDepth = 512;

struct HtmlAttribute {
  absl::string_view name;  // lowercase
  absl::string_view value;
};

// A node of HtmlDocument's tree. Every view points into memory the document owns (or at static
// names): a node lives as long as its document.
struct HtmlNode {
  enum class Kind { kDocument, kElement, kText, kComment };

  Kind kind = Kind::kElement;
  // False for SVG and MathML elements (serialization rules differ).
  bool html_namespace = true;
  // Free for a pass over the tree to note what it found per element, so that later walks read a
  // bit instead of asking again (the mf2 parser marks microformats and properties). 0 after Parse.
  uint8_t marks = 0;
  // Element name, lowercase ("div", "my-element"; SVG names in their camelCase, "foreignObject").
  absl::string_view tag;
  // Attributes in document order. Values may be rewritten by later passes (the mf2 parser resolves
  // href/src against the base URL, as the reference parsers do) with text HtmlDocument::Keep holds.
  absl::Span<HtmlAttribute> attributes;
  // The class attribute split on ASCII whitespace (the DOM's classList), in order.
  absl::Span<const absl::string_view> classes;
  // Text of a text or comment node.
  absl::string_view text;
  absl::Span<HtmlNode* const> children;

  bool is_element() const { return kind == Kind::kElement; }
  // The attribute's value, or nullopt when absent.
  std::optional<absl::string_view> Attribute(absl::string_view name) const;
};

class DocumentArena;  // the memory of one document: gumbo's output and the tree

class HtmlDocument {
 public:
  // Parses `html` (any bytes; gumbo reads it as UTF-8 and replaces what is not). Never fails:
  // garbage in gives a document with (at least) html, head and body.
  static HtmlDocument Parse(absl::string_view html);

  HtmlDocument(HtmlDocument&&) noexcept;
  HtmlDocument& operator=(HtmlDocument&&) noexcept;
  ~HtmlDocument();

  const HtmlNode& root() const { return *root_; }
  HtmlNode& mutable_root() { return *root_; }
  // A copy of `text` that lives as long as the document: what a rewritten attribute points at.
  absl::string_view Keep(absl::string_view text);
  // How many start tags were dropped for nesting deeper than kMaxElementDepth.
  size_t dropped_start_tags() const { return dropped_start_tags_; }
  // The memory the document holds: gumbo's parse and the tree over it.
  size_t memory_bytes() const;

 private:
  HtmlDocument();

  std::unique_ptr<DocumentArena> arena_;
  HtmlNode* root_ = nullptr;
  size_t dropped_start_tags_ = 0;
};

// Part of a parsed document read as an HTML fragment: the children of `parent`, less the first
// `trim_front` bytes of the leading text and the last `trim_back` bytes of the trailing text (the
// whitespace an mf2 e-* `html` value trims from SerializeChildren). Points into the document.
struct HtmlFragment {
  const HtmlNode* parent = nullptr;
  size_t trim_front = 0;
  size_t trim_back = 0;
};

// The input with start tags that would nest deeper than `max_depth` removed, together with the
// end tags that would close them, and how many were removed. A cheap tokenizer that knows comments,
// raw-text elements, quoted attributes, void elements and the elements HTML closes implicitly;
// everything it does not recognise is copied unchanged. Exposed for tests.
std::pair<std::string, size_t> CapNestingDepth(absl::string_view html, int max_depth);

// Serializes the children of `node` as the HTML fragment serialization algorithm does (innerHTML).
// Stops early (with a truncated result) once longer than `max_bytes`.
std::string SerializeChildren(const HtmlNode& node, size_t max_bytes = SIZE_MAX);

// The name of a gumbo element as the tree above spells it (`tag`): gumbo's name for a known tag,
// SVG names in their camelCase, an unknown tag's name as the tokenizer reads it.
std::string GumboElementName(const GumboInternalNode& element);

}  // namespace portcullis::verifier::html
