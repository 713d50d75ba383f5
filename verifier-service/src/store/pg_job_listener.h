#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "pqxx/connection"
#include "verifier-service/src/store/job_store.h"

namespace portcullis::verifier::store {

// Tells a worker that jobs were queued: PostgreSQL LISTEN on kJobsChannel over its own
// connection. Not thread-safe: one thread calls Wait(). Connection problems are logged and
// retried on the next Wait(); the worker's fallback poll covers the gap.
class PgJobListener final : public JobNotifications {
 public:
  explicit PgJobListener(std::string database_url);
  ~PgJobListener() override;

  PgJobListener(const PgJobListener&) = delete;
  PgJobListener& operator=(const PgJobListener&) = delete;

  // Blocks until a notification arrives (true) or `timeout` passes (false).
  bool Wait(absl::Duration timeout) override;

 private:
  class Receiver;

  bool Connect();
  void Disconnect();

  const std::string database_url_;
  std::unique_ptr<pqxx::connection> connection_;
  std::unique_ptr<Receiver> receiver_;
  bool notified_ = false;
  bool warned_ = false;
};

}  // namespace portcullis::verifier::store
