#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace portcullis::verifier::verification {

// An author as read from a rel=author page (an h-card); every field may be empty.
struct AuthorCard {
  std::string name;
  std::string url;    // Absolute.
  std::string photo;  // Absolute.
  std::string note;   // Plain text.

  bool operator==(const AuthorCard& other) const {
    return name == other.name && url == other.url && photo == other.photo && note == other.note;
  }
};

// What rel=author pages said, by URL, for a while: many mentions from one blog share one author
// page, which is then fetched once per `ttl` instead of once per mention. Bounded: at most
// `max_entries` pages; when full, expired entries go first, then the oldest. Thread-safe.
class AuthorCache {
 public:
  using Clock = std::function<absl::Time()>;

  AuthorCache(
      size_t max_entries, absl::Duration ttl, Clock clock = [] { return absl::Now(); })
      : max_entries_(max_entries), ttl_(ttl), clock_(std::move(clock)) {}

  // The card stored for `page_url` and not expired; nullopt when none.
  std::optional<AuthorCard> Get(absl::string_view page_url);
  // Stores `card` for `page_url` (replacing an older one) until now + ttl. A cache of zero
  // entries or a zero ttl keeps nothing.
  void Put(absl::string_view page_url, AuthorCard card);

  size_t size() const;

 private:
  struct Entry {
    AuthorCard card;
    absl::Time expires;
    uint64_t sequence = 0;
  };
  void EvictOne() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_entries_;
  const absl::Duration ttl_;
  const Clock clock_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // Insertion order (key, sequence); stale pairs (replaced or evicted keys) are skipped.
  std::deque<std::pair<std::string, uint64_t>> order_ ABSL_GUARDED_BY(mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace portcullis::verifier::verification
