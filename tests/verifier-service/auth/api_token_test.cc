#include "verifier-service/src/auth/api_token.h"

#include "verifier-service/src/auth/caller.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::auth {
namespace {

TEST(VerifierAuthApiToken, ScopesParseAndFormatSorted) {
  absl::StatusOr<ScopeSet> scopes = ParseScopes("submit, read");
  ASSERT_TRUE(scopes.ok()) << scopes.status();
  EXPECT_TRUE(HasScope(*scopes, Scope::kSubmit));
  EXPECT_TRUE(HasScope(*scopes, Scope::kRead));
  EXPECT_FALSE(HasScope(*scopes, Scope::kAdmin));
  EXPECT_FALSE(HasScope(*scopes, Scope::kFetch));
  EXPECT_EQ(FormatScopes(*scopes), "read,submit");
  EXPECT_EQ(FormatScopes(*ParseScopes("fetch,admin,read,submit")), "admin,fetch,read,submit");
}

TEST(VerifierAuthApiToken, ReviewIsAScopeOfItsOwnThatAdminIncludes) {
  absl::StatusOr<ScopeSet> review = ParseScopes("review");
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_EQ(FormatScopes(*review), "review");
  EXPECT_EQ(FormatScopes(*ParseScopes("submit,review,admin")), "admin,review,submit");
  Caller reviewer{.scopes = *review};
  EXPECT_TRUE(reviewer.MayReview());
  EXPECT_EQ(reviewer.Require(Scope::kAdmin).code(), absl::StatusCode::kPermissionDenied)
      << "a reviewer does not set policies";
  EXPECT_EQ(reviewer.Require(Scope::kRead).code(), absl::StatusCode::kPermissionDenied);
  Caller admin{.scopes = *ParseScopes("admin")};
  EXPECT_TRUE(admin.MayReview());
  Caller reader{.scopes = *ParseScopes("read,submit")};
  EXPECT_FALSE(reader.MayReview());
  EXPECT_NE(reader.Require(Scope::kReview).message().find("\"review\""), absl::string_view::npos);
}

TEST(VerifierAuthApiToken, UnknownOrEmptyScopesAreRefused) {
  EXPECT_EQ(ParseScopes("read,root").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ParseScopes("read,root").status().message().find("root"), absl::string_view::npos);
  EXPECT_EQ(ParseScopes("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseScopes(" , ").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseScopes("READ").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(VerifierAuthApiToken, GeneratedTokensAreDistinctAndAcceptedAsBearer) {
  const std::string first = GenerateToken();
  const std::string second = GenerateToken();
  EXPECT_NE(first, second);
  EXPECT_EQ(first.size(), 4u + 64u);
  absl::StatusOr<std::string> parsed = TokenFromAuthorization("Bearer " + first);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, first);
  EXPECT_EQ(*TokenFromAuthorization("bearer  " + first + " "), first);
}

TEST(VerifierAuthApiToken, HashIsSha256HexAndNotTheToken) {
  const std::string token = GenerateToken();
  const std::string hash = HashToken(token);
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find(token), std::string::npos);
  EXPECT_EQ(HashToken(token), hash);
  // SHA-256("abc"), a published test vector.
  EXPECT_EQ(HashToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(VerifierAuthApiToken, MalformedAuthorizationIsUnauthenticatedWithoutEchoingIt) {
  const std::string secret = "pct_" + std::string(63, 'a') + "Z";
  for (const std::string& value :
       {std::string(), std::string("Basic dXNlcjpwYXNz"), std::string("Bearer"),
        std::string("Bearer pct_short"), "Bearer " + secret, "Token " + GenerateToken(),
        "Bearer " + GenerateToken() + "x"}) {
    absl::StatusOr<std::string> parsed = TokenFromAuthorization(value);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kUnauthenticated) << value;
    EXPECT_EQ(parsed.status().message().find("pct_"), absl::string_view::npos) << value;
  }
}

}  // namespace
}  // namespace portcullis::verifier::auth
