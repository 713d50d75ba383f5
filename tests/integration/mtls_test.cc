// Mutual TLS between the real gateway and the real verifier (issue 9): certificates made in the
// test with the openssl command; a client without a certificate of the verifier's client CA gets
// no connection at all; a renewed server certificate is served within the reload interval while
// the gateway keeps working without a restart.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/crypto/sha256.h"
#include "common/grpc/authorized_channel.h"
#include "common/grpc/channel_credentials.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/integration/fixture.h"
#include "tests/support/test_certificates.h"

namespace portcullis::integration {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr char kServerName[] = "verifier.test";
constexpr char kTarget[] = "https://bob.example/post";
// Tokens of this test, in the verifier's --tokens_file (hashes only) and the gateway's token file.
constexpr char kAdminToken[] =
    "pct_a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
constexpr char kGatewayToken[] =
    "pct_b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1";
// Serials, as `openssl x509 -serial` prints them.
constexpr int kFirstServerSerial = 0x1001;
constexpr int kRenewedServerSerial = 0x1002;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

class MtlsTest : public StackTest {
 protected:
  void SetUp() override {
    start_stack_ = false;
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    char dir_template[] = "/tmp/portcullis-mtls-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    absl::StatusOr<testing::TestPki> pki = testing::TestPki::Create(dir_ + "/pki");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = std::make_unique<testing::TestPki>(*std::move(pki));
    ASSERT_TRUE(pki_->MakeCa("ca").ok());
    ASSERT_TRUE(
        pki_->Issue("ca", "server", kFirstServerSerial, {"DNS:verifier.test", "IP:127.0.0.1"})
            .ok());
    ASSERT_TRUE(pki_->Issue("ca", "gateway", 0x2001, {"DNS:gateway.test"}).ok());
    ASSERT_TRUE(pki_->MakeCa("other-ca").ok());
    ASSERT_TRUE(pki_->Issue("other-ca", "stranger", 0x3001, {"DNS:gateway.test"}).ok());
    // The verifier serves the files a renewal replaces.
    std::filesystem::copy_file(pki_->Cert("server"), ServedCert());
    std::filesystem::copy_file(pki_->Key("server"), ServedKey());
    std::filesystem::copy_file(pki_->Cert("gateway"), GatewayCert());
    std::filesystem::copy_file(pki_->Key("gateway"), GatewayKey());

    WriteFile(dir_ + "/tokens",
              absl::StrCat(crypto::ToHex(crypto::Sha256(kAdminToken)),
                           " mtls-admin submit,read,admin,fetch\n",
                           crypto::ToHex(crypto::Sha256(kGatewayToken)),
                           " mtls-gateway submit,read\n"));
    WriteFile(dir_ + "/gateway-token", absl::StrCat(kGatewayToken, "\n"));
    WriteFile(dir_ + "/admin-token", absl::StrCat(kAdminToken, "\n"));
  }

  void TearDown() override {
    StackTest::TearDown();
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }

  std::string ServedCert() const { return dir_ + "/tls.crt"; }
  std::string ServedKey() const { return dir_ + "/tls.key"; }
  std::string GatewayCert() const { return dir_ + "/gateway.crt"; }
  std::string GatewayKey() const { return dir_ + "/gateway.key"; }

  // Replaces a served certificate and key with `name`'s, each by a rename, as a Secret update does.
  void Replace(const std::string& name, const std::string& cert, const std::string& key) {
    std::filesystem::copy_file(pki_->Key(name), key + ".new");
    std::filesystem::copy_file(pki_->Cert(name), cert + ".new");
    std::filesystem::rename(key + ".new", key);
    std::filesystem::rename(cert + ".new", cert);
  }

