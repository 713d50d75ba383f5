// Link matching (verifier-service/src/html/link_matcher) on arbitrary bytes: the first line is
// the target URL, the rest the source page (fetched from a fixed URL). Invariants: a match names
// how it was given; the diagnostic stays within its limits; scoping only removes matches (a link
// found inside the post's microformats is found in the whole document too, and so is one found
// only outside the post).

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/url/url.h"
#include "fuzz/fuzz_check.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/link_matcher.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace html = portcullis::verifier::html;
  static const auto* source_url = new portcullis::url::Url(
      *portcullis::url::ParseUrl("https://alice.example/2024/01/reply"));
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == absl::string_view::npos) {
    return 0;
  }
  const auto target = portcullis::url::ParseUrl(input.substr(0, newline));
  if (!target.ok()) {
    return 0;
  }
  const html::HtmlDocument document = html::HtmlDocument::Parse(input.substr(newline + 1));
  html::LinkMatchOptions options;
  options.max_diagnostic_links = 4;
  options.max_diagnostic_link_bytes = 64;
  const html::LinkMatch scoped = html::FindLink(document, *source_url, *target, options);
  FUZZ_CHECK(scoped.found == !scoped.matched_by.empty(), scoped.matched_by);
  FUZZ_CHECK(scoped.links_to_target_host.size() <= options.max_diagnostic_links,
             std::to_string(scoped.links_to_target_host.size()));
  for (const std::string& link : scoped.links_to_target_host) {
    FUZZ_CHECK(link.size() <= options.max_diagnostic_link_bytes, link);
  }
  options.scope = html::LinkScope::kWholeDocument;
  const html::LinkMatch whole = html::FindLink(document, *source_url, *target, options);
  if (!scoped.scan_truncated && !whole.scan_truncated) {
    FUZZ_CHECK(!scoped.found || whole.found, "found in the post but not in the document");
    FUZZ_CHECK(!scoped.found_outside_post || whole.found, "found outside the post, not in the document");
  }
  return 0;
}
