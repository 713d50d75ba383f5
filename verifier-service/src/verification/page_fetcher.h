#pragma once

// PageFetcher: one blocking fetch of a page a stranger chose. The seam between the verification
// pipeline (which runs on worker threads and may block) and the event-driven SafeFetcher.
// SafePageFetcher is the real one; tests use fakes.

#include <utility>

#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::verification {

class PageFetcher {
 public:
  virtual ~PageFetcher() = default;
  // Fetches `url` within `limits` and returns how it ended. Never fails otherwise: a fetcher
  // that does not answer in time is a kTimeout result. Thread-safe.
  virtual fetch::FetchResult Fetch(absl::string_view url, const fetch::FetchLimits& limits) = 0;

  using Callback = absl::AnyInvocable<void(fetch::FetchResult) &&>;
  // The same without blocking: calls `done` exactly once, on any thread (possibly before
  // FetchAsync returns; for the real fetcher, on its event loop: hand heavy work elsewhere).
  // This default runs Fetch on the calling thread.
  virtual void FetchAsync(absl::string_view url, const fetch::FetchLimits& limits,
                          Callback done) {
    std::move(done)(Fetch(url, limits));
  }
};

}  // namespace portcullis::verifier::verification
