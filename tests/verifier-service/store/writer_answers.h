#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::store::testing {

// Every answer a batching writer (store/batch_writer.h) gives, tagged by the test.
template <typename Result>
class WriterAnswers {
 public:
  absl::AnyInvocable<void(absl::StatusOr<Result>) &&> Collect(int tag) {
    return [this, tag](absl::StatusOr<Result> result) {
      absl::MutexLock lock(&mu_);
      results_.emplace_back(tag, std::move(result));
    };
  }

  // The first `n` answers, ordered by tag; fails the test when they take over 60 s.
  std::vector<std::pair<int, absl::StatusOr<Result>>> Wait(size_t n) {
    absl::MutexLock lock(&mu_);
    const auto done = [&] { return results_.size() >= n; };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(60)))
        << results_.size() << " of " << n << " answered";
    std::sort(results_.begin(), results_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return results_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::pair<int, absl::StatusOr<Result>>> results_;
};

}  // namespace portcullis::verifier::store::testing
