#include "verifier-service/src/verification/author_cache.h"

namespace portcullis::verifier::verification {

std::optional<AuthorCard> AuthorCache::Get(absl::string_view page_url) {
  absl::MutexLock lock(&mu_);
  const auto it = entries_.find(page_url);
  if (it == entries_.end()) {
    return std::nullopt;
  }
  if (it->second.expires <= clock_()) {
    entries_.erase(it);
    return std::nullopt;
  }
  return it->second.card;
}

void AuthorCache::Put(absl::string_view page_url, AuthorCard card) {
  if (max_entries_ == 0 || ttl_ <= absl::ZeroDuration()) {
    return;
  }
  absl::MutexLock lock(&mu_);
  const auto existing = entries_.find(page_url);
  if (existing != entries_.end()) {
    entries_.erase(existing);
  }
  while (entries_.size() >= max_entries_) {
    EvictOne();
  }
  const uint64_t sequence = next_sequence_++;
  entries_[std::string(page_url)] = Entry{std::move(card), clock_() + ttl_, sequence};
  order_.emplace_back(std::string(page_url), sequence);
  if (order_.size() > 2 * max_entries_ + 16) {
    // Replaced keys left stale pairs behind: keep only the live ones, in order.
    std::deque<std::pair<std::string, uint64_t>> live;
    for (auto& [key, seq] : order_) {
      const auto it = entries_.find(key);
      if (it != entries_.end() && it->second.sequence == seq) {
        live.emplace_back(std::move(key), seq);
      }
    }
    order_.swap(live);
  }
}

void AuthorCache::EvictOne() {
  // Expired entries first: one pass over the map, cheap at the sizes this cache has.
  const absl::Time now = clock_();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->second.expires <= now) {
      entries_.erase(it);
      return;
    }
  }
  // Otherwise the oldest live entry.
  while (!order_.empty()) {
    auto [key, sequence] = std::move(order_.front());
    order_.pop_front();
    const auto it = entries_.find(key);
    if (it != entries_.end() && it->second.sequence == sequence) {
      entries_.erase(it);
      return;
    }
  }
}

size_t AuthorCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace portcullis::verifier::verification
