#include "verifier-service/src/store/pg_job_listener.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "common/logging/log.h"
#include "pqxx/notification"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_job_store.h"

namespace portcullis::verifier::store {

class PgJobListener::Receiver final : public pqxx::notification_receiver {
 public:
  Receiver(pqxx::connection& connection, bool* notified)
      : pqxx::notification_receiver(connection, kJobsChannel), notified_(notified) {}
  void operator()(const std::string&, int) override { *notified_ = true; }

 private:
  bool* notified_;
};

PgJobListener::PgJobListener(std::string database_url) : database_url_(std::move(database_url)) {}

PgJobListener::~PgJobListener() { Disconnect(); }

void PgJobListener::Disconnect() {
  receiver_.reset();
  connection_.reset();
}

bool PgJobListener::Connect() {
  try {
    connection_ = std::make_unique<pqxx::connection>(database_url_);
    receiver_ = std::make_unique<Receiver>(*connection_, &notified_);
    connection_->get_notifs();  // Issues the LISTEN now.
    if (warned_) {
      logging::Info("job listener connected again");
      warned_ = false;
    }
    return true;
  } catch (...) {
    bool unused = true;
    const absl::Status status = StatusFromCurrentDatabaseException("listen_jobs", &unused);
    if (!warned_) {
      logging::Warn("job listener cannot connect, falling back to polling: {}",
                    std::string(status.message()));
      warned_ = true;
    }
    Disconnect();
    return false;
  }
}

bool PgJobListener::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  if (connection_ == nullptr && !Connect()) {
    absl::SleepFor(std::min(timeout, absl::Seconds(1)));
    return false;
  }
  notified_ = false;
  try {
    connection_->get_notifs();
    while (!notified_) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return false;
      }
      const int64_t micros = std::max<int64_t>(absl::ToInt64Microseconds(left), 1);
      connection_->await_notification(micros / 1000000, micros % 1000000);
    }
    return true;
  } catch (...) {
    bool unused = true;
    StatusFromCurrentDatabaseException("listen_jobs", &unused).IgnoreError();  // Logged.
    Disconnect();
    return false;
  }
}

}  // namespace portcullis::verifier::store