  // Posts webmentions (distinct sources) until one answers `status`; false after 15 s.
  bool PostUntil(int status, const std::string& source_prefix) {
    const absl::Time deadline = absl::Now() + absl::Seconds(15);
    for (int i = 0; absl::Now() < deadline; ++i) {
      if (stack_->PostWebmention(absl::StrCat(source_prefix, i), kTarget).status == status) {
        return true;
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    return false;
  }

  // The verifier with mutual TLS (files re-read every second) and the gateway with its client
  // certificate, until /readyz answers 200.
  void StartMutualTlsStack(const std::vector<std::string>& extra_verifier_args = {}) {
    std::vector<std::string> verifier_args = {
        "--tls_cert_file=" + ServedCert(),
        "--tls_key_file=" + ServedKey(),
        "--tls_client_ca_file=" + pki_->Cert("ca"),
        "--tls_reload_interval=1s",
        "--tokens_file=" + dir_ + "/tokens",
    };
    verifier_args.insert(verifier_args.end(), extra_verifier_args.begin(),
                         extra_verifier_args.end());
    ASSERT_TRUE(stack_->StartVerifier(verifier_args).ok());
    ASSERT_TRUE(stack_
                    ->StartGateway({
                        "--verifier_tls_ca_file=" + pki_->Cert("ca"),
                        "--verifier_tls_cert_file=" + GatewayCert(),
                        "--verifier_tls_key_file=" + GatewayKey(),
                        absl::StrCat("--verifier_tls_server_name=", kServerName),
                        "--verifier_tls_reload_interval=1s",
                        "--verifier_token_file=" + dir_ + "/gateway-token",
                    })
                    .ok());
    const absl::Status ready = stack_->WaitForReadyz(200, absl::Seconds(30));
    ASSERT_TRUE(ready.ok()) << ready;
  }

  // A client of the verifier with `identity` as its client certificate ("" for none), trusting
  // `ca`.
  grpc_tls::ClientTlsOptions TlsClient(const std::string& identity,
                                       const std::string& ca = "ca") const {
    grpc_tls::ClientTlsOptions options;
    options.ca_file = pki_->Cert(ca);
    options.server_name = kServerName;
    if (!identity.empty()) {
      options.cert_file = pki_->Cert(identity);
      options.key_file = pki_->Key(identity);
    }
    return options;
  }

  // A stub on its own channel; the admin token on every call.
  std::unique_ptr<v1::Verifier::Stub> Stub(const grpc_tls::ClientTlsOptions& options) {
    absl::StatusOr<grpc_tls::ChannelSecurity> security = grpc_tls::MakeChannelSecurity(options);
    EXPECT_TRUE(security.ok()) << security.status();
    grpc::ChannelArguments args;
    if (security.ok()) {
      security->ApplyTo(args);
    }
    return v1::Verifier::NewStub(grpc_client::CreateAuthorizedChannel(
        stack_->grpc_target(), security.ok() ? security->credentials : nullptr, args,
        kAdminToken));
  }

  // Registers the site and target of kTarget over mutual TLS with the gateway's CA.
  void ServeTargetOverMutualTls() {
    std::unique_ptr<v1::Verifier::Stub> stub = Stub(TlsClient("gateway"));
    {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
      context.set_wait_for_ready(true);
      v1::AddSiteRequest request;
      request.set_domain("bob.example");
      v1::AddSiteResponse response;
      const grpc::Status status = stub->AddSite(&context, request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    v1::AddTargetRequest request;
    request.set_url(kTarget);
    request.set_kind(v1::TARGET_KIND_EXACT);
    v1::AddTargetResponse response;
    const grpc::Status status = stub->AddTarget(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // SubmitMention straight to the verifier over a client built from `options`, failing fast
  // (no wait for ready) when no connection can be made.
  grpc::Status Submit(const grpc_tls::ClientTlsOptions& options, const std::string& source) {
    std::unique_ptr<v1::Verifier::Stub> stub = Stub(options);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(3)));
    v1::SubmitMentionRequest request;
    request.set_source(source);
    request.set_target(kTarget);
    v1::SubmitMentionResponse response;
    return stub->SubmitMention(&context, request, &response);
  }

  long long Mentions() { return QueryCount(*database_, "SELECT count(*) FROM mentions"); }

  std::string dir_;
  std::unique_ptr<testing::TestPki> pki_;
};

TEST_F(MtlsTest, GatewayWithClientCertificateIsServed) {
  ASSERT_NO_FATAL_FAILURE(StartMutualTlsStack());
  ASSERT_NO_FATAL_FAILURE(ServeTargetOverMutualTls());

  const testing::HttpResult accepted =
      stack_->PostWebmention("https://alice.example/reply", kTarget);
  ASSERT_EQ(accepted.status, 202) << accepted.body << accepted.error;
  EXPECT_EQ(QueryCount(*database_,
                       "SELECT count(*) FROM mentions WHERE source = "
                       "'https://alice.example/reply' AND state = 'PENDING'"),
            1);
  // The admin and metrics HTTP ports are unchanged: plain HTTP.
  EXPECT_EQ(stack_->Get("/healthz").status, 200);
}

TEST_F(MtlsTest, ClientsWithoutAKnownCertificateGetNoConnection) {
  ASSERT_NO_FATAL_FAILURE(StartMutualTlsStack());
  ASSERT_NO_FATAL_FAILURE(ServeTargetOverMutualTls());

  const grpc::Status plaintext = Submit(grpc_tls::ClientTlsOptions{}, "https://a.example/1");
  EXPECT_EQ(plaintext.error_code(), grpc::StatusCode::UNAVAILABLE) << plaintext.error_message();
  const grpc::Status no_certificate = Submit(TlsClient(""), "https://a.example/2");
  EXPECT_EQ(no_certificate.error_code(), grpc::StatusCode::UNAVAILABLE)
      << no_certificate.error_message();
  const grpc::Status unknown_ca = Submit(TlsClient("stranger"), "https://a.example/3");
  EXPECT_EQ(unknown_ca.error_code(), grpc::StatusCode::UNAVAILABLE)
      << unknown_ca.error_message();
  EXPECT_EQ(Mentions(), 0);

  // The same call with the gateway's certificate goes through: what was refused was the
  // connection, not the call.
  const grpc::Status known = Submit(TlsClient("gateway"), "https://a.example/4");
  EXPECT_TRUE(known.ok()) << known.error_message();
  EXPECT_EQ(Mentions(), 1);
}

TEST_F(MtlsTest, CliWithClientCertificateIsServedAndWithoutItIsNot) {
  ASSERT_NO_FATAL_FAILURE(StartMutualTlsStack());
  ASSERT_NO_FATAL_FAILURE(ServeTargetOverMutualTls());
  const std::vector<std::string> common = {
      absl::StrCat("--verifier=", stack_->grpc_target()), "--token_file=" + dir_ + "/admin-token",
      "--timeout=3s"};
  std::vector<std::string> mutual = common;
  mutual.insert(mutual.end(), {"--tls_ca_file=" + pki_->Cert("ca"),
                               "--tls_cert_file=" + pki_->Cert("gateway"),
                               "--tls_key_file=" + pki_->Key("gateway"),
                               absl::StrCat("--tls_server_name=", kServerName), "site", "list"});
  const testing::CommandResult listed = testing::RunCommand(PORTCULLIS_CLI_BINARY, mutual);
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("bob.example"), std::string::npos) << listed.output;

  std::vector<std::string> plaintext = common;
  plaintext.insert(plaintext.end(), {"site", "list"});
  const testing::CommandResult refused = testing::RunCommand(PORTCULLIS_CLI_BINARY, plaintext);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_EQ(refused.output.find("bob.example"), std::string::npos) << refused.output;
}

TEST_F(MtlsTest, PlaintextHealthPortAnswersHealthOnly) {
  const int health_port = testing::FreeLoopbackPort();
  ASSERT_NO_FATAL_FAILURE(
      StartMutualTlsStack({absl::StrCat("--health_listen=127.0.0.1:", health_port)}));
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", health_port),
                                     grpc::InsecureChannelCredentials());
  {
    auto health = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service("portcullis.verifier.v1.Verifier");
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = health->Check(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  // The verifier's API is not on it.
  auto stub = v1::Verifier::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  v1::ListSitesRequest request;
  v1::ListSitesResponse response;
  EXPECT_EQ(stub->ListSites(&context, request, &response).error_code(),
            grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(MtlsTest, MissingCertificateFileStopsStartupNamingTheFlag) {
  ASSERT_TRUE(stack_
                  ->StartVerifier({"--tls_cert_file=" + dir_ + "/missing.crt",
                                   "--tls_key_file=" + ServedKey()})
                  .ok());
  const absl::StatusOr<int> verifier_exit = stack_->verifier().Wait(absl::Seconds(10));
  ASSERT_TRUE(verifier_exit.ok()) << "the verifier kept running";
  EXPECT_NE(*verifier_exit, 0);
  EXPECT_NE(stack_->verifier().Log().find("--tls_cert_file"), std::string::npos)
      << stack_->verifier().Log();

  ASSERT_TRUE(stack_
                  ->StartGateway({"--verifier_tls_ca_file=" + dir_ + "/missing-ca.crt",
                                  "--verifier_token_file=" + dir_ + "/gateway-token"})
                  .ok());
  const absl::StatusOr<int> gateway_exit = stack_->gateway().Wait(absl::Seconds(10));
  ASSERT_TRUE(gateway_exit.ok()) << "the gateway kept running";
  EXPECT_NE(*gateway_exit, 0);
  EXPECT_NE(stack_->gateway().Log().find("--verifier_tls_ca_file"), std::string::npos)
      << stack_->gateway().Log();
}

TEST_F(MtlsTest, RenewedServerCertificateIsServedWhileTheGatewayKeepsWorking) {
  // Connections are closed after a second, so the gateway makes new ones (new handshakes)
  // throughout the test instead of keeping the first.
  ASSERT_NO_FATAL_FAILURE(StartMutualTlsStack({"--max_connection_age=1s"}));
  ASSERT_NO_FATAL_FAILURE(ServeTargetOverMutualTls());
  const absl::StatusOr<std::string> first_serial = testing::FileSerial(pki_->Cert("server"));
  ASSERT_TRUE(first_serial.ok()) << first_serial.status();
  const absl::StatusOr<std::string> presented = testing::PresentedSerial(
      stack_->grpc_port(), kServerName, pki_->Cert("ca"), pki_->Cert("gateway"),
      pki_->Key("gateway"));
  ASSERT_TRUE(presented.ok()) << presented.status();
  EXPECT_EQ(*presented, *first_serial);
  ASSERT_EQ(stack_->PostWebmention("https://alice.example/before", kTarget).status, 202);

  // The renewal: a new pair from the same CA, each file replaced by a rename (as a Secret
  // update or cert-manager does), the verifier left running.
  ASSERT_TRUE(
      pki_->Issue("ca", "renewed", kRenewedServerSerial, {"DNS:verifier.test", "IP:127.0.0.1"})
          .ok());
  const absl::StatusOr<std::string> renewed_serial = testing::FileSerial(pki_->Cert("renewed"));
  ASSERT_TRUE(renewed_serial.ok()) << renewed_serial.status();
  ASSERT_NE(*renewed_serial, *first_serial);
  Replace("renewed", ServedCert(), ServedKey());
  const absl::Time renewed_at = absl::Now();

  // Within the reload interval (1 s; allow for a loaded machine), new connections get it.
  std::string serial;
  while (absl::Now() < renewed_at + absl::Seconds(15)) {
    serial = testing::PresentedSerial(stack_->grpc_port(), kServerName, pki_->Cert("ca"),
                                      pki_->Cert("gateway"), pki_->Key("gateway"))
                 .value_or("");
    if (serial == *renewed_serial) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_EQ(serial, *renewed_serial);
  const absl::Duration took = absl::Now() - renewed_at;
  EXPECT_LT(took, absl::Seconds(5)) << "the renewed certificate took " << took;
  std::fprintf(stderr, "renewed certificate served after %s\n",
               absl::FormatDuration(took).c_str());

  // The gateway, not restarted, reconnects (its connections age out after a second) to the
  // renewed certificate and keeps accepting.
  absl::SleepFor(absl::Seconds(2));
  for (int i = 0; i < 3; ++i) {
    const testing::HttpResult accepted =
        stack_->PostWebmention(absl::StrCat("https://alice.example/after-", i), kTarget);
    EXPECT_EQ(accepted.status, 202) << accepted.body << accepted.error;
    absl::SleepFor(absl::Milliseconds(700));
  }
  EXPECT_TRUE(stack_->gateway().running());
  EXPECT_EQ(Mentions(), 4);
  EXPECT_EQ(stack_->Get("/readyz").status, 200);
}

TEST_F(MtlsTest, GatewayReloadsItsClientCertificateWithoutRestart) {
  ASSERT_NO_FATAL_FAILURE(StartMutualTlsStack({"--max_connection_age=1s"}));
  ASSERT_NO_FATAL_FAILURE(ServeTargetOverMutualTls());
  ASSERT_EQ(stack_->PostWebmention("https://alice.example/first", kTarget).status, 202);

  // Its client certificate replaced by one of a CA the verifier does not know: once the gateway
  // has re-read the files and its connection aged out, senders get 503 (nothing was stored).
  Replace("stranger", GatewayCert(), GatewayKey());
  EXPECT_TRUE(PostUntil(503, "https://alice.example/stranger-")) << "the gateway kept the old pair";
  // The right pair back: accepted again, the gateway never restarted.
  Replace("gateway", GatewayCert(), GatewayKey());
  EXPECT_TRUE(PostUntil(202, "https://alice.example/back-"));
  EXPECT_TRUE(stack_->gateway().running());
}

}  // namespace
}  // namespace portcullis::integration
