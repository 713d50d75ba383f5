#pragma once

#include <string>

namespace portcullis::crypto {

// `bytes` bytes from OpenSSL's CSPRNG, as lowercase hex (2 * bytes characters). For secrets:
// tokens, keys.
std::string RandomHex(size_t bytes);

// 128 bits as 32 lowercase hex characters from a generator of the calling thread, seeded once from
// the OS: ids that must not repeat (a request id per HTTP request) without OpenSSL's per-call
// fork check, a getpid system call. Not for secrets.
std::string UniqueIdHex();

}  // namespace portcullis::crypto
