#pragma once

#include "verifier-service/src/html/link_matcher.h"
#include "verifier-service/src/html/mention_classifier.h"
#include "verifier-service/src/verification/source_analyzer.h"

namespace portcullis::verifier::verification {

// SourceAnalyzer over html/: HtmlDocument, the link matcher (exact WHATWG match, the post's
// microformats scope, near misses), ParseMf2, the mention classifier (primary h-entry, type,
// sanitized content) and the two-step authorship algorithm. Pure and thread-safe.
class HtmlSourceAnalyzer final : public SourceAnalyzer {
 public:
  explicit HtmlSourceAnalyzer(html::LinkMatchOptions links = {}, html::EntryLimits entry = {})
      : links_(links), entry_(entry) {}

  SourceAnalysis Analyze(absl::string_view body, const url::Url& final_url,
                         absl::string_view target) const override;
  AuthorCard AuthorFromPage(absl::string_view body, absl::string_view requested_url,
                            const url::Url& final_url) const override;

 private:
  const html::LinkMatchOptions links_;
  const html::EntryLimits entry_;
};

}  // namespace portcullis::verifier::verification
