#pragma once

// The VerifierService of a ServiceParts (service_deps.h) on 127.0.0.1:0 over real gRPC (insecure,
// loopback only), and a client stub to it: for tests that call the service as a client would. The
// service knows one token, test_tokens::ProcessToken() (every scope, every site); a call carries
// it with test_tokens::AddBearerToken.

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/verifier-service/server/service_deps.h"
#include "tests/verifier-service/server/test_tokens.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::test_service {

class LoopbackService {
 public:
  LoopbackService() = default;
  LoopbackService(const LoopbackService&) = delete;
  LoopbackService& operator=(const LoopbackService&) = delete;
  ~LoopbackService() { Shutdown(); }

  // Builds the service of `parts` (which must outlive this) and serves it. A test failure when
  // it cannot: call it under ASSERT_NO_FATAL_FAILURE, or from SetUp.
  void Start(ServiceParts& parts) {
    tokens_ = test_tokens::StaticRegistry(no_database_, {test_tokens::ProcessToken()});
    service_ = parts.Build(*tokens_);
    ASSERT_NE(service_, nullptr);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port, 0);
    stub_ = v1::Verifier::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  }

  // Stops serving, with 5 s for the calls in flight. Once; before Start, nothing.
  void Shutdown() {
    if (server_ != nullptr && !shut_down_) {
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
      shut_down_ = true;
    }
  }

  // The service and a client of it; valid after a successful Start.
  server::VerifierService& service() { return *service_; }
  v1::Verifier::Stub& stub() { return *stub_; }

 private:
  test_tokens::NoDatabaseTokens no_database_;
  std::unique_ptr<auth::TokenRegistry> tokens_;
  std::unique_ptr<server::VerifierService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Verifier::Stub> stub_;
  bool shut_down_ = false;
};

}  // namespace portcullis::verifier::test_service
