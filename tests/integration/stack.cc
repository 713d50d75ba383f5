#include "tests/integration/stack.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <pqxx/pqxx>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/authorized_channel.h"
#include "common/url/url.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "verifier-service/src/auth/api_token.h"

namespace portcullis::integration {
namespace {

// Writes `contents` to `path` with mode 0600 (a token file as a user would keep it).
void WriteSecretFile(const std::string& path, const std::string& contents, bool append = false) {
  std::ofstream(path, append ? std::ios::app : std::ios::trunc) << contents;
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write);
}

}  // namespace

Stack::Stack(const testing::TestDatabase& database)
    : database_(database),
      http_port_(testing::FreeLoopbackPort()),
      admin_port_(testing::FreeLoopbackPort()),
      grpc_port_(testing::FreeLoopbackPort()) {
  char dir_template[] = "/tmp/portcullis-stack-XXXXXX";
  log_dir_ = ::mkdtemp(dir_template);
  tokens_file_ = absl::StrCat(log_dir_, "/tokens");
  WriteSecretFile(tokens_file_, "# <sha256 of the token> <name> <scopes> [<site>,...]\n");
  admin_token_ = AddStaticToken("stack-admin", "admin,read,submit,fetch");
  admin_token_file_ = absl::StrCat(log_dir_, "/admin.token");
  WriteSecretFile(admin_token_file_, admin_token_ + "\n");
  gateway_token_ = AddStaticToken("stack-gateway", "submit,read");
  gateway_token_file_ = absl::StrCat(log_dir_, "/gateway.token");
  WriteSecretFile(gateway_token_file_, gateway_token_ + "\n");
}

std::string Stack::AddStaticToken(const std::string& name, const std::string& scopes,
                                  const std::vector<std::string>& sites) {
  const std::string token = verifier::auth::GenerateToken();
  std::string line = absl::StrCat(verifier::auth::HashToken(token), " ", name, " ", scopes);
  for (size_t i = 0; i < sites.size(); ++i) {
    absl::StrAppend(&line, i == 0 ? " " : ",", sites[i]);
  }
  WriteSecretFile(tokens_file_, line + "\n", /*append=*/true);
  return token;
}

void Stack::UseTokensOf(const Stack& other) {
  std::filesystem::copy_file(other.tokens_file_, tokens_file_,
                             std::filesystem::copy_options::overwrite_existing);
  admin_token_ = other.admin_token_;
  WriteSecretFile(admin_token_file_, admin_token_ + "\n");
  gateway_token_ = other.gateway_token_;
  WriteSecretFile(gateway_token_file_, gateway_token_ + "\n");
}

std::shared_ptr<grpc::Channel> Stack::AdminChannel() const { return Channel(admin_token_); }

std::shared_ptr<grpc::Channel> Stack::Channel(
    const std::string& token, std::shared_ptr<grpc::ChannelCredentials> credentials) const {
  return grpc_client::CreateAuthorizedChannel(grpc_target(), std::move(credentials),
                                              grpc::ChannelArguments(), token);
}

absl::StatusOr<std::string> Stack::CreateToken(const std::string& name,
                                               const std::vector<std::string>& scopes,
                                               const std::vector<std::string>& sites) const {
  namespace v1 = portcullis::verifier::v1;
  auto stub = v1::Verifier::NewStub(AdminChannel());
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  context.set_wait_for_ready(true);
  v1::CreateTokenRequest request;
  request.set_name(name);
  for (const std::string& scope : scopes) request.add_scopes(scope);
  for (const std::string& site : sites) request.add_sites(site);
  v1::CreateTokenResponse response;
  if (const grpc::Status status = stub->CreateToken(&context, request, &response); !status.ok()) {
    return absl::UnavailableError(absl::StrCat("CreateToken: ", status.error_message()));
  }
  return response.token();
}

std::vector<std::string> Stack::CliArgs(std::vector<std::string> args) const {
  args.insert(args.begin(), {absl::StrCat("--verifier=", grpc_target()),
                             absl::StrCat("--token_file=", admin_token_file_)});
  return args;
}

Stack::~Stack() {
  gateway_.reset();
  verifier_.reset();
  if (::testing::Test::HasFailure()) {
    for (const char* name : {"verifier-service.log", "ingest-gateway.log"}) {
      std::ifstream file(absl::StrCat(log_dir_, "/", name));
      std::cerr << "----- " << name << " -----\n" << file.rdbuf() << "\n";
    }
  }
  std::filesystem::remove_all(log_dir_);
}

std::string Stack::grpc_target() const { return absl::StrCat("127.0.0.1:", grpc_port_); }

absl::Status Stack::StartVerifier(const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {
      absl::StrCat("--grpc_listen=", grpc_target()),
      absl::StrCat("--database_url=", database_.connection_string()),
      "--health_interval=200ms",
      "--drain_timeout=10s",
      // No verification unless a test asks for workers (a later flag wins): the intake tests
      // look at mentions as queued, and their sources are on hosts that do not exist.
      "--workers=0",
      absl::StrCat("--tokens_file=", tokens_file_),
      "--token_refresh_interval=1s",
  };
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  auto child = testing::ChildProcess::Start(PORTCULLIS_VERIFIER_BINARY, args, {},
                                            absl::StrCat(log_dir_, "/verifier-service.log"));
  if (!child.ok()) {
    return child.status();
  }
  verifier_ = std::move(child).value();
  return absl::OkStatus();
}

