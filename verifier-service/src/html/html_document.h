#pragma once

// An HTML5 document parsed by gumbo, copied into a small owned tree the rest of html/ reads.
//
// Pure: no I/O. The caller bounds the input size (the fetcher caps bodies at 1 MiB); this file
// bounds what that size can cost. Gumbo's tree construction is quadratic in nesting depth and its
// tree teardown is recursive, so a hostile page of a million nested start tags would take minutes
// or overflow the stack: before gumbo sees the input, start tags that would nest deeper than
// kMaxElementDepth (and their end tags) are dropped; their text stays. The owned tree is built
// iteratively and never deeper than kMaxElementDepth + a few implied elements.
//
// `<template>` elements and their contents are left out of the tree (the microformats2 suite
// ignores them, as a browser's DOM keeps them out of the document's children).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

struct GumboInternalNode;  // gumbo.h's GumboNode

namespace portcullis::verifier::html {

// Start tags nesting deeper than this are dropped before parsing. Browsers cap the DOM depth the
// parser builds at 512 too (Blink's kMaximumHTMLParserDOMTreeDepth).
inline constexpr int kMaxElementDepth = 512;

struct HtmlNode {
  enum class Kind { kDocument, kElement, kText, kComment };

  Kind kind = Kind::kElement;
  // Element name, lowercase ("div", "my-element"; SVG names in their camelCase, "foreignObject").
  std::string tag;
  // False for SVG and MathML elements (serialization rules differ).
  bool html_namespace = true;
  // Attributes in document order, names lowercase. Values may be rewritten by later passes (the
  // mf2 parser resolves href/src against the base URL, as the reference parsers do).
  std::vector<std::pair<std::string, std::string>> attributes;
  // The class attribute split on ASCII whitespace (the DOM's classList), in order.
  std::vector<std::string> classes;
  // Text of a text or comment node.
  std::string text;
  std::vector<std::unique_ptr<HtmlNode>> children;

  bool is_element() const { return kind == Kind::kElement; }
  // The attribute's value, or nullptr when absent.
  const std::string* Attribute(absl::string_view name) const;
  std::string* MutableAttribute(absl::string_view name);
};

class HtmlDocument {
 public:
  // Parses `html` (any bytes; gumbo reads it as UTF-8 and replaces what is not). Never fails:
  // garbage in gives a document with (at least) html, head and body.
  static HtmlDocument Parse(absl::string_view html);

  const HtmlNode& root() const { return *root_; }
  HtmlNode& mutable_root() { return *root_; }
  // How many start tags were dropped for nesting deeper than kMaxElementDepth.
  size_t dropped_start_tags() const { return dropped_start_tags_; }
  // The memory gumbo's parse took (its per-page arena, freed when Parse returns).
  size_t parser_bytes() const { return parser_bytes_; }

 private:
  std::unique_ptr<HtmlNode> root_;
  size_t dropped_start_tags_ = 0;
  size_t parser_bytes_ = 0;
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
