#include "ingest-gateway/src/readiness.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "boost/json/object.hpp"
#include "common/logging/log.h"
#include "common/status/status_mapping.h"
#include "grpcpp/client_context.h"
#include "ingest-gateway/src/answers.h"

namespace portcullis::gateway {

GrpcHealthChecker::GrpcHealthChecker(std::shared_ptr<grpc::Channel> channel)
    : stub_(grpc::health::v1::Health::NewStub(std::move(channel))) {}

absl::Status GrpcHealthChecker::Check(absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  // Wait for a connection within the deadline instead of failing fast. Besides giving a verifier
  // that is starting up the whole timeout, this call is what drives the reconnect: gRPC 1.51
  // makes progress on a channel's connection attempt only while some call polls it (otherwise
  // only its backup poller does, every 5 s), and requests fail fast while it is down.
  context.set_wait_for_ready(true);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status grpc_status = stub_->Check(&context, request, &response);
  if (!grpc_status.ok()) {
    return status::FromGrpcStatus(grpc_status);
  }
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    return absl::UnavailableError(
        absl::StrCat("verifier health is ",
                     grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())));
  }
  return absl::OkStatus();
}

Readiness::Readiness(HealthChecker& checker, absl::Duration interval, absl::Duration check_timeout)
    : checker_(checker), interval_(interval), check_timeout_(check_timeout) {}

Readiness::~Readiness() { Stop(); }

void Readiness::Start() {
  poller_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      lock.unlock();
      PollOnce();
      lock.lock();
      wake_.wait_for(lock, absl::ToChronoNanoseconds(interval_), [this] { return stopping_; });
    }
  });
}

void Readiness::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (poller_.joinable()) {
    poller_.join();
  }
}

void Readiness::PollOnce() {
  const absl::Status status = checker_.Check(check_timeout_);
  const bool serving = status.ok();
  const bool was_serving = verifier_serving_.exchange(serving);
  if (serving != was_serving || !polled_once_.exchange(true)) {
    if (serving) {
      logging::Info("verifier is serving: ready");
    } else {
      logging::Warn("verifier is not serving ({}): not ready", status.ToString());
    }
  }
}

http::HttpResponse Readiness::ReadyzResponse() const {
  if (draining()) {
    return ErrorAnswer(Answer::kNotReadyDraining);
  }
  if (!verifier_serving()) {
    return ErrorAnswer(Answer::kNotReadyVerifier);
  }
  boost::json::object body;
  body["status"] = "ready";
  return Answered(Answer::kReady, http::JsonResponse(0, body));
}

http::HttpResponse HealthzResponse() {
  boost::json::object body;
  body["status"] = "ok";
  return Answered(Answer::kHealthy, http::JsonResponse(0, body));
}

}  // namespace portcullis::gateway
