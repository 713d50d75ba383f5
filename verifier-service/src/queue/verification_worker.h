#pragma once

#include <deque>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "verifier-service/src/queue/mention_verifier.h"
#include "verifier-service/src/queue/retry_policy.h"
#include "verifier-service/src/store/job_store.h"

namespace portcullis::verifier::queue {

struct WorkerOptions {
  // Names this worker's leases; unique per process (host, pid and a random part).
  std::string owner;
  // Threads that start verifications and record their outcomes (JobStore::Finish): the
  // worker's bounded database executor. A blocking MentionVerifier (one without VerifyAsync)
  // also verifies on them, so for it this is the number of jobs verified at once.
  int concurrency = 4;
  // Jobs claimed and not yet recorded at once (the slots the dispatcher claims for). An
  // event-driven verifier (VerifyAsync) holds no thread while it waits for the network, so this
  // may be far above `concurrency`. 0: `concurrency`.
  int max_in_flight = 0;
  // How long a claimed job stays ours without renewal; renewed every third of it. A worker that
  // dies loses its jobs to the others this long after its last renewal.
  absl::Duration lease = absl::Seconds(30);
  // Longest idle wait without a notification: the fallback when LISTEN/NOTIFY is lost.
  absl::Duration poll_interval = absl::Seconds(30);
  // Of the `concurrency` threads, how many record outcomes at once; each records every outcome
  // waiting (up to finish_batch) in one transaction (JobStore::FinishBatch), so under load one
  // commit records many outcomes and the rest of the threads keep starting verifications. At
  // least 1, at most `concurrency`.
  int recorders = 2;
  int finish_batch = 64;
  // While more jobs are due than there are free slots, the dispatcher claims once this many
  // slots are free (or claim_wait passed), instead of one claim transaction per finished job.
  // 0: min(64, max_in_flight / 8), at least 1.
  int claim_batch = 0;
  absl::Duration claim_wait = absl::Milliseconds(20);
  RetryPolicy retry;
};

// Runs the durable queue: claims due jobs in batches (as many as it has free slots, at most
// max_in_flight), starts each with MentionVerifier::VerifyAsync from one of `concurrency`
// threads, and records each outcome on those threads as it arrives; leases of every job claimed
// and not yet recorded are renewed meanwhile. Woken
// by JobNotifications, by the next scheduled job coming due, and at least every poll interval.
// Several workers — threads of one process or many pods — share one queue: a job is leased to
// one of them at a time.
class VerificationWorker {
 public:
  // `jobs`, `notifications` and `verifier` must outlive the worker. `notifications` is called
  // from the worker's own listener thread only.
  VerificationWorker(store::JobStore& jobs, store::JobNotifications& notifications,
                     MentionVerifier& verifier, WorkerOptions options);
  // Stop().
  ~VerificationWorker();

  VerificationWorker(const VerificationWorker&) = delete;
  VerificationWorker& operator=(const VerificationWorker&) = delete;

  void Start();

  // Stops claiming, lets verifications in flight finish and record their outcome (an
  // event-driven one ends within its fetch deadline: the fetcher must still be running), gives
  // back jobs claimed but not started, and joins every thread. Idempotent.
  void Stop();

  // Jobs finished by this worker (any outcome), for tests and logs.
  int64_t finished() const;
  // Verifications started and not yet recorded, for tests.
  int in_flight() const;

 private:
  void ListenLoop();
  void DispatchLoop();
  void RenewLoop();
  void ExecuteLoop();
  // Records the outcomes of `done` (JobStore::FinishBatch).
  void Record(const std::vector<std::pair<store::JobRecord, VerificationOutcome>>& done);
  // Adds the stage times of the jobs of one recorded batch; logs a summary (Info) every
  // kStageReportInterval.
  void AddStageTimes(const std::vector<std::pair<store::JobRecord, VerificationOutcome>>& done,
                     absl::Time record_start, absl::Time record_end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // When a job was claimed, started, and its outcome arrived: where a verification's time goes
  // between claim and record, summarized in the log.
  struct Stamps {
    absl::Time claimed;
    absl::Time started;
    absl::Time done;
  };
  struct StageTotals {
    int64_t jobs = 0;
    int64_t batches = 0;
    absl::Duration waiting_to_start, verifying, waiting_to_record, recording;
    absl::Duration max_waiting_to_start, max_verifying, max_waiting_to_record, max_recording;
    absl::Time since = absl::InfinitePast();
  };
  // Waits up to `timeout` for `condition` or stopping; true when stopping.
  bool WaitOrStop(absl::Duration timeout) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::JobStore& jobs_;
  store::JobNotifications& notifications_;
  MentionVerifier& verifier_;
  const WorkerOptions options_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<store::JobRecord> claimed_ ABSL_GUARDED_BY(mu_);
  // Jobs claimed and not yet finished (queued here or running): the leases to renew.
  absl::flat_hash_set<int64_t> leased_ ABSL_GUARDED_BY(mu_);
  // Outcomes arrived and not yet recorded.
  std::deque<std::pair<store::JobRecord, VerificationOutcome>> outcomes_ ABSL_GUARDED_BY(mu_);
  // Verifications started and not yet recorded (running, or in outcomes_).
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  // Threads recording outcomes right now.
  int recording_ ABSL_GUARDED_BY(mu_) = 0;
  // The last claim took as many jobs as it asked for: more are probably due.
  bool backlog_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<int64_t, Stamps> stamps_ ABSL_GUARDED_BY(mu_);
  StageTotals stages_ ABSL_GUARDED_BY(mu_);
  int64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
  absl::BitGen random_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_;
};

// A lease owner name for this process: "<host>/<pid>/<random hex>".
std::string MakeWorkerOwner();

// How a verification outcome is recorded for a job on its `attempts`-th claim: kVerified and
// kFailed as they are; kRetry as a retry after RetryDelay (`random01` in [0, 1) is its jitter),
// or, once the attempts are used up, as kGiveUp "unreachable". The one mapping for the workers
// and for VerifyNow.
store::JobResult ToJobResult(const VerificationOutcome& outcome, int attempts,
                             const RetryPolicy& retry, double random01);

}  // namespace portcullis::verifier::queue
