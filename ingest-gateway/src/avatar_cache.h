#pragma once

// The avatar proxy's memory (issue 17): images fetched through the verifier, kept so that
// repeated reads of /avatar/<hash> do not fetch again. Bounded by entries and by bytes (the least
// recently used go first) and by age (an entry older than the TTL is not served and is dropped).

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace portcullis::gateway {

// One cached image as the gateway answers it.
struct CachedAvatar {
  std::string body;
  std::string content_type;
  std::string etag;  // The gateway's strong ETag of `body`.
};

struct AvatarCacheLimits {
  size_t max_entries = 256;
  uint64_t max_bytes = 16 * 1024 * 1024;
  absl::Duration ttl = absl::Hours(1);
};

// Thread-safe.
class AvatarCache {
 public:
  explicit AvatarCache(AvatarCacheLimits limits) : limits_(limits) {}

  // The entry of `hash` stored less than the TTL before `now` (it becomes the most recently
  // used); nullptr when there is none.
  std::shared_ptr<const CachedAvatar> Get(absl::string_view hash, absl::Time now);

  // Stores `avatar` for `hash` at `now`, replacing an older one, then evicts the least recently
  // used entries until both caps hold. An image larger than the byte cap is not kept.
  void Put(absl::string_view hash, CachedAvatar avatar, absl::Time now);

  size_t entries() const;
  uint64_t bytes() const;

 private:
  struct Entry {
    std::string hash;
    std::shared_ptr<const CachedAvatar> avatar;
    absl::Time stored_at;
  };
  using Lru = std::list<Entry>;  // Most recently used first.

  void EraseLocked(Lru::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const AvatarCacheLimits limits_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Lru::iterator> index_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace portcullis::gateway
