#include "common/config/env.h"

#include <cstdlib>

namespace portcullis::config {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : fallback;
}

}  // namespace portcullis::config
