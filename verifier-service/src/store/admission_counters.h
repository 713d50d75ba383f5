#pragma once

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "verifier-service/src/store/mention_store.h"

namespace portcullis::verifier::store {

// The counts the admission limits (SubmitLimits) are checked against, kept in memory so that no
// submission counts rows: the length of the verification queue and the PENDING mentions of each
// source host. Each count is read from the database at most `limits.refresh_interval` before it
// is used (the caller reads it when Stale* says so) and raised by this process's own acceptances
// after that read (Commit).
//
// What this costs in precision: acceptances of other processes (verifier pods) and jobs finished
// since the last read are not seen until the next one. A limit is thus overshot by at most what
// the other pods accept in one refresh interval, plus what concurrent batches of this process
// admit before either commits (at most the batches in flight × their size). Finished work shows up
// late, so a full queue or host stays refused up to one interval longer than it is full.
// Thread-safe.
class AdmissionCounters {
 public:
  explicit AdmissionCounters(SubmitLimits limits) : limits_(limits) {}

  const SubmitLimits& limits() const { return limits_; }

  // Whether the queue length should be read before deciding at `now`. True for one caller per
  // interval (the others go on with the count they have), so concurrent batches read it once.
  bool ClaimQueueRefresh(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);
  // The queue length read (capped at the limit) at `now`. Also forgets hosts not read within the
  // last interval, so the host table holds only the hosts of the last interval's submissions.
  void SetQueueLength(int64_t count, absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  // Whether the PENDING count of `host` should be read before deciding at `now`.
  bool HostStale(const std::string& host, absl::Time now) const ABSL_LOCKS_EXCLUDED(mu_);
  void SetPendingOfHost(const std::string& host, int64_t count, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The admissions of one batch: each is checked against the counts plus what the batch admitted
  // before it. Not thread-safe itself (one batch, one thread).
  class Batch {
   public:
    // OK and counted, or the refusal: UNAVAILABLE "verification queue full, retry later", or
    // RESOURCE_EXHAUSTED "too many mentions from this source host ...".
    absl::Status Admit(const std::string& source_host);

   private:
    friend class AdmissionCounters;
    explicit Batch(AdmissionCounters& counters) : counters_(counters) {}

    AdmissionCounters& counters_;
    int64_t queued_ = 0;
    absl::flat_hash_map<std::string, int64_t> pending_of_host_;
  };
  Batch StartBatch() { return Batch(*this); }

  // After `batch` committed: its admissions count until the next read of each count.
  void Commit(const Batch& batch) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct HostCount {
    int64_t pending = 0;
    absl::Time read_at;
  };

  const SubmitLimits limits_;
  mutable absl::Mutex mu_;
  int64_t queue_length_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time queue_read_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::flat_hash_map<std::string, HostCount> hosts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace portcullis::verifier::store
