#pragma once

// What time it is, for code whose deadlines a test must be able to move without sleeping.
// RealClock() is absl::Now(); tests pass a fake that only moves when told.

#include "absl/time/time.h"

namespace portcullis::verifier::fetch {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// absl::Now(). One instance for the process, never destroyed.
const Clock* RealClock();

}  // namespace portcullis::verifier::fetch
