#pragma once

namespace portcullis::encoding {

// The value of ASCII hex digit `c` (0-15), or -1 when `c` is not one.
constexpr int HexDigitValue(int c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace portcullis::encoding
