#include "common/encoding/utf8.h"

namespace portcullis::encoding {

DecodedCodePoint DecodeUtf8At(absl::string_view text, size_t pos) {
  const auto byte = static_cast<unsigned char>(text[pos]);
  if (byte < 0x80) {
    return {byte, 1};
  }
  size_t length = 0;
  uint32_t code_point = 0;
  uint32_t minimum = 0;
  if ((byte & 0xE0) == 0xC0) {
    length = 2;
    code_point = byte & 0x1F;
    minimum = 0x80;
  } else if ((byte & 0xF0) == 0xE0) {
    length = 3;
    code_point = byte & 0x0F;
    minimum = 0x800;
  } else if ((byte & 0xF8) == 0xF0) {
    length = 4;
    code_point = byte & 0x07;
    minimum = 0x10000;
  } else {
    return {};
  }
  if (pos + length > text.size()) {
    return {};
  }
  for (size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[pos + k]);
    if ((next & 0xC0) != 0x80) {
      return {};
    }
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return {};
  }
  return {code_point, length};
}

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = DecodeUtf8At(text, i).length;
    if (length == 0) {
      return false;
    }
    i += length;
  }
  return true;
}

}  // namespace portcullis::encoding
