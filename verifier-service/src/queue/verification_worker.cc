#include "verifier-service/src/queue/verification_worker.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging/log.h"

namespace portcullis::verifier::queue {
namespace {

// After a database error, the dispatcher and the renewer wait this long before trying again.
constexpr absl::Duration kErrorPause = absl::Seconds(1);
// The listener thread checks for Stop() at least this often.
constexpr absl::Duration kListenSlice = absl::Milliseconds(500);
// How often the stage times (claim → start → outcome → recorded) are summarized in the log.
constexpr absl::Duration kStageReportInterval = absl::Seconds(10);

std::string Ms(absl::Duration d) {
  return absl::StrFormat("%.1fms", absl::ToDoubleMilliseconds(d));
}

int MaxInFlight(const WorkerOptions& options) {
  return options.max_in_flight > 0 ? options.max_in_flight : options.concurrency;
}

int Recorders(const WorkerOptions& options) {
  return std::clamp(options.recorders, 1, std::max(1, options.concurrency));
}

int ClaimBatch(const WorkerOptions& options) {
  const int max_in_flight = MaxInFlight(options);
  const int batch = options.claim_batch > 0 ? options.claim_batch : std::min(64, max_in_flight / 8);
  return std::clamp(batch, 1, std::max(1, max_in_flight));
}

}  // namespace

std::string MakeWorkerOwner() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) {
    host[0] = '\0';
  }
  absl::BitGen random;
  return absl::StrFormat("%s/%d/%08x", host, getpid(), absl::Uniform<uint32_t>(random));
}

store::JobResult ToJobResult(const VerificationOutcome& outcome, int attempts,
                             const RetryPolicy& retry, double random01) {
  store::JobResult result;
  switch (outcome.kind) {
    case VerificationOutcome::Kind::kVerified:
      result.kind = store::JobResult::Kind::kVerified;
      result.content = outcome.content;
      break;
    case VerificationOutcome::Kind::kFailed:
      result.kind = store::JobResult::Kind::kFailed;
      result.reason = outcome.reason;
      result.links_to_target_host = outcome.links_to_target_host;
      break;
    case VerificationOutcome::Kind::kRetry:
      if (attempts >= retry.max_attempts) {
        result.kind = store::JobResult::Kind::kGiveUp;
        result.reason = "unreachable";
      } else {
        result.kind = store::JobResult::Kind::kRetry;
        result.reason = outcome.reason;
        result.retry_in = RetryDelay(retry, attempts, random01);
      }
      break;
  }
  return result;
}

VerificationWorker::VerificationWorker(store::JobStore& jobs,
                                       store::JobNotifications& notifications,
                                       MentionVerifier& verifier, WorkerOptions options)
    : jobs_(jobs),
      notifications_(notifications),
      verifier_(verifier),
      options_(std::move(options)) {}

VerificationWorker::~VerificationWorker() { Stop(); }

int64_t VerificationWorker::finished() const {
  absl::MutexLock lock(&mu_);
  return finished_;
}

int VerificationWorker::in_flight() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

void VerificationWorker::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) {
      return;
    }
    started_ = true;
  }
  logging::Info(
      "verification worker started owner={} concurrency={} max_in_flight={} lease={} poll={}",
      options_.owner, options_.concurrency, MaxInFlight(options_),
      absl::FormatDuration(options_.lease), absl::FormatDuration(options_.poll_interval));
  threads_.emplace_back([this] { ListenLoop(); });
  threads_.emplace_back([this] { RenewLoop(); });
  for (int i = 0; i < options_.concurrency; ++i) {
    threads_.emplace_back([this] { ExecuteLoop(); });
  }
  threads_.emplace_back([this] { DispatchLoop(); });
}

void VerificationWorker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      return;
    }
    stopping_ = true;
  }
  for (std::thread& thread : threads_) {
    thread.join();
  }
  threads_.clear();
  absl::MutexLock lock(&mu_);
  stamps_.clear();
  if (!claimed_.empty()) {
    claimed_.clear();
    leased_.clear();
    if (const absl::Status status = jobs_.ReleaseAll(options_.owner); !status.ok()) {
      logging::Warn("cannot give back claimed jobs (they return after their lease): {}",
                    std::string(status.message()));
    }
  }
  logging::Info("verification worker stopped owner={} finished={}", options_.owner, finished_);
}

bool VerificationWorker::WaitOrStop(absl::Duration timeout) {
  return mu_.AwaitWithTimeout(absl::Condition(&stopping_), timeout) || stopping_;
}

void VerificationWorker::ListenLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) {
        return;
      }
    }
    if (notifications_.Wait(kListenSlice)) {
      absl::MutexLock lock(&mu_);
      woken_ = true;
    }
  }
}

