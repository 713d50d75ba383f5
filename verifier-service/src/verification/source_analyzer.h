#pragma once

// SourceAnalyzer: what a fetched source page says about a mention — does it link to the target,
// and if so what kind of mention it is, by whom, with what content. Pure (no I/O): the one step
// that needs another page (the rel=author page of the authorship algorithm) is split in two, and
// SourceVerifier fetches that page in between. HtmlSourceAnalyzer is the real one (html/); tests
// of the verifier use fakes.

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "common/url/url.h"
#include "verifier-service/src/queue/mention_verifier.h"
#include "verifier-service/src/verification/author_cache.h"

namespace portcullis::verifier::verification {

struct SourceAnalysis {
  // The source links to the target (a[href], img[src], ..., a u-* value; never text or comments).
  bool links_to_target = false;
  // When it does not: the links to the target's host it has (near misses for the status page).
  queue::LinkDiagnostic links_to_target_host;
  // When it does: type, entry and content, and the author when the page itself names one (or,
  // with author_page_url, what to keep when that page names nobody).
  queue::MentionContent content;
  // When it does and the authorship algorithm ends at a rel=author page: that page's absolute URL;
  // the author is then read from it (AuthorFromPage) and filled into `content`.
  std::optional<std::string> author_page_url;
};

class SourceAnalyzer {
 public:
  virtual ~SourceAnalyzer() = default;

  // Analyzes `body`, fetched from `final_url` (the URL after redirects: relative links resolve
  // against it or the page's <base>), for a mention of `target` (as submitted). Thread-safe.
  virtual SourceAnalysis Analyze(absl::string_view body, const url::Url& final_url,
                                 absl::string_view target) const = 0;

  // The author the page at `requested_url` (SourceAnalysis::author_page_url), fetched from
  // `final_url`, names (its representative h-card); empty fields when none.
  virtual AuthorCard AuthorFromPage(absl::string_view body, absl::string_view requested_url,
                                    const url::Url& final_url) const = 0;
};

}  // namespace portcullis::verifier::verification
