#pragma once

#include <array>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace portcullis::crypto {

using HmacSha256Digest = std::array<uint8_t, 32>;

// HMAC-SHA256 (RFC 2104) of `data` under `key` (any length, empty included), via OpenSSL.
HmacSha256Digest HmacSha256(absl::string_view key, absl::string_view data);

// True when `a` and `b` hold the same bytes. The time taken depends only on the lengths, never on
// where the bytes differ (OpenSSL CRYPTO_memcmp); lengths are not secret.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace portcullis::crypto
