#include "common/crypto/base64.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace portcullis::crypto {
namespace {

int SextetOf(char c) {
  if (c >= 'A' && c <= 'Z') {
    return c - 'A';
  }
  if (c >= 'a' && c <= 'z') {
    return c - 'a' + 26;
  }
  if (c >= '0' && c <= '9') {
    return c - '0' + 52;
  }
  if (c == '+') {
    return 62;
  }
  if (c == '/') {
    return 63;
  }
  return -1;
}

}  // namespace

absl::StatusOr<std::string> DecodeBase64Strict(absl::string_view encoded) {
  if (encoded.size() % 4 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("base64 length ", encoded.size(), " is not a multiple of 4"));
  }
  size_t padding = 0;
  if (!encoded.empty() && encoded.back() == '=') {
    padding = encoded.size() >= 2 && encoded[encoded.size() - 2] == '=' ? 2 : 1;
  }
  std::string out;
  out.reserve(encoded.size() / 4 * 3);
  uint32_t accumulator = 0;
  const size_t data_chars = encoded.size() - padding;
  for (size_t i = 0; i < data_chars; ++i) {
    const int sextet = SextetOf(encoded[i]);
    if (sextet < 0) {
      return absl::InvalidArgumentError(absl::StrCat("invalid base64 character at ", i));
    }
    accumulator = (accumulator << 6) | static_cast<uint32_t>(sextet);
    if (i % 4 == 3) {
      out.push_back(static_cast<char>((accumulator >> 16) & 0xFF));
      out.push_back(static_cast<char>((accumulator >> 8) & 0xFF));
      out.push_back(static_cast<char>(accumulator & 0xFF));
      accumulator = 0;
    }
  }
  if (padding == 1) {  // 3 characters: 18 bits, 2 bytes, 2 unused bits.
    if ((accumulator & 0x3) != 0) {
      return absl::InvalidArgumentError("base64 has non-zero unused bits");
    }
    out.push_back(static_cast<char>((accumulator >> 10) & 0xFF));
    out.push_back(static_cast<char>((accumulator >> 2) & 0xFF));
  } else if (padding == 2) {  // 2 characters: 12 bits, 1 byte, 4 unused bits.
    if ((accumulator & 0xF) != 0) {
      return absl::InvalidArgumentError("base64 has non-zero unused bits");
    }
    out.push_back(static_cast<char>((accumulator >> 4) & 0xFF));
  }
  return out;
}

}  // namespace portcullis::crypto
