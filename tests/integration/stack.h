#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "tests/support/child_process.h"
#include "tests/support/http_client.h"
#include "tests/support/test_database.h"

namespace portcullis::integration {

// The real verifier-service and ingest-gateway binaries on free loopback ports, against one test
// database. Logs go to a temporary directory and are printed when a test fails.
//
// Authentication: the stack writes a static tokens file for the verifier (--tokens_file, hashes
// only, refreshed every second) holding an unbound admin token (scopes admin, read, submit,
// fetch) and the gateway's token (submit, read), which the gateway reads from
// --verifier_token_file. Direct gRPC calls go through AdminChannel() (or Channel(token)); CLI
// runs get --token_file=admin_token_file().
class Stack {
 public:
  explicit Stack(const testing::TestDatabase& database);
  ~Stack();

  absl::Status StartVerifier(const std::vector<std::string>& extra_args = {});
  absl::Status StartGateway(const std::vector<std::string>& extra_args = {});
  // Both, then waits until /readyz answers 200.
  absl::Status StartAll();
  // Polls GET /readyz until it answers `status` or `timeout` passes.
  absl::Status WaitForReadyz(int status, absl::Duration timeout);
  // Polls the verifier (ListSites with the admin token) until it stops answering UNAVAILABLE:
  // its schema and API tokens are loaded. For tests that call it before anything else.
  absl::Status WaitForVerifierReady(absl::Duration timeout = absl::Seconds(30)) const;

  testing::ChildProcess& verifier() { return *verifier_; }
  testing::ChildProcess& gateway() { return *gateway_; }
  void StopVerifier() { verifier_.reset(); }

  int http_port() const { return http_port_; }
  int admin_port() const { return admin_port_; }
  int grpc_port() const { return grpc_port_; }
  std::string grpc_target() const;

  // The unbound admin token, the file holding it (for the CLI's --token_file), and the gateway's
  // token (submit, read).
  const std::string& admin_token() const { return admin_token_; }
  const std::string& admin_token_file() const { return admin_token_file_; }
  const std::string& gateway_token() const { return gateway_token_; }
  const std::string& tokens_file() const { return tokens_file_; }
  // A channel to the verifier whose calls carry the admin token / `token` (none when empty).
  std::shared_ptr<grpc::Channel> AdminChannel() const;
  std::shared_ptr<grpc::Channel> Channel(
      const std::string& token,
      std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr) const;
  // A further static token, e.g. bound to sites for cross-site tests: `scopes` comma separated,
  // `sites` empty for every site. Added to the tokens file, so call it before StartVerifier (a
  // running verifier sees it within its refresh interval only if it re-reads the file; tokens
  // made over the API take effect at once: CreateToken below).
  std::string AddStaticToken(const std::string& name, const std::string& scopes,
                             const std::vector<std::string>& sites = {});
  // Makes this stack's verifier and gateway use `other`'s tokens (copies of its files), for stacks
  // whose gateways call each other's verifiers. Call before starting anything.
  void UseTokensOf(const Stack& other);
  // A token made with the CreateToken RPC over the admin channel (the token itself).
  absl::StatusOr<std::string> CreateToken(const std::string& name,
                                          const std::vector<std::string>& scopes,
                                          const std::vector<std::string>& sites = {}) const;
  // `args` for the CLI with --verifier and --token_file (the admin token) in front.
  std::vector<std::string> CliArgs(std::vector<std::string> args) const;

  // Registers the site of `target` (its host) and `target` itself with the running verifier, over
  // its gRPC admin API, so that mentions of it are received. A target ending in "*" is a prefix
  // rule: "https://bob.example/*" receives mentions of every page of bob.example. Idempotent.
  absl::Status ServeTarget(const std::string& target) const;

  // POST /webmention with form-encoded source and target.
  testing::HttpResult PostWebmention(const std::string& source, const std::string& target) const;
  testing::HttpResult Get(const std::string& path) const;

 private:
  const testing::TestDatabase& database_;
  std::string log_dir_;
  std::string admin_token_;
  std::string admin_token_file_;
  std::string gateway_token_;
  std::string gateway_token_file_;
  std::string tokens_file_;
  int http_port_;
  int admin_port_;
  int grpc_port_;
  std::unique_ptr<testing::ChildProcess> verifier_;
  std::unique_ptr<testing::ChildProcess> gateway_;
};

// Runs one SQL query that returns a single integer.
long long QueryCount(const testing::TestDatabase& database, const std::string& sql);

}  // namespace portcullis::integration
