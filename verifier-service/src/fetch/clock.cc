#include "verifier-service/src/fetch/clock.h"

#include "absl/time/clock.h"

namespace portcullis::verifier::fetch {
namespace {

class AbslClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

const Clock* RealClock() {
  static const Clock* const clock = new AbslClock();
  return clock;
}

}  // namespace portcullis::verifier::fetch
