#include "verifier-service/src/verification/safe_page_fetcher.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace portcullis::verifier::verification {
namespace {

// Shared with the callback, which may run after the waiter gave up.
struct PendingFetch {
  absl::Mutex mu;
  std::optional<fetch::FetchResult> result ABSL_GUARDED_BY(mu);
};

}  // namespace

fetch::FetchResult SafePageFetcher::Fetch(absl::string_view url, const fetch::FetchLimits& limits) {
  auto pending = std::make_shared<PendingFetch>();
  fetcher_.Fetch(url, limits, [pending](fetch::FetchResult result) mutable {
    absl::MutexLock lock(&pending->mu);
    pending->result = std::move(result);
  });
  const absl::Duration wait =
      std::min(limits.total_timeout, fetcher_.config().total_timeout) + grace_;
  absl::MutexLock lock(&pending->mu);
  const auto answered = [&pending]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pending->mu) {
    return pending->result.has_value();
  };
  if (!pending->mu.AwaitWithTimeout(absl::Condition(&answered), wait)) {
    fetch::FetchResult timeout;
    timeout.outcome = fetch::FetchOutcome::kTimeout;
    timeout.detail = "the fetcher did not answer in time";
    timeout.final_url = std::string(url);
    return timeout;
  }
  return *std::move(pending->result);
}

void SafePageFetcher::FetchAsync(absl::string_view url, const fetch::FetchLimits& limits,
                                 Callback done) {
  fetcher_.Fetch(url, limits, std::move(done));
}

}  // namespace portcullis::verifier::verification