absl::Status Stack::StartGateway(const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {
      absl::StrCat("--http_listen=127.0.0.1:", http_port_),
      absl::StrCat("--admin_listen=127.0.0.1:", admin_port_),
      absl::StrCat("--verifier=", grpc_target()),
      "--readiness_interval=200ms",
      "--verifier_timeout=3s",
      "--retry_after_seconds=7",
      "--drain_timeout=10s",
      // Every request comes from 127.0.0.1: rate limits and the per-address connection cap are
      // off unless a test sets them (a later flag wins).
      "--client_rate_limit=0",
      "--source_host_rate_limit=0",
      "--max_connections_per_address=0",
      absl::StrCat("--verifier_token_file=", gateway_token_file_),
  };
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  auto child = testing::ChildProcess::Start(PORTCULLIS_GATEWAY_BINARY, args, {},
                                            absl::StrCat(log_dir_, "/ingest-gateway.log"));
  if (!child.ok()) {
    return child.status();
  }
  gateway_ = std::move(child).value();
  return absl::OkStatus();
}

absl::Status Stack::StartAll() {
  if (absl::Status status = StartVerifier(); !status.ok()) {
    return status;
  }
  if (absl::Status status = StartGateway(); !status.ok()) {
    return status;
  }
  return WaitForReadyz(200, absl::Seconds(30));
}

absl::Status Stack::WaitForReadyz(int status, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  int last = 0;
  while (absl::Now() < deadline) {
    last = Get("/readyz").status;
    if (last == status) {
      return absl::OkStatus();
    }
    if (gateway_ == nullptr || !gateway_->running()) {
      return absl::FailedPreconditionError("the gateway is not running");
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("/readyz did not answer ", status, " in time (last: ", last, ")"));
}

absl::Status Stack::WaitForVerifierReady(absl::Duration timeout) const {
  namespace v1 = portcullis::verifier::v1;
  auto stub = v1::Verifier::NewStub(AdminChannel());
  const absl::Time give_up = absl::Now() + timeout;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    context.set_wait_for_ready(true);
    v1::ListSitesRequest request;
    request.set_page_size(1);
    v1::ListSitesResponse response;
    const grpc::Status status = stub->ListSites(&context, request, &response);
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
        status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      return status.ok() ? absl::OkStatus()
                         : absl::UnknownError(absl::StrCat("ListSites: ", status.error_message()));
    }
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(
          absl::StrCat("verifier not ready: ", status.error_message()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::Status Stack::ServeTarget(const std::string& target) const {
  namespace v1 = portcullis::verifier::v1;
  std::string rule_url = target;
  const bool prefix = absl::EndsWith(rule_url, "*");
  if (prefix) {
    rule_url.pop_back();
  }
  absl::StatusOr<url::Url> parsed = url::ParseUrl(rule_url);
  if (!parsed.ok()) {
    return parsed.status();
  }
  auto stub = v1::Verifier::NewStub(AdminChannel());
  const auto prepare = [](grpc::ClientContext& context) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    context.set_wait_for_ready(true);  // The verifier may still be starting.
  };
  // wait_for_ready covers the connection only: until its schema and API tokens are loaded the
  // verifier answers UNAVAILABLE ("not ready"), so the first call waits that out too.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (true) {
    grpc::ClientContext context;
    prepare(context);
    v1::AddSiteRequest request;
    request.set_domain(parsed->host());
    v1::AddSiteResponse response;
    const grpc::Status status = stub->AddSite(&context, request, &response);
    if (status.ok()) {
      break;
    }
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE || absl::Now() > give_up) {
      return absl::UnavailableError(absl::StrCat("AddSite: ", status.error_message()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  grpc::ClientContext context;
  prepare(context);
  v1::AddTargetRequest request;
  request.set_url(rule_url);
  request.set_kind(prefix ? v1::TARGET_KIND_PREFIX : v1::TARGET_KIND_EXACT);
  v1::AddTargetResponse response;
  if (const grpc::Status status = stub->AddTarget(&context, request, &response); !status.ok()) {
    return absl::UnavailableError(absl::StrCat("AddTarget: ", status.error_message()));
  }
  return absl::OkStatus();
}

testing::HttpResult Stack::PostWebmention(const std::string& source,
                                          const std::string& target) const {
  return testing::SendHttp(
      http_port_, "POST", "/webmention",
      absl::StrCat("source=", testing::FormEncode(source), "&target=", testing::FormEncode(target)),
      "application/x-www-form-urlencoded");
}

testing::HttpResult Stack::Get(const std::string& path) const {
  return testing::SendHttp(http_port_, "GET", path, "", "", absl::Seconds(5));
}

long long QueryCount(const testing::TestDatabase& database, const std::string& sql) {
  pqxx::connection connection(database.connection_string());
  pqxx::nontransaction work(connection);
  return work.exec1(sql)[0].as<long long>();
}

}  // namespace portcullis::integration
