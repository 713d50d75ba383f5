#pragma once

// SourceVerifier: the verification pipeline of one mention, as the queue and VerifyNow run it.
//
//   fetch the source (PageFetcher: SSRF-guarded, redirects followed, body capped)
//   → not ok: 410 → FAILED source_gone (queue::kReasonSourceGone); transient (timeout,
//     connection, DNS temporary, 5xx, 429) → RETRY with the fetcher's reason; any other outcome
//     → FAILED with the fetcher's reason
//   → ok: analyze the page with the final URL as base (SourceAnalyzer)
//     → no link → FAILED no_link (queue::kReasonNoLink) with the links to the target's host
//     → link → the author from the rel=author page when the page itself does not name one
//       (fetched with a small budget of its own, remembered in an AuthorCache) → VERIFIED

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
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

  queue::VerificationOutcome Verify(const queue::Job& job) override;
  // The same for a pair (`source`, `target` as submitted).
  queue::VerificationOutcome Verify(absl::string_view source, absl::string_view target);

  // The same pipeline, event-driven: the fetches (source, then the rel=author page when one is
  // needed and not cached) go through PageFetcher::FetchAsync, and the CPU work after each (parse,
  // link match, mf2, classify, sanitize) runs on the CPU executor, never on the fetcher's event
  // loop. `done` is called exactly once, on an executor thread (or inline for synchronous fakes).
  void VerifyAsync(const queue::Job& job, Done done) override;
  void VerifyAsync(absl::string_view source, absl::string_view target, Done done);

  // Runs one piece of CPU work, on a thread of its own choosing; must run every task it is given.
  using CpuExecutor = std::function<void(absl::AnyInvocable<void() &&>)>;
  // Where VerifyAsync analyzes pages. Unset: on the thread that delivered the fetch result. Set
  // before the first VerifyAsync; `executor` must outlive every verification started.
  void set_cpu_executor(CpuExecutor executor) { cpu_executor_ = std::move(executor); }

  const SourceVerifierConfig& config() const { return config_; }

 private:
  // The author named by the rel=author page at `page_url`: cached, else fetched; empty when it
  // cannot be had (the mention is verified without it).
  AuthorCard AuthorOfPage(const std::string& page_url);
  // What the source page alone says: the final outcome, unless `author_page` names a rel=author
  // page to complete a VERIFIED outcome's author from.
  struct PageVerdict {
    queue::VerificationOutcome outcome;
    std::optional<std::string> author_page;
  };
  PageVerdict Judge(const fetch::FetchResult& page, absl::string_view target) const;
  // The author a fetched rel=author page names, remembered in the cache.
  AuthorCard ReadAuthorPage(const std::string& page_url, const fetch::FetchResult& page);
  void RunCpu(absl::AnyInvocable<void() &&> task) const;

  PageFetcher& fetcher_;
  const SourceAnalyzer& analyzer_;
  const SourceVerifierConfig config_;
  AuthorCache author_cache_;
  CpuExecutor cpu_executor_;
};

}  // namespace portcullis::verifier::verification
