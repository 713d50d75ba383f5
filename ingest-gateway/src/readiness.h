#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/channel.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"

// Liveness and readiness of the gateway. Ready means: not draining, and the verifier's last
// grpc.health.v1 Check answered SERVING.
namespace portcullis::gateway {

// Asks the verifier whether it serves. Blocking; called from the readiness poller only.
class HealthChecker {
 public:
  virtual ~HealthChecker() = default;
  // OK when the verifier answered SERVING within `timeout`; an error status otherwise.
  virtual absl::Status Check(absl::Duration timeout) = 0;
};

// grpc.health.v1 Check over the verifier channel, for the whole server (service "").
class GrpcHealthChecker final : public HealthChecker {
 public:
  explicit GrpcHealthChecker(std::shared_ptr<grpc::Channel> channel);
  absl::Status Check(absl::Duration timeout) override;

 private:
  std::unique_ptr<grpc::health::v1::Health::Stub> stub_;
};

class Readiness {
 public:
  // `checker` must outlive this object. Each check may take at most `check_timeout`.
  Readiness(HealthChecker& checker, absl::Duration interval, absl::Duration check_timeout);
  ~Readiness();  // Stops the poller.

  // Starts a thread that checks at once, then every `interval`.
  void Start();
  void Stop();

  // One check, recorded. The poller calls this; tests call it directly.
  void PollOnce();

  // From now on not ready (SIGTERM received).
  void SetDraining() { draining_.store(true); }

  bool draining() const { return draining_.load(); }
  bool verifier_serving() const { return verifier_serving_.load(); }
  bool IsReady() const { return !draining() && verifier_serving(); }

  // GET /readyz: 200 {"status":"ready"} or 503 {"error":"not_ready",...}.
  http::HttpResponse ReadyzResponse() const;

 private:
  HealthChecker& checker_;
  const absl::Duration interval_;
  const absl::Duration check_timeout_;
  std::atomic<bool> draining_{false};
  std::atomic<bool> verifier_serving_{false};
  std::atomic<bool> polled_once_{false};  // The first result is logged either way.

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread poller_;
};

// GET /healthz: always 200 {"status":"ok"}; touches nothing.
http::HttpResponse HealthzResponse();

}  // namespace portcullis::gateway
