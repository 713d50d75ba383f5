#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace portcullis::crypto {

// Decodes standard base64 (RFC 4648 §4, alphabet A-Z a-z 0-9 + /) strictly, for keys and
// signatures: the length is a multiple of 4, "=" padding is present exactly when needed, no
// whitespace or other characters, and the unused bits of the last character are zero — so each
// byte string has exactly one accepted spelling. kInvalidArgument otherwise. (absl's
// Base64Unescape is lenient about padding and is not used for these.)
absl::StatusOr<std::string> DecodeBase64Strict(absl::string_view encoded);

}  // namespace portcullis::crypto
