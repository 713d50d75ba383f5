#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace portcullis::encoding {

// Whether `text` is well-formed UTF-8: shortest forms only, no surrogates, nothing above
// U+10FFFF.
bool IsValidUtf8(absl::string_view text);

// One code point read from UTF-8.
struct DecodedCodePoint {
  uint32_t code_point = 0;
  size_t length = 0;  // Bytes; 0 when no well-formed sequence starts there.
};

// The code point whose UTF-8 sequence starts at `text[pos]` (pos < text.size()), under the rules
// of IsValidUtf8.
DecodedCodePoint DecodeUtf8At(absl::string_view text, size_t pos);

}  // namespace portcullis::encoding
