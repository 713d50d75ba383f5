#include "tests/support/ci.h"

#include <cstdlib>
#include <string>

namespace portcullis::testing {

bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace portcullis::testing
