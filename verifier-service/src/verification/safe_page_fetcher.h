#pragma once

#include "absl/time/time.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/verification/page_fetcher.h"

namespace portcullis::verifier::verification {

// PageFetcher over the SSRF-guarded SafeFetcher: starts the fetch and waits on the calling thread
// for its callback, at most the fetch's own timeout plus `grace` (the fetcher enforces the
// timeout itself; the grace covers queueing behind its concurrency limits). When the wait runs
// out the answer is kTimeout and the late callback is dropped.
class SafePageFetcher final : public PageFetcher {
 public:
  // `fetcher` must outlive this object and every fetch it started.
  explicit SafePageFetcher(fetch::SafeFetcher& fetcher, absl::Duration grace = absl::Seconds(2))
      : fetcher_(fetcher), grace_(grace) {}

  fetch::FetchResult Fetch(absl::string_view url, const fetch::FetchLimits& limits) override;
  // Straight through to SafeFetcher, which enforces the deadline and always answers (kCancelled
  // when it shuts down first); `done` runs on the fetcher's event loop.
  void FetchAsync(absl::string_view url, const fetch::FetchLimits& limits,
                  Callback done) override;

 private:
  fetch::SafeFetcher& fetcher_;
  const absl::Duration grace_;
};

}  // namespace portcullis::verifier::verification