void VerificationWorker::RenewLoop() {
  const absl::Duration interval = options_.lease / 3;
  absl::MutexLock lock(&mu_);
  // Renews while verifications are in flight, during Stop's drain too.
  const auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ && running_ == 0;
  };
  while (!(mu_.AwaitWithTimeout(absl::Condition(&drained), interval) || drained())) {
    if (leased_.empty()) {
      continue;
    }
    const std::vector<int64_t> ids(leased_.begin(), leased_.end());
    mu_.Unlock();
    const absl::StatusOr<int> renewed = jobs_.RenewLeases(options_.owner, ids, options_.lease);
    mu_.Lock();
    if (!renewed.ok()) {
      logging::Warn("cannot renew job leases owner={}: {}", options_.owner,
                    std::string(renewed.status().message()));
    }
  }
}

void VerificationWorker::DispatchLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    const int max_in_flight = MaxInFlight(options_);
    const int free = max_in_flight - running_ - static_cast<int>(claimed_.size());
    if (free <= 0) {
      // Wait for a slot.
      const auto slot_or_stop = [this, max_in_flight]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || running_ + static_cast<int>(claimed_.size()) < max_in_flight;
      };
      mu_.Await(absl::Condition(&slot_or_stop));
      continue;
    }
    if (backlog_ && free < ClaimBatch(options_)) {
      // More are due than we have room for: let slots accumulate a little, so that one claim
      // transaction takes many jobs rather than one per finished job.
      const int batch = ClaimBatch(options_);
      const auto batch_or_stop = [this, max_in_flight, batch]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || max_in_flight - running_ - static_cast<int>(claimed_.size()) >= batch;
      };
      mu_.AwaitWithTimeout(absl::Condition(&batch_or_stop), options_.claim_wait);
      backlog_ = false;  // Claim what is free now, whatever it is.
      continue;
    }
    woken_ = false;
    mu_.Unlock();
    absl::StatusOr<std::vector<store::JobRecord>> claimed =
        jobs_.Claim(options_.owner, free, options_.lease);
    std::optional<absl::Duration> next_due;
    if (claimed.ok() && static_cast<int>(claimed->size()) < free) {
      // Drained what is due: sleep until the next job comes due (a retry, an expired lease).
      absl::StatusOr<std::optional<absl::Duration>> due = jobs_.NextDueIn();
      if (due.ok()) {
        next_due = *due;
      }
    }
    mu_.Lock();
    if (!claimed.ok()) {
      logging::Warn("cannot claim jobs owner={}: {}", options_.owner,
                    std::string(claimed.status().message()));
      WaitOrStop(kErrorPause);
      continue;
    }
    const absl::Time claimed_at = absl::Now();
    for (store::JobRecord& job : *claimed) {
      leased_.insert(job.job_id);
      stamps_[job.job_id].claimed = claimed_at;
      claimed_.push_back(std::move(job));
    }
    if (static_cast<int>(claimed->size()) == free) {
      backlog_ = true;
      continue;  // Maybe more are due: claim again once slots free up.
    }
    backlog_ = false;
    absl::Duration wait = options_.poll_interval;
    if (next_due && *next_due > absl::ZeroDuration()) {
      wait = std::min(wait, *next_due);
    } else if (next_due) {
      // Due now yet not claimed: another worker holds it in a claim right now; look again soon.
      wait = std::min(wait, absl::Milliseconds(100));
    }
    const auto woken_or_stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || woken_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&woken_or_stop), wait);
  }
}

void VerificationWorker::ExecuteLoop() {
  const int recorders = Recorders(options_);
  const size_t finish_batch = static_cast<size_t>(std::max(1, options_.finish_batch));
  absl::MutexLock lock(&mu_);
  while (true) {
    const auto work_or_stop = [this, recorders]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return (!outcomes_.empty() && recording_ < recorders) || (stopping_ && running_ == 0) ||
             (!stopping_ && !claimed_.empty());
    };
    mu_.Await(absl::Condition(&work_or_stop));
    if (!outcomes_.empty() && recording_ < recorders) {
      // Recording first: it frees slots. Everything waiting goes in one transaction.
      std::vector<std::pair<store::JobRecord, VerificationOutcome>> done;
      done.reserve(std::min(outcomes_.size(), finish_batch));
      while (!outcomes_.empty() && done.size() < finish_batch) {
        done.push_back(std::move(outcomes_.front()));
        outcomes_.pop_front();
      }
      ++recording_;
      mu_.Unlock();
      const absl::Time record_start = absl::Now();
      Record(done);
      const absl::Time record_end = absl::Now();
      mu_.Lock();
      --recording_;
      AddStageTimes(done, record_start, record_end);
      for (const auto& [job, outcome] : done) {
        leased_.erase(job.job_id);
      }
      running_ -= static_cast<int>(done.size());
      finished_ += static_cast<int64_t>(done.size());
      woken_ = true;  // Slots are free, and a retry may now be scheduled: the dispatcher looks.
      continue;
    }
    if (stopping_) {
      if (running_ == 0) {
        return;  // Claimed but unstarted jobs are given back by Stop().
      }
      continue;
    }
    store::JobRecord job = std::move(claimed_.front());
    claimed_.pop_front();
    ++running_;
    stamps_[job.job_id].started = absl::Now();
    mu_.Unlock();
    // An event-driven verifier returns at once and calls back later from its own threads; a
    // blocking one verifies here.
    const store::JobRecord& started = job;
    verifier_.VerifyAsync(started, [this, job](VerificationOutcome outcome) mutable {
      absl::MutexLock lock(&mu_);
      stamps_[job.job_id].done = absl::Now();
      outcomes_.emplace_back(std::move(job), std::move(outcome));
    });
    mu_.Lock();
  }
}

