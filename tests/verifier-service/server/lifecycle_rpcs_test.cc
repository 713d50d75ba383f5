// The Erase request's rules (issue 17): exactly one key, each normalized, and refusals that name
// the field.
#include "verifier-service/src/server/lifecycle_rpcs.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;
using ::testing::HasSubstr;

TEST(LifecycleRpcsTest, EachKeyIsNormalized) {
  v1::EraseRequest request;
  request.set_author_url("HTTPS://Alice.Example:443/me");
  absl::StatusOr<EraseCommand> command = ValidateErase(request);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->key.kind, store::ErasureKind::kAuthorUrl);
  EXPECT_EQ(command->key.value, "https://alice.example/me");

  request.set_source_host("Carol.EXAMPLE");
  request.set_dry_run(true);
  command = ValidateErase(request);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->key.kind, store::ErasureKind::kSourceHost);
  EXPECT_EQ(command->key.value, "carol.example");
  EXPECT_TRUE(command->dry_run);

  request.set_mention_id("0190a3c1-7b2e-7000-8000-000000000001");
  request.set_dry_run(false);
  request.set_undo(true);
  command = ValidateErase(request);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->key.kind, store::ErasureKind::kMention);
  EXPECT_TRUE(command->undo);
}

TEST(LifecycleRpcsTest, MalformedRequestsAreRefusedNamingTheField) {
  const auto refused = [](v1::EraseRequest request, const char* field) {
    absl::StatusOr<EraseCommand> command = ValidateErase(request);
    EXPECT_TRUE(absl::IsInvalidArgument(command.status())) << request.DebugString();
    EXPECT_THAT(std::string(command.status().message()), HasSubstr(field));
  };
  refused(v1::EraseRequest(), "author_url, source_host or mention_id");
  v1::EraseRequest request;
  request.set_author_url("/relative");
  refused(request, "author_url");
  request.set_author_url("ftp://alice.example/");
  refused(request, "author_url");
  request.set_author_url("https://user:pw@alice.example/");
  refused(request, "author_url");
  request.set_author_url("");
  refused(request, "author_url");
  request.set_source_host("not a host");
  refused(request, "source_host");
  request.set_source_host("*.example");
  refused(request, "source_host");
  request.set_mention_id("42");
  refused(request, "mention_id");
  request.set_mention_id("0190a3c1-7b2e-7000-8000-000000000001");
  request.set_dry_run(true);
  request.set_undo(true);
  refused(request, "dry_run and undo");
}

}  // namespace
}  // namespace portcullis::verifier::server
