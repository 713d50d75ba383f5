#include "common/crypto/random.h"

#include <openssl/rand.h>

#include <cstdlib>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"

namespace portcullis::crypto {

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  if (RAND_bytes(buffer.data(), static_cast<int>(buffer.size())) != 1) {
    std::abort();  // No entropy: nothing we issue would be safe.
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(buffer.data()), buffer.size()));
}

std::string UniqueIdHex() {
  thread_local absl::BitGen generator;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(generator),
                         absl::Uniform<uint64_t>(generator));
}

}  // namespace portcullis::crypto
