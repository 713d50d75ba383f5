#include "tools/portcullis/src/mention_commands.h"

#include <sstream>

#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "tests/tools/portcullis/fake_verifier.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

class MentionCommandsTest : public ::testing::Test {
 protected:
  MentionCommandsTest()
      : server_(&service_),
        stub_(verifier::v1::Verifier::NewStub(
            grpc::CreateChannel(server_.target(), grpc::InsecureChannelCredentials()))) {}

  FakeVerifier service_;
  InProcessServer server_;
  std::unique_ptr<verifier::v1::Verifier::Stub> stub_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(MentionCommandsTest, AcceptedSubmissionPrintsIdAndState) {
  EXPECT_EQ(SubmitMention(*stub_, absl::Seconds(5), "https://a.example/post",
                          "https://b.example/", out_, err_),
            kExitOk);
  EXPECT_NE(out_.str().find("\"mention_id\": \"5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001\""),
            std::string::npos)
      << out_.str();
  EXPECT_NE(out_.str().find("\"created\": true"), std::string::npos);
}

TEST_F(MentionCommandsTest, RejectedSubmissionPrintsReasonAndFails) {
  EXPECT_EQ(SubmitMention(*stub_, absl::Seconds(5), "https://a.example/", "https://a.example/",
                          out_, err_),
            kExitFailed);
  EXPECT_NE(out_.str().find("same_source_and_target"), std::string::npos) << out_.str();
}

TEST_F(MentionCommandsTest, UnknownMentionIsAnErrorLine) {
  EXPECT_EQ(GetMention(*stub_, absl::Seconds(5), "nope", out_, err_), kExitFailed);
  EXPECT_EQ(err_.str(), "error: NOT_FOUND: no such mention\n");
  EXPECT_TRUE(out_.str().empty());
}

}  // namespace
}  // namespace portcullis::cli
