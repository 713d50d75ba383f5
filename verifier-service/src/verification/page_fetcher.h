#pragma once

// PageFetcher: one blocking fetch of a page a stranger chose. The seam between the verification
// pipeline (which runs on worker threads and may block) and the event-driven SafeFetcher.
// SafePageFetcher is the real one; tests use fakes.

#include "absl/strings/string_view.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::verification {

class PageFetcher {
 public:
  virtual ~PageFetcher() = default;
  // Fetches `url` within `limits` and returns how it ended. Never fails otherwise: a fetcher
  // that does not answer in time is a kTimeout result. Thread-safe.
  virtual fetch::FetchResult Fetch(absl::string_view url, const fetch::FetchLimits& limits) = 0;
};

}  // namespace portcullis::verifier::verification
