#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tests/support/child_process.h"
#include "tests/support/http_client.h"
#include "tests/support/test_database.h"

namespace portcullis::integration {

// The real verifier-service and ingest-gateway binaries on free loopback ports, against one test
// database. Logs go to a temporary directory and are printed when a test fails.
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

  testing::ChildProcess& verifier() { return *verifier_; }
  testing::ChildProcess& gateway() { return *gateway_; }
  void StopVerifier() { verifier_.reset(); }

  int http_port() const { return http_port_; }
  int admin_port() const { return admin_port_; }
  int grpc_port() const { return grpc_port_; }
  std::string grpc_target() const;

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
  int http_port_;
  int admin_port_;
  int grpc_port_;
  std::unique_ptr<testing::ChildProcess> verifier_;
  std::unique_ptr<testing::ChildProcess> gateway_;
};

// Runs one SQL query that returns a single integer.
long long QueryCount(const testing::TestDatabase& database, const std::string& sql);

}  // namespace portcullis::integration
