#include "common/grpc/channel_credentials.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "tests/support/test_certificates.h"

namespace portcullis::grpc_tls {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// One test dials "localhost" (to see the name checked against the certificate). Through gRPC's
// c-ares resolver that lookup leaks 10 bytes inside Debian's c-ares 1.18, which LeakSanitizer
// reports under `scripts/test --sanitizers`; this suite is about certificates, not resolution, so
// it resolves with getaddrinfo. Set before main, so before gRPC reads it.
[[maybe_unused]] const bool kNativeResolver = [] {
  ::setenv("GRPC_DNS_RESOLVER", "native", /*overwrite=*/0);
  return true;
}();

class ServingHealth final : public grpc::health::v1::Health::CallbackService {
 public:
  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* /*request*/,
                                  grpc::health::v1::HealthCheckResponse* response) override {
    response->set_status(grpc::health::v1::HealthCheckResponse::SERVING);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

// One PKI for the whole suite: a CA, a server certificate for verifier.test and 127.0.0.1, a
// client certificate, and a client certificate of a second CA the server does not know.
class ChannelCredentialsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char dir_template[] = "/tmp/portcullis-tls-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    absl::StatusOr<testing::TestPki> pki = testing::TestPki::Create(dir_template);
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = new testing::TestPki(*std::move(pki));
    ASSERT_TRUE(pki_->MakeCa("ca").ok());
    ASSERT_TRUE(pki_->Issue("ca", "server", 11, {"DNS:verifier.test", "IP:127.0.0.1"}).ok());
    ASSERT_TRUE(pki_->Issue("ca", "client", 12, {"DNS:gateway.test"}).ok());
    ASSERT_TRUE(pki_->MakeCa("other-ca").ok());
    ASSERT_TRUE(pki_->Issue("other-ca", "stranger", 13, {"DNS:gateway.test"}).ok());
  }
  static void TearDownTestSuite() {
    if (pki_ != nullptr) {
      std::filesystem::remove_all(pki_->directory());
      delete pki_;
      pki_ = nullptr;
    }
  }

  void TearDown() override {
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now());
    }
  }

  static ServerTlsOptions MutualServer() {
    ServerTlsOptions options;
    options.cert_file = pki_->Cert("server");
    options.key_file = pki_->Key("server");
    options.client_ca_file = pki_->Cert("ca");
    return options;
  }

  static ClientTlsOptions Client(const std::string& identity) {
    ClientTlsOptions options;
    options.ca_file = pki_->Cert("ca");
    options.server_name = "verifier.test";
    if (!identity.empty()) {
      options.cert_file = pki_->Cert(identity);
      options.key_file = pki_->Key(identity);
    }
    return options;
  }

  void StartServer(const ServerTlsOptions& options) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
        MakeServerCredentials(options);
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", *credentials, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }

  // One health Check over a fresh channel built from `options` (2 s deadline, fails fast when
  // the connection cannot be made).
  grpc::Status Check(const ClientTlsOptions& options, const std::string& host = "127.0.0.1") {
    absl::StatusOr<ChannelSecurity> security = MakeChannelSecurity(options);
    EXPECT_TRUE(security.ok()) << security.status();
    if (!security.ok()) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "no credentials");
    }
    grpc::ChannelArguments args;
    security->ApplyTo(args);
    auto channel = grpc::CreateCustomChannel(host + ":" + std::to_string(port_),
                                             security->credentials, args);
    auto stub = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    return stub->Check(&context, request, &response);
  }

  static testing::TestPki* pki_;
  ServingHealth service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

testing::TestPki* ChannelCredentialsTest::pki_ = nullptr;

