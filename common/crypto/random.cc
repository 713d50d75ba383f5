#include "common/crypto/random.h"

#include <openssl/rand.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/escaping.h"

namespace portcullis::crypto {

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  if (RAND_bytes(buffer.data(), static_cast<int>(buffer.size())) != 1) {
    std::abort();  // No entropy: nothing we issue would be safe.
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(buffer.data()), buffer.size()));
}

}  // namespace portcullis::crypto
