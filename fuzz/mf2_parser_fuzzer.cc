// The HTML document builder and microformats2 parser (verifier-service/src/html) on arbitrary
// bytes read as an HTML page fetched from a fixed URL. Invariants: parsing succeeds or stops at
// the output limit (kResourceExhausted), the result has "items", "rels" and "rel-urls" and
// serializes; the nesting cap holds on the built tree.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "boost/json/serialize.hpp"
#include "fuzz/fuzz_check.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace {

namespace html = portcullis::verifier::html;

// Depth of the element tree, iteratively (the tree may be deep).
size_t TreeDepth(const html::HtmlNode& root) {
  size_t deepest = 0;
  std::vector<std::pair<const html::HtmlNode*, size_t>> stack = {{&root, 0}};
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    deepest = std::max(deepest, depth);
    for (const auto& child : node->children) {
      stack.emplace_back(child, depth + 1);
    }
  }
  return deepest;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view page(reinterpret_cast<const char*>(data), size);
  html::HtmlDocument document = html::HtmlDocument::Parse(page);
  // kMaxElementDepth plus the document node and a few implied elements (html, body, table parts).
  FUZZ_CHECK(TreeDepth(document.root()) <= html::kMaxElementDepth + 16,
             std::to_string(TreeDepth(document.root())));
  (void)html::SerializeChildren(document.root(), 1 << 20);

  html::Mf2Limits limits;
  limits.max_output_bytes = 4 << 20;
  const auto parsed = html::ParseMf2(page, "https://example.com/dir/page?q=1", limits);
  if (!parsed.ok()) {
    FUZZ_CHECK(absl::IsResourceExhausted(parsed.status()), parsed.status().ToString());
    return 0;
  }
  FUZZ_CHECK(parsed->contains("items") && parsed->contains("rels") && parsed->contains("rel-urls"),
             "result without items/rels/rel-urls");
  (void)boost::json::serialize(*parsed);
  return 0;
}
