#include "verifier-service/src/store/admission_counters.h"

namespace portcullis::verifier::store {

bool AdmissionCounters::ClaimQueueRefresh(absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (now - queue_read_at_ < limits_.refresh_interval) {
    return false;
  }
  queue_read_at_ = now;  // The claim: others see a fresh read time until the count arrives.
  return true;
}

void AdmissionCounters::SetQueueLength(int64_t count, absl::Time now) {
  absl::MutexLock lock(&mu_);
  queue_length_ = count;
  queue_read_at_ = now;
  absl::erase_if(hosts_, [&](const auto& entry) {
    return now - entry.second.read_at >= limits_.refresh_interval;
  });
}

bool AdmissionCounters::HostStale(const std::string& host, absl::Time now) const {
  absl::MutexLock lock(&mu_);
  const auto it = hosts_.find(host);
  return it == hosts_.end() || now - it->second.read_at >= limits_.refresh_interval;
}

void AdmissionCounters::SetPendingOfHost(const std::string& host, int64_t count, absl::Time now) {
  absl::MutexLock lock(&mu_);
  hosts_[host] = {count, now};
}

absl::Status AdmissionCounters::Batch::Admit(const std::string& source_host) {
  const SubmitLimits& limits = counters_.limits_;
  int64_t queue_length = 0;
  int64_t host_pending = 0;
  {
    absl::MutexLock lock(&counters_.mu_);
    queue_length = counters_.queue_length_;
    const auto it = counters_.hosts_.find(source_host);
    if (it != counters_.hosts_.end()) {
      host_pending = it->second.pending;
    }
  }
  if (limits.max_queue_length > 0 && queue_length + queued_ >= limits.max_queue_length) {
    return absl::UnavailableError("verification queue full, retry later");
  }
  int64_t& batch_pending = pending_of_host_[source_host];
  if (limits.max_pending_per_source_host > 0 &&
      host_pending + batch_pending >= limits.max_pending_per_source_host) {
    return absl::ResourceExhaustedError(
        "too many mentions from this source host are waiting for verification, retry later");
  }
  ++queued_;
  ++batch_pending;
  return absl::OkStatus();
}

void AdmissionCounters::Commit(const Batch& batch) {
  absl::MutexLock lock(&mu_);
  queue_length_ += batch.queued_;
  for (const auto& [host, admitted] : batch.pending_of_host_) {
    const auto it = hosts_.find(host);
    if (it != hosts_.end()) {
      it->second.pending += admitted;
    }
  }
}

}  // namespace portcullis::verifier::store
