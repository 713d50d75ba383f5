#include "ingest-gateway/src/rate_limiter.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/net/ip_address.h"
#include "common/url/url.h"

namespace portcullis::gateway {

absl::StatusOr<double> ParseRate(absl::string_view text) {
  if (text == "0") {
    return 0.0;
  }
  const size_t slash = text.find('/');
  double count = 0;
  if (slash == absl::string_view::npos || !absl::SimpleAtod(text.substr(0, slash), &count) ||
      !(count > 0) || count > 1e9) {
    return absl::InvalidArgumentError("not a rate such as 60/m, 5/s or 1000/h, or 0 (off)");
  }
  const absl::string_view unit = text.substr(slash + 1);
  if (unit == "s") {
    return count;
  }
  if (unit == "m") {
    return count / 60;
  }
  if (unit == "h") {
    return count / 3600;
  }
  return absl::InvalidArgumentError("not a rate such as 60/m, 5/s or 1000/h, or 0 (off)");
}

RateLimiter::RateLimiter(TokenBucketOptions options, size_t max_keys)
    : options_(options), max_keys_(std::max<size_t>(max_keys, 1)) {}

absl::Duration RateLimiter::Acquire(absl::string_view key, absl::Time now) {
  if (!options_.enabled()) {
    return absl::ZeroDuration();
  }
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) {
      Evict(now);
    }
    it = buckets_.emplace(std::string(key), Bucket{options_.burst, now}).first;
  }
  Bucket& bucket = it->second;
  const double elapsed = std::max(0.0, absl::ToDoubleSeconds(now - bucket.updated));
  bucket.tokens = std::min(options_.burst, bucket.tokens + elapsed * options_.tokens_per_second);
  bucket.updated = std::max(bucket.updated, now);
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return absl::ZeroDuration();
  }
  return absl::Seconds((1 - bucket.tokens) / options_.tokens_per_second);
}

size_t RateLimiter::tracked_keys() const {
  absl::MutexLock lock(&mu_);
  return buckets_.size();
}

void RateLimiter::Evict(absl::Time now) {
  const size_t before = buckets_.size();
  absl::erase_if(buckets_, [&](const auto& entry) {
    const double elapsed = absl::ToDoubleSeconds(now - entry.second.updated);
    return entry.second.tokens + elapsed * options_.tokens_per_second >= options_.burst;
  });
  if (before - buckets_.size() >= max_keys_ / 10 + 1) {
    return;
  }
  std::vector<absl::Time> times;
  times.reserve(buckets_.size());
  for (const auto& entry : buckets_) {
    times.push_back(entry.second.updated);
  }
  const size_t drop = std::min(times.size(), max_keys_ / 10 + 1);
  std::nth_element(times.begin(), times.begin() + (drop - 1), times.end());
  const absl::Time cutoff = times[drop - 1];
  absl::erase_if(buckets_, [&](const auto& entry) { return entry.second.updated <= cutoff; });
}

absl::StatusOr<net::IpAddress> PeerAddress(absl::string_view client_address) {
  absl::string_view host = client_address;
  if (absl::ConsumePrefix(&host, "[")) {
    host = host.substr(0, host.find(']'));
  } else if (const size_t colon = host.rfind(':'); colon != absl::string_view::npos) {
    host = host.substr(0, colon);
  }
  return net::IpAddress::Parse(host);
}

namespace {

std::string AddressKey(const net::IpAddress& address) {
  if (address.is_ipv4()) {
    return address.ToString();
  }
  if (const auto embedded = address.FindEmbeddedIpv4();
      embedded && embedded->kind == net::Ipv4EmbeddingKind::kMapped) {
    return net::Ipv4ToString(embedded->ipv4);
  }
  return absl::StrFormat("%016x::/64", address.ipv6_high());
}

bool Trusted(const net::IpAddress& address, absl::Span<const net::Cidr> trusted_proxies) {
  for (const net::Cidr& block : trusted_proxies) {
    if (block.Contains(address)) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string ClientKey(absl::string_view client_address,
                      std::optional<absl::string_view> forwarded_for,
                      absl::Span<const net::Cidr> trusted_proxies) {
  absl::StatusOr<net::IpAddress> peer = PeerAddress(client_address);
  if (!peer.ok()) {
    return std::string(client_address);
  }
  if (!forwarded_for || !Trusted(*peer, trusted_proxies)) {
    return AddressKey(*peer);
  }
  const std::vector<absl::string_view> hops = absl::StrSplit(*forwarded_for, ',');
  for (auto hop = hops.rbegin(); hop != hops.rend(); ++hop) {
    absl::StatusOr<net::IpAddress> address =
        net::IpAddress::Parse(absl::StripAsciiWhitespace(*hop));
    if (!address.ok()) {
      return AddressKey(*peer);
    }
    if (!Trusted(*address, trusted_proxies)) {
      return AddressKey(*address);
    }
  }
  return AddressKey(*peer);  // Only proxies on the way: the request started inside.
}

std::string ClientKey(absl::string_view client_address) {
  absl::StatusOr<net::IpAddress> address = PeerAddress(client_address);
  if (!address.ok()) {
    return std::string(client_address);
  }
  return AddressKey(*address);
}

std::optional<std::string> SourceHostKey(absl::string_view source) {
  absl::StatusOr<url::Url> parsed = url::ParseUrl(source);
  if (!parsed.ok()) {
    return std::nullopt;
  }
  return parsed->host();
}

}  // namespace portcullis::gateway
