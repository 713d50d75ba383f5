#pragma once

#include <array>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

namespace portcullis::crypto {

using Sha256Digest = std::array<uint8_t, 32>;

// SHA-256 of `data` (OpenSSL).
Sha256Digest Sha256(absl::string_view data);

// Lowercase hex of a digest (64 characters).
std::string ToHex(const Sha256Digest& digest);

// Whether `text` is what ToHex writes: exactly 64 lowercase hex digits.
bool IsSha256Hex(absl::string_view text);

}  // namespace portcullis::crypto
