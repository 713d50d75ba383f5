#pragma once

#include "absl/strings/string_view.h"

namespace portcullis::encoding {

// Whether `text` is well-formed UTF-8: shortest forms only, no surrogates, nothing above
// U+10FFFF.
bool IsValidUtf8(absl::string_view text);

}  // namespace portcullis::encoding
