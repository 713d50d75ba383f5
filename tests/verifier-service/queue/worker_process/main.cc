// A verification worker process for the multi-process queue tests: the real VerificationWorker,
// PgJobStore and PgJobListener, with a test MentionVerifier that records every call in the table
// `test_verifications` (created by the test) and then takes --verify_time. Runs until SIGTERM.
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "common/lifecycle/termination_signal.h"
#include "common/logging/log.h"
#include "pqxx/pqxx"
#include "verifier-service/src/queue/verification_worker.h"
#include "verifier-service/src/store/pg_job_listener.h"
#include "verifier-service/src/store/pg_job_store.h"

ABSL_FLAG(std::string, database_url, "", "libpq connection string");
ABSL_FLAG(std::string, owner, "", "lease owner name");
ABSL_FLAG(int, concurrency, 4, "jobs at once");
ABSL_FLAG(absl::Duration, lease, absl::Seconds(2), "job lease");
ABSL_FLAG(absl::Duration, verify_time, absl::ZeroDuration(), "time each verification takes");

namespace {

using portcullis::verifier::queue::MentionVerifier;
using portcullis::verifier::queue::VerificationOutcome;

class RecordingVerifier final : public MentionVerifier {
 public:
  RecordingVerifier(std::string database_url, std::string owner, absl::Duration verify_time)
      : database_url_(std::move(database_url)),
        owner_(std::move(owner)),
        verify_time_(verify_time) {}

  VerificationOutcome Verify(const portcullis::verifier::store::JobRecord& job) override {
    try {
      pqxx::connection connection(database_url_);
      pqxx::work work(connection);
      work.exec_params0(
          "INSERT INTO test_verifications (job_id, mention_id, owner) VALUES ($1, $2::uuid, $3)",
          job.job_id, job.mention_id, owner_);
      work.commit();
    } catch (const std::exception& e) {
      portcullis::logging::Error("cannot record verification: {}", e.what());
      return VerificationOutcome::Retry("test_recording_failed");
    }
    absl::SleepFor(verify_time_);
    return VerificationOutcome::Verified();
  }

 private:
  const std::string database_url_;
  const std::string owner_;
  const absl::Duration verify_time_;
};

}  // namespace

int main(int argc, char** argv) {
  portcullis::lifecycle::BlockTerminationSignals();
  absl::ParseCommandLine(argc, argv);
  if (!portcullis::logging::Init("test-worker", "info").ok()) {
    return 2;
  }
  const std::string url = absl::GetFlag(FLAGS_database_url);
  auto pool = portcullis::verifier::store::PgConnectionPool::Create(
      {url, absl::GetFlag(FLAGS_concurrency) + 2, absl::Seconds(5), absl::Seconds(5)});
  if (!pool.ok()) {
    return 2;
  }
  portcullis::verifier::store::PgJobStore jobs(**pool);
  portcullis::verifier::store::PgJobListener listener(url);
  RecordingVerifier verifier(url, absl::GetFlag(FLAGS_owner), absl::GetFlag(FLAGS_verify_time));
  portcullis::verifier::queue::WorkerOptions options;
  options.owner = absl::GetFlag(FLAGS_owner);
  options.concurrency = absl::GetFlag(FLAGS_concurrency);
  options.lease = absl::GetFlag(FLAGS_lease);
  options.poll_interval = absl::Seconds(30);
  portcullis::verifier::queue::VerificationWorker worker(jobs, listener, verifier, options);
  worker.Start();
  portcullis::lifecycle::WaitForTerminationSignal();
  worker.Stop();
  return 0;
}
