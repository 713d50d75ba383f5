#pragma once

// API tokens for tests of the verifier's gRPC service (issue 9): make a token, put it on a
// ClientContext, write it into a --tokens_file, or hand a list of them to a TokenRegistry without
// a database.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "verifier-service/src/auth/api_token.h"
#include "verifier-service/src/auth/token_registry.h"

namespace portcullis::verifier::test_tokens {

// A token and whom it stands for.
struct TestToken {
  std::string token;  // "pct_…", what a client sends.
  auth::ActiveToken active;

  // Its --tokens_file line.
  std::string FileLine() const {
    std::string line = absl::StrCat(active.token_hash, " ", active.caller.name, " ",
                                     auth::FormatScopes(active.caller.scopes));
    if (!active.caller.sites.empty()) {
      absl::StrAppend(&line, " ", absl::StrJoin(active.caller.sites, ","));
    }
    return line;
  }
};

// A new random token named `name` with `scopes` ("admin,read"), bound to `sites` (none: all).
inline TestToken MakeTestToken(const std::string& name, absl::string_view scopes,
                               std::vector<std::string> sites = {}) {
  TestToken made;
  made.token = auth::GenerateToken();
  made.active.token_hash = auth::HashToken(made.token);
  made.active.caller.token_id = absl::StrCat("static:", name);
  made.active.caller.name = name;
  made.active.caller.scopes = auth::ParseScopes(scopes).value();
  made.active.caller.sites = std::move(sites);
  return made;
}

// Every scope, every site.
inline TestToken MakeAllScopesToken(const std::string& name = "test-all") {
  return MakeTestToken(name, "admin,fetch,read,submit");
}

// `context` carries `token` as a client's channel would.
inline void AddBearerToken(grpc::ClientContext& context, absl::string_view token) {
  context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
}

// Writes `tokens` as a --tokens_file at `path`.
inline void WriteTokensFile(const std::string& path, const std::vector<TestToken>& tokens) {
  std::ofstream out(path, std::ios::trunc);
  out << "# written by a test\n";
  for (const TestToken& token : tokens) {
    out << token.FileLine() << "\n";
  }
}

// WriteTokensFile into a new file in the test's temporary directory; returns its path.
inline std::string TempTokensFile(const std::vector<TestToken>& tokens) {
  static std::atomic<int> counter{0};
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/portcullis-tokens-", getpid(), "-", counter++);
  WriteTokensFile(path, tokens);
  return path;
}

// One all-scopes token per test process, for tests about something else than authorization.
inline const TestToken& ProcessToken() {
  static const TestToken* const kToken = new TestToken(MakeAllScopesToken("test-process"));
  return *kToken;
}

// A token source with no tokens (no database): a registry over it knows only its static tokens.
class NoDatabaseTokens final : public auth::ActiveTokenSource {
 public:
  absl::StatusOr<std::vector<auth::ActiveToken>> ListActiveTokens() override {
    return std::vector<auth::ActiveToken>();
  }
};

// A loaded registry of `tokens` (refreshed hourly: nothing changes).
inline std::unique_ptr<auth::TokenRegistry> StaticRegistry(NoDatabaseTokens& source,
                                                           const std::vector<TestToken>& tokens) {
  std::vector<auth::ActiveToken> active;
  for (const TestToken& token : tokens) {
    active.push_back(token.active);
  }
  auto registry = std::make_unique<auth::TokenRegistry>(source, std::move(active), absl::Hours(1));
  (void)registry->Start();
  return registry;
}

}  // namespace portcullis::verifier::test_tokens