void VerificationWorker::Record(
    const std::vector<std::pair<store::JobRecord, VerificationOutcome>>& done) {
  std::vector<store::FinishRequest> requests;
  requests.reserve(done.size());
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [job, outcome] : done) {
      requests.push_back({job.job_id, ToJobResult(outcome, job.attempts, options_.retry,
                                                  absl::Uniform(random_, 0.0, 1.0))});
    }
  }
  const std::vector<absl::Status> statuses = jobs_.FinishBatch(options_.owner, requests);
  for (size_t i = 0; i < done.size(); ++i) {
    const store::JobRecord& job = done[i].first;
    const store::JobResult& result = requests[i].result;
    const absl::Status& status =
        i < statuses.size() ? statuses[i] : absl::InternalError("no status recorded");
    if (absl::IsFailedPrecondition(status)) {
      logging::Warn("job {} mention={} lost its lease; another worker finishes it", job.job_id,
                    job.mention_id);
      continue;
    }
    if (!status.ok()) {
      // The lease runs out and the job is claimed again.
      logging::Warn("cannot record job {} mention={}: {}", job.job_id, job.mention_id,
                    std::string(status.message()));
      continue;
    }
    logging::Debug("job {} mention={} attempt={} outcome={}{}{}", job.job_id, job.mention_id,
                   job.attempts,
                   result.kind == store::JobResult::Kind::kVerified ? "verified"
                   : result.kind == store::JobResult::Kind::kFailed ? "failed"
                   : result.kind == store::JobResult::Kind::kGiveUp ? "gave_up"
                                                                    : "retry",
                   result.reason.empty() ? "" : " reason=" + result.reason,
                   result.kind == store::JobResult::Kind::kRetry
                       ? " retry_in=" + absl::FormatDuration(result.retry_in)
                       : "");
  }
}

void VerificationWorker::AddStageTimes(
    const std::vector<std::pair<store::JobRecord, VerificationOutcome>>& done,
    absl::Time record_start, absl::Time record_end) {
  StageTotals& t = stages_;
  if (t.since == absl::InfinitePast()) {
    t.since = record_start;
  }
  const absl::Duration recording = record_end - record_start;
  ++t.batches;
  t.recording += recording;
  t.max_recording = std::max(t.max_recording, recording);
  for (const auto& [job, outcome] : done) {
    const auto it = stamps_.find(job.job_id);
    if (it == stamps_.end()) {
      continue;
    }
    const Stamps& s = it->second;
    ++t.jobs;
    t.waiting_to_start += s.started - s.claimed;
    t.verifying += s.done - s.started;
    t.waiting_to_record += record_start - s.done;
    t.max_waiting_to_start = std::max(t.max_waiting_to_start, s.started - s.claimed);
    t.max_verifying = std::max(t.max_verifying, s.done - s.started);
    t.max_waiting_to_record = std::max(t.max_waiting_to_record, record_start - s.done);
    stamps_.erase(it);
  }
  if (record_end - t.since < kStageReportInterval || t.jobs == 0) {
    return;
  }
  const double seconds = absl::ToDoubleSeconds(record_end - t.since);
  logging::Info(
      "verification stages owner={} jobs={} ({:.0f}/s) in_flight={} batches={} (avg {:.1f} "
      "jobs): claimed->started avg {} max {}; started->outcome (fetch + analysis) avg {} max "
      "{}; outcome->recording avg {} max {}; recording per batch avg {} max {}",
      options_.owner, t.jobs, static_cast<double>(t.jobs) / seconds, running_, t.batches,
      static_cast<double>(t.jobs) / static_cast<double>(t.batches), Ms(t.waiting_to_start / t.jobs),
      Ms(t.max_waiting_to_start), Ms(t.verifying / t.jobs), Ms(t.max_verifying),
      Ms(t.waiting_to_record / t.jobs), Ms(t.max_waiting_to_record), Ms(t.recording / t.batches),
      Ms(t.max_recording));
  t = StageTotals{};
}

}  // namespace portcullis::verifier::queue
