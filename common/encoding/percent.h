#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// Percent-decoding, the two ways the web does it.
namespace portcullis::encoding {

enum class PlusIs { kPlus, kSpace };

// The WHATWG URL Standard's percent-decode: "%XX" becomes byte XX; a '%' not followed by two hex
// digits is kept as it is. With PlusIs::kSpace, '+' becomes a space (form-urlencoded names and
// values). Never fails.
std::string PercentDecode(absl::string_view input, PlusIs plus = PlusIs::kPlus);

// Decoding of one `application/x-www-form-urlencoded` name or value from a stranger: '+' is a
// space, "%XX" a byte; a malformed or truncated escape, or a result that is not valid UTF-8, is
// InvalidArgument.
absl::StatusOr<std::string> DecodeFormComponentStrictly(absl::string_view input);

}  // namespace portcullis::encoding
