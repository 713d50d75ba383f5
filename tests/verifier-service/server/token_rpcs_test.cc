#include "verifier-service/src/server/token_rpcs.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

TEST(VerifierTokenRpcTest, CreateTokenNormalizesSitesAndDropsDuplicates) {
  v1::CreateTokenRequest request;
  request.set_name("blog reader");
  request.add_scopes("read");
  request.add_scopes("read");
  request.add_sites("Bücher.Example");
  request.add_sites("xn--bcher-kva.example");
  request.add_sites("b.example");
  absl::StatusOr<auth::Caller> caller = Validate(request);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "blog reader");
  EXPECT_EQ(caller->scopes, static_cast<auth::ScopeSet>(auth::Scope::kRead));
  EXPECT_EQ(caller->sites, (std::vector<std::string>{"xn--bcher-kva.example", "b.example"}));
  EXPECT_TRUE(caller->token_id.empty());
}

TEST(VerifierTokenRpcTest, CreateTokenRefusesWhatItCannotStore) {
  v1::CreateTokenRequest ok;
  ok.set_name("n");
  ok.add_scopes("admin");
  ASSERT_TRUE(Validate(ok).ok());

  v1::CreateTokenRequest too_many_sites = ok;
  for (int i = 0; i <= kMaxTokenSites; ++i) {
    too_many_sites.add_sites(absl::StrCat("s", i, ".example"));
  }
  v1::CreateTokenRequest long_name = ok;
  long_name.set_name(std::string(kMaxTokenNameBytes + 1, 'x'));
  v1::CreateTokenRequest max_name = ok;
  max_name.set_name(std::string(kMaxTokenNameBytes, 'x'));
  EXPECT_TRUE(Validate(max_name).ok());
  for (const v1::CreateTokenRequest& bad : {too_many_sites, long_name}) {
    const absl::Status status = Validate(bad).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  }
}

TEST(VerifierTokenRpcTest, RevokeTokenNeedsAnId) {
  v1::RevokeTokenRequest request;
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request)));
  request.set_id(std::string(kMaxTokenIdBytes + 1, 'a'));
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request)));
  request.set_id("0b6a4a8e-3f0e-4c1a-9a57-2f1d2c3b4a5e");
  EXPECT_TRUE(Validate(request).ok());
}

TEST(VerifierTokenRpcTest, ApiTokenCarriesNeitherTokenNorHash) {
  store::TokenRecord record;
  record.caller.token_id = "id-1";
  record.caller.name = "gateway";
  record.caller.scopes = {"submit", "read"};
  record.caller.sites = {"a.example"};
  record.created_at = absl::FromUnixSeconds(1700000000);
  v1::ApiToken out;
  ToProto(record, &out);
  EXPECT_EQ(out.id(), "id-1");
  EXPECT_EQ(out.name(), "gateway");
  ASSERT_EQ(out.scopes_size(), 2);
  EXPECT_EQ(out.scopes(0), "read");
  EXPECT_EQ(out.scopes(1), "submit");
  EXPECT_EQ(out.sites(0), "a.example");
  EXPECT_EQ(out.created_at().seconds(), 1700000000);
  EXPECT_FALSE(out.has_revoked_at());
  record.revoked_at = absl::FromUnixSeconds(1700000100);
  ToProto(record, &out);
  EXPECT_EQ(out.revoked_at().seconds(), 1700000100);
}

}  // namespace
}  // namespace portcullis::verifier::server
