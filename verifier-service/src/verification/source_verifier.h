#pragma once

// SourceVerifier: the verification pipeline of one mention, as the queue and VerifyNow run it.
//
//   fetch the source (PageFetcher: SSRF-guarded, redirects followed, body capped)
//   → not ok: 410 → FAILED source_gone (store::kReasonSourceGone); transient (timeout,
//     connection, DNS temporary, 5xx, 429) → RETRY with the fetcher's reason; any other outcome
//     → FAILED with the fetcher's reason
//   → ok: analyze the page with the final URL as base (SourceAnalyzer)
//     → no link → FAILED no_link (store::kReasonNoLink) with the links to the target's host
//     → link → the author from the rel=author page when the page itself does not name one
//       (fetched with a small budget of its own, remembered in an AuthorCache) → VERIFIED

#include <cstddef>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/queue/mention_verifier.h"
#include "verifier-service/src/verification/author_cache.h"
#include "verifier-service/src/verification/page_fetcher.h"
#include "verifier-service/src/verification/source_analyzer.h"

namespace portcullis::verifier::verification {

struct SourceVerifierConfig {
  // The source page: the fetcher's own maximums by default (it clamps to them anyway).
  fetch::FetchLimits source_limits;
  // A rel=author page: an extra that never decides the mention, so a small budget.
  fetch::FetchLimits author_limits = {1, absl::Seconds(2), int64_t{256} << 10};
  // rel=author pages remembered, and for how long.
  size_t author_cache_entries = 1024;
  absl::Duration author_cache_ttl = absl::Minutes(10);
};

// The outcome of a fetch that did not return a page (anything but kOk): the reason is the
// fetcher's FetchOutcomeName ("http_4xx", "forbidden_address", "timeout", ...), but for 410.
queue::VerificationOutcome OutcomeOfFailedFetch(const fetch::FetchResult& result);

class SourceVerifier final : public queue::MentionVerifier {
 public:
  // `fetcher` and `analyzer` must outlive the verifier.
  SourceVerifier(
      PageFetcher& fetcher, const SourceAnalyzer& analyzer, SourceVerifierConfig config = {},
      AuthorCache::Clock clock = [] { return absl::Now(); });

  queue::VerificationOutcome Verify(const store::JobRecord& job) override;
  // The same for a pair (`source`, `target` as submitted).
  queue::VerificationOutcome Verify(absl::string_view source, absl::string_view target);

  const SourceVerifierConfig& config() const { return config_; }

 private:
  // The author named by the rel=author page at `page_url`: cached, else fetched; empty when it
  // cannot be had (the mention is verified without it).
  AuthorCard AuthorOfPage(const std::string& page_url);

  PageFetcher& fetcher_;
  const SourceAnalyzer& analyzer_;
  const SourceVerifierConfig config_;
  AuthorCache author_cache_;
};

}  // namespace portcullis::verifier::verification
