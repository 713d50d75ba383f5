#pragma once

// FetchObserver: what SafeFetcher reports as it works, for metrics (FetchMetrics) and tests. Every
// hook may be called from any thread and must not block. Labels passed in are bounded sets.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace portcullis::verifier::fetch {

struct FetchResult;

class FetchObserver {
 public:
  virtual ~FetchObserver() = default;

  // A fetch was accepted (it may wait for a slot) / answered, `elapsed` after it was accepted.
  virtual void OnFetchStarted() {}
  virtual void OnFetchFinished(const FetchResult& /*result*/, absl::Duration /*elapsed*/) {}

  // A DNS lookup of one hop ended, OK or not, after `elapsed`.
  virtual void OnLookup(const absl::Status& /*status*/, absl::Duration /*elapsed*/) {}

  // The egress policy refused something. `stage`: "url" (the start URL), "redirect" (a
  // Location), "dns" (an answer), "connect" (the connect-time check). `reason`: for addresses the
  // refused block's registry name ("loopback", "IPv4-mapped", ...) or "deny_list" / "zone_id";
  // otherwise the outcome name ("forbidden_url", "bad_scheme", "bad_url").
  virtual void OnRefused(absl::string_view /*stage*/, absl::string_view /*reason*/) {}

  // A fetch, hop or connection waits for a slot (`limit`: "global", "host" or "address") / got
  // it after `waited`.
  virtual void OnQueued(absl::string_view /*limit*/) {}
  virtual void OnDequeued(absl::string_view /*limit*/, absl::Duration /*waited*/) {}
};

}  // namespace portcullis::verifier::fetch
