#include "ingest-gateway/src/avatar_cache.h"

#include <utility>

namespace portcullis::gateway {

std::shared_ptr<const CachedAvatar> AvatarCache::Get(absl::string_view hash, absl::Time now) {
  absl::MutexLock lock(&mu_);
  const auto found = index_.find(hash);
  if (found == index_.end()) {
    return nullptr;
  }
  const Lru::iterator it = found->second;
  if (now - it->stored_at >= limits_.ttl) {
    EraseLocked(it);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, it);
  return it->avatar;
}

void AvatarCache::Put(absl::string_view hash, CachedAvatar avatar, absl::Time now) {
  const uint64_t size = avatar.body.size();
  absl::MutexLock lock(&mu_);
  if (const auto found = index_.find(hash); found != index_.end()) {
    EraseLocked(found->second);
  }
  if (size > limits_.max_bytes || limits_.max_entries == 0) {
    return;
  }
  lru_.push_front(
      Entry{std::string(hash), std::make_shared<const CachedAvatar>(std::move(avatar)), now});
  index_.emplace(std::string(hash), lru_.begin());
  bytes_ += size;
  while (lru_.size() > limits_.max_entries || bytes_ > limits_.max_bytes) {
    EraseLocked(std::prev(lru_.end()));
  }
}

size_t AvatarCache::entries() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

uint64_t AvatarCache::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

void AvatarCache::EraseLocked(Lru::iterator it) {
  bytes_ -= it->avatar->body.size();
  index_.erase(it->hash);
  lru_.erase(it);
}

}  // namespace portcullis::gateway
