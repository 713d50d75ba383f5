#include "verifier-service/src/auth/token_registry.h"

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::auth {
namespace {

// A token source whose contents and health the test controls.
class FakeTokenSource final : public ActiveTokenSource {
 public:
  absl::StatusOr<std::vector<ActiveToken>> ListActiveTokens() override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    if (!status_.ok()) return status_;
    return tokens_;
  }
  void Set(std::vector<ActiveToken> tokens) {
    absl::MutexLock lock(&mu_);
    tokens_ = std::move(tokens);
  }
  void Fail(absl::Status status) {
    absl::MutexLock lock(&mu_);
    status_ = std::move(status);
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  std::vector<ActiveToken> tokens_;
  absl::Status status_;
  int calls_ = 0;
};

ActiveToken TokenFor(const std::string& token, const std::string& name, ScopeSet scopes) {
  ActiveToken active;
  active.token_hash = HashToken(token);
  active.caller.token_id = name + "-id";
  active.caller.name = name;
  active.caller.scopes = scopes;
  return active;
}

TEST(VerifierAuthTokenRegistry, KnownTokenAuthenticatesUnknownDoesNot) {
  FakeTokenSource source;
  const std::string token = GenerateToken();
  source.Set({TokenFor(token, "gateway", static_cast<ScopeSet>(Scope::kSubmit))});
  TokenRegistry registry(source, {}, absl::Hours(1));
  ASSERT_TRUE(registry.Refresh().ok());

  absl::StatusOr<Caller> caller = registry.Authenticate("Bearer " + token);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "gateway");
  EXPECT_TRUE(caller->Require(Scope::kSubmit).ok());
  EXPECT_EQ(registry.Authenticate("Bearer " + GenerateToken()).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(registry.Authenticate("").status().code(), absl::StatusCode::kUnauthenticated);
}

TEST(VerifierAuthTokenRegistry, UnavailableUntilFirstSnapshotThenKeepsItThroughOutages) {
  FakeTokenSource source;
  const std::string token = GenerateToken();
  source.Set({TokenFor(token, "reader", static_cast<ScopeSet>(Scope::kRead))});
  source.Fail(absl::UnavailableError("database down"));
  TokenRegistry registry(source, {}, absl::Hours(1));
  EXPECT_FALSE(registry.Refresh().ok());
  EXPECT_EQ(registry.Authenticate("Bearer " + token).status().code(),
            absl::StatusCode::kUnavailable);

  source.Fail(absl::OkStatus());
  ASSERT_TRUE(registry.Refresh().ok());
  EXPECT_TRUE(registry.Authenticate("Bearer " + token).ok());

  source.Fail(absl::UnavailableError("database down again"));
  EXPECT_FALSE(registry.Refresh().ok());
  EXPECT_TRUE(registry.Authenticate("Bearer " + token).ok()) << "an outage must not lock out";
}

TEST(VerifierAuthTokenRegistry, RevocationTakesEffectAtTheNextRefresh) {
  FakeTokenSource source;
  const std::string token = GenerateToken();
  source.Set({TokenFor(token, "admin", static_cast<ScopeSet>(Scope::kAdmin))});
  TokenRegistry registry(source, {}, absl::Milliseconds(20));
  ASSERT_TRUE(registry.Start().ok());
  ASSERT_TRUE(registry.Authenticate("Bearer " + token).ok());

  source.Set({});
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (registry.Authenticate("Bearer " + token).ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(registry.Authenticate("Bearer " + token).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_GE(source.calls(), 2);
}

TEST(VerifierAuthTokenRegistry, StaticTokensAreMergedWithTheSource) {
  FakeTokenSource source;
  const std::string from_file = GenerateToken();
  absl::StatusOr<std::vector<ActiveToken>> parsed = ParseStaticTokens(
      "# gateway token, from a Kubernetes Secret\n\n" + HashToken(from_file) +
      " gateway submit,read alice.example,bob.example\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  TokenRegistry registry(source, *std::move(parsed), absl::Hours(1));
  ASSERT_TRUE(registry.Refresh().ok());
  absl::StatusOr<Caller> caller = registry.Authenticate("Bearer " + from_file);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "gateway");
  EXPECT_EQ(FormatScopes(caller->scopes), "read,submit");
  EXPECT_EQ(caller->sites, (SiteBinding{"alice.example", "bob.example"}));
}

TEST(VerifierAuthTokenRegistry, StaticTokensFileErrorsNameTheLine) {
  const std::string hash = HashToken("x");
  for (const std::string& text :
       {std::string("abc gateway submit\n"), hash + " gateway\n", hash + " gateway root\n",
        hash + " gateway submit a.example extra\n", hash.substr(0, 63) + "G gateway submit\n"}) {
    absl::StatusOr<std::vector<ActiveToken>> parsed = ParseStaticTokens("# ok\n" + text);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.status().message().find("line 2"), absl::string_view::npos) << text;
  }
}

}  // namespace
}  // namespace portcullis::verifier::auth
