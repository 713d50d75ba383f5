#include "verifier-service/src/auth/caller.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::auth {
namespace {

TEST(VerifierAuthCaller, RequireNamesTheMissingScope) {
  Caller caller;
  caller.scopes = static_cast<ScopeSet>(Scope::kRead);
  EXPECT_TRUE(caller.Require(Scope::kRead).ok());
  absl::Status denied = caller.Require(Scope::kAdmin);
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(denied.message().find("admin"), absl::string_view::npos);
}

TEST(VerifierAuthCaller, SiteBinding) {
  Caller unbound;
  EXPECT_TRUE(unbound.AllSites());
  EXPECT_TRUE(unbound.MaySee("any.example"));

  Caller bound;
  bound.sites = {"alice.example", "bob.example"};
  EXPECT_FALSE(bound.AllSites());
  EXPECT_TRUE(bound.MaySee("bob.example"));
  EXPECT_FALSE(bound.MaySee("eve.example"));
  EXPECT_FALSE(bound.MaySee("sub.bob.example"));
  EXPECT_FALSE(bound.MaySee(""));
}

}  // namespace
}  // namespace portcullis::verifier::auth
