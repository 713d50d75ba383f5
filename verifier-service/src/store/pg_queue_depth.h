#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// Verification jobs due now (run_at passed) and not leased to a live worker, counted up to `cap`:
// the backlog waiting for a worker, for the queue-depth metric. Cheap however long the queue:
// it walks the run_at index (verification_jobs_due_idx) and stops after `cap` due rows, so a
// sample reads at most `cap` plus the leased rows (at most the workers of every pod); finished
// jobs are deleted, so no history is scanned either. Errors as PgConnectionPool::Run.
absl::StatusOr<int64_t> CountDueJobs(PgConnectionPool& pool, int64_t cap);

}  // namespace portcullis::verifier::store
