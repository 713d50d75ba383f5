// The allow-list HTML sanitizer (verifier-service/src/html/html_sanitizer) on arbitrary bytes as
// an e-content fragment. Invariants: the output stays within the output limit (plus the closing
// tags of what is open); re-parsed as a browser would, it holds only allowed elements with their
// allowed attributes, and every URL in it is absolute http(s) (or mailto for href); sanitizing
// the output again changes nothing when nothing was cut.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/url/url.h"
#include "fuzz/fuzz_check.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/html_sanitizer.h"

namespace {

namespace html = portcullis::verifier::html;

const std::set<std::string, std::less<>>& AllowedElements() {
  static const auto* elements = new std::set<std::string, std::less<>>{
      "a",    "abbr", "b",      "bdi",   "blockquote", "br",    "caption", "cite", "code",
      "dd",   "del",  "dfn",    "div",   "dl",         "dt",    "em",      "figcaption",
      "figure", "h1", "h2",     "h3",    "h4",         "h5",    "h6",      "hr",   "i",
      "img",  "ins",  "kbd",    "li",    "mark",       "ol",    "p",       "pre",  "q",
      "s",    "samp", "small",  "span",  "strong",     "sub",   "sup",     "table", "tbody",
      "td",   "tfoot", "th",    "thead", "time",       "tr",    "u",       "ul",   "var",
      "wbr",
      // What re-parsing a fragment as a whole document adds around it.
      "html", "head", "body"};
  return *elements;
}

bool AttributeAllowed(absl::string_view tag, absl::string_view name) {
  if (name == "title") return true;
  if (tag == "a") return name == "href" || name == "rel";
  if (tag == "img") return name == "src" || name == "alt" || name == "width" || name == "height";
  if (name == "cite") return tag == "blockquote" || tag == "q" || tag == "del" || tag == "ins";
  if (name == "datetime") return tag == "time" || tag == "del" || tag == "ins";
  if (name == "colspan" || name == "rowspan") return tag == "td" || tag == "th";
  if (name == "start") return tag == "ol";
  return false;
}

void CheckTree(const html::HtmlNode& root, const std::string& output) {
  std::vector<const html::HtmlNode*> stack = {&root};
  while (!stack.empty()) {
    const html::HtmlNode* node = stack.back();
    stack.pop_back();
    if (node->kind == html::HtmlNode::Kind::kComment) {
      FUZZ_CHECK(false, "comment in output: " + output);
    }
    if (node->is_element()) {
      FUZZ_CHECK(node->html_namespace, absl::StrCat("foreign element ", node->tag, " in: ", output));
      FUZZ_CHECK(AllowedElements().count(node->tag) == 1,
                 absl::StrCat(node->tag, " in: ", output));
      for (const auto& [name, value] : node->attributes) {
        FUZZ_CHECK(AttributeAllowed(node->tag, name),
                   absl::StrCat(node->tag, "[", name, "] in: ", output));
        if (name == "href" || name == "src" || name == "cite") {
          const bool web = absl::StartsWith(value, "http://") || absl::StartsWith(value, "https://");
          const bool mail = name == "href" && absl::StartsWithIgnoreCase(value, "mailto:");
          FUZZ_CHECK(web || mail, absl::StrCat(name, "=", value, " in: ", output));
        }
      }
    }
    for (const auto& child : node->children) {
      stack.push_back(child);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto* base = new portcullis::url::Url(
      *portcullis::url::ParseUrl("https://alice.example/2024/01/reply?x=1"));
  const absl::string_view fragment(reinterpret_cast<const char*>(data), size);
  html::SanitizeLimits limits;
  limits.max_output_bytes = 8 * 1024;
  const html::SanitizedHtml sanitized = html::SanitizeHtml(fragment, *base, limits);
  // Closing tags of elements left open at the cut come on top of the limit: at most one per
  // level of nesting.
  FUZZ_CHECK(sanitized.html.size() <= limits.max_output_bytes + 16 * html::kMaxElementDepth,
             std::to_string(sanitized.html.size()));
  CheckTree(html::HtmlDocument::Parse(sanitized.html).root(), sanitized.html);
  if (!sanitized.truncated) {
    const html::SanitizedHtml again = html::SanitizeHtml(sanitized.html, *base, limits);
    FUZZ_CHECK(again.html == sanitized.html, sanitized.html + "\n  became\n" + again.html);
  }
  // The parsed tree instead of a second parse (SanitizeParsedHtml): the same result as
  // SanitizeHtml of the serialization, for the first elements of the input parsed as a page.
  const html::HtmlDocument document = html::HtmlDocument::Parse(fragment);
  std::vector<const html::HtmlNode*> stack = {&document.root()};
  for (int checked = 0; !stack.empty() && checked < 32;) {
    const html::HtmlNode* node = stack.back();
    stack.pop_back();
    for (const auto& child : node->children) {
      stack.push_back(child);
    }
    if (!node->is_element()) {
      continue;
    }
    ++checked;
    const std::string serialized = html::SerializeChildren(*node);
    const html::SanitizedHtml parsed =
        html::SanitizeParsedHtml(html::HtmlFragment{node}, serialized, *base, limits);
    const html::SanitizedHtml reference = html::SanitizeHtml(serialized, *base, limits);
    // Escaped: a NUL in the input would otherwise end the message where the difference starts.
    FUZZ_CHECK(parsed.html == reference.html && parsed.truncated == reference.truncated,
               absl::CHexEscape(absl::StrCat("<", node->tag, "> ", serialized, "\n  gave\n",
                                             parsed.html, "\n  not\n", reference.html)));
  }
  return 0;
}