TEST_F(ChannelCredentialsTest, MutualTlsClientWithCertificateOfTheCaIsServed) {
  StartServer(MutualServer());
  const grpc::Status status = Check(Client("client"));
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(ChannelCredentialsTest, MutualTlsRefusesClientsWithoutAKnownCertificate) {
  StartServer(MutualServer());
  EXPECT_FALSE(Check(Client("")).ok()) << "TLS without a client certificate";
  EXPECT_FALSE(Check(Client("stranger")).ok()) << "client certificate of an unknown CA";
  EXPECT_FALSE(Check(ClientTlsOptions{}).ok()) << "plaintext";
}

TEST_F(ChannelCredentialsTest, ClientRefusesAServerCertificateWithoutTheExpectedName) {
  StartServer(MutualServer());
  ClientTlsOptions options = Client("client");
  options.server_name = "other.test";
  EXPECT_FALSE(Check(options).ok());
}

TEST_F(ChannelCredentialsTest, ClientRefusesAServerOfAnotherCa) {
  StartServer(MutualServer());
  ClientTlsOptions options = Client("client");
  options.ca_file = pki_->Cert("other-ca");
  EXPECT_FALSE(Check(options).ok());
}

TEST_F(ChannelCredentialsTest, WithoutServerNameTheTargetHostIsChecked) {
  StartServer(MutualServer());
  ClientTlsOptions options = Client("client");
  options.server_name.clear();
  // The certificate carries IP:127.0.0.1 but not "localhost".
  EXPECT_TRUE(Check(options, "127.0.0.1").ok());
  EXPECT_FALSE(Check(options, "localhost").ok());
}

TEST_F(ChannelCredentialsTest, ServerTlsWithoutClientCaServesClientsWithoutCertificate) {
  ServerTlsOptions server = MutualServer();
  server.client_ca_file.clear();
  StartServer(server);
  EXPECT_TRUE(Check(Client("")).ok());
  EXPECT_FALSE(Check(ClientTlsOptions{}).ok()) << "plaintext";
}

TEST_F(ChannelCredentialsTest, NoOptionsIsPlaintext) {
  StartServer(ServerTlsOptions{});
  EXPECT_TRUE(Check(ClientTlsOptions{}).ok());
  EXPECT_FALSE(Check(Client("client")).ok()) << "TLS to a plaintext server";
}

TEST(ServerTlsOptionsTest, CertificateAndKeyComeTogether) {
  ServerTlsOptions options;
  options.cert_file = "/x/server.crt";
  EXPECT_THAT(CheckServerTlsOptions(options).message(),
              AllOf(HasSubstr("--tls_key_file"), HasSubstr("--tls_cert_file")));
  options.cert_file.clear();
  options.key_file = "/x/server.key";
  EXPECT_FALSE(CheckServerTlsOptions(options).ok());
}

TEST(ServerTlsOptionsTest, ClientCaNeedsServerCertificate) {
  ServerTlsOptions options;
  options.client_ca_file = "/x/ca.crt";
  const absl::Status status = CheckServerTlsOptions(options);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("--tls_client_ca_file"));
}

TEST(ServerTlsOptionsTest, ReloadIntervalOfAtLeastOneSecond) {
  ServerTlsOptions options;
  options.reload_interval = absl::Milliseconds(500);
  EXPECT_THAT(CheckServerTlsOptions(options).message(), HasSubstr("--tls_reload_interval"));
  options.reload_interval = absl::Seconds(1);
  EXPECT_TRUE(CheckServerTlsOptions(options).ok());
}

TEST(ClientTlsOptionsTest, EveryTlsOptionNeedsTheCa) {
  ClientTlsOptions options;
  options.cert_file = "/x/client.crt";
  options.key_file = "/x/client.key";
  EXPECT_THAT(CheckClientTlsOptions(options).message(), HasSubstr("--verifier_tls_ca_file"));
  options = ClientTlsOptions{};
  options.server_name = "verifier.test";
  EXPECT_THAT(CheckClientTlsOptions(options).message(), HasSubstr("--verifier_tls_ca_file"));
  options = ClientTlsOptions{};
  options.ca_file = "/x/ca.crt";
  options.cert_file = "/x/client.crt";
  EXPECT_THAT(CheckClientTlsOptions(options).message(), HasSubstr("--verifier_tls_key_file"));
}

TEST(ClientTlsOptionsTest, FlagNamesAreTheCallers) {
  ClientTlsOptions options;
  options.server_name = "verifier.test";
  options.flag_names.ca_file = "PORTCULLIS_TLS_CA_FILE";
  EXPECT_THAT(CheckClientTlsOptions(options).message(), HasSubstr("PORTCULLIS_TLS_CA_FILE"));
}

TEST_F(ChannelCredentialsTest, MissingFileNamesTheFlagAndThePath) {
  ServerTlsOptions options = MutualServer();
  options.cert_file = pki_->directory() + "/missing.crt";
  const absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options);
  ASSERT_TRUE(absl::IsInvalidArgument(credentials.status()));
  EXPECT_THAT(credentials.status().message(),
              AllOf(HasSubstr("--tls_cert_file"), HasSubstr("missing.crt"),
                    HasSubstr("cannot read")));

  ClientTlsOptions client = Client("client");
  client.ca_file = pki_->directory() + "/missing-ca.crt";
  EXPECT_THAT(MakeChannelSecurity(client).status().message(),
              AllOf(HasSubstr("--verifier_tls_ca_file"), HasSubstr("missing-ca.crt")));
}

TEST_F(ChannelCredentialsTest, FileWithoutCertificateIsRefused) {
  ServerTlsOptions options = MutualServer();
  options.client_ca_file = pki_->Key("ca");  // A key, not a certificate.
  EXPECT_THAT(MakeServerCredentials(options).status().message(),
              AllOf(HasSubstr("--tls_client_ca_file"), HasSubstr("no PEM certificate")));
}

TEST_F(ChannelCredentialsTest, KeyOfAnotherCertificateIsRefused) {
  ServerTlsOptions options = MutualServer();
  options.key_file = pki_->Key("client");
  EXPECT_THAT(MakeServerCredentials(options).status().message(),
              AllOf(HasSubstr("--tls_key_file"), HasSubstr("not the private key")));

  ClientTlsOptions client = Client("client");
  client.cert_file = pki_->Cert("server");
  EXPECT_THAT(MakeChannelSecurity(client).status().message(),
              HasSubstr("--verifier_tls_key_file"));
}

}  // namespace
}  // namespace portcullis::grpc_tls
