#pragma once

#include <string>

namespace portcullis::crypto {

// `bytes` bytes from OpenSSL's CSPRNG, as lowercase hex (2 * bytes characters). Used for request
// ids and tokens.
std::string RandomHex(size_t bytes);

}  // namespace portcullis::crypto
