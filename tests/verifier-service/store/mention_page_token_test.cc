#include "verifier-service/src/store/mention_page_token.h"

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::store {
namespace {

TEST(VerifierMentionPageTokenTest, RoundTrips) {
  const MentionCursor cursor{absl::FromUnixMicros(1714557600123456),
                             "0f8fad5b-d9cb-469f-a165-70867728950e"};
  const std::string token = EncodeMentionPageToken(cursor);
  absl::StatusOr<MentionCursor> decoded = DecodeMentionPageToken(token);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->updated_at, cursor.updated_at);
  EXPECT_EQ(decoded->mention_id, cursor.mention_id);
  EXPECT_EQ(token.find_first_of("+/="), std::string::npos) << "safe in a query string";
}

TEST(VerifierMentionPageTokenTest, RejectsWhatItDidNotMake) {
  const std::string too_long(500, 'A');
  for (const std::string& token : std::vector<std::string>{
           "", "!!!", too_long, absl::WebSafeBase64Escape("x1:1:0f8fad5b-d9cb-469f-a165-70867728950e"),
           absl::WebSafeBase64Escape("m1:abc:0f8fad5b-d9cb-469f-a165-70867728950e"),
           absl::WebSafeBase64Escape("m1:-5:0f8fad5b-d9cb-469f-a165-70867728950e"),
           absl::WebSafeBase64Escape("m1:5:0f8fad5b'; DROP TABLE mentions; --"),
           absl::WebSafeBase64Escape("m1:5")}) {
    absl::StatusOr<MentionCursor> decoded = DecodeMentionPageToken(token);
    EXPECT_TRUE(absl::IsInvalidArgument(decoded.status())) << token;
  }
}

}  // namespace
}  // namespace portcullis::verifier::store
