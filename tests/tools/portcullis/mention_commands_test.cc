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

TEST_F(MentionCommandsTest, ListByTargetWithFiltersPrintsThePage) {
  EXPECT_EQ(ListMentions(*stub_, absl::Seconds(5),
                         {.target = "https://b.example/post",
                          .state = "verified",
                          .type = "Reply",
                          .page_size = 10},
                         out_, err_),
            kExitOk)
      << err_.str();
  EXPECT_EQ(service_.last_list.target(), "https://b.example/post");
  EXPECT_EQ(service_.last_list.domain(), "");
  EXPECT_EQ(service_.last_list.state(), verifier::v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(service_.last_list.type(), verifier::v1::MENTION_TYPE_REPLY);
  EXPECT_EQ(service_.last_list.page_size(), 10);
  EXPECT_NE(out_.str().find("\"name\": \"Alice\""), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("\"next_page_token\": \"next-token\""), std::string::npos);
}

TEST_F(MentionCommandsTest, ListBySiteFollowsAPageToken) {
  EXPECT_EQ(ListMentions(*stub_, absl::Seconds(5), {.site = "b.example", .page_token = "next-token"},
                         out_, err_),
            kExitOk);
  EXPECT_EQ(service_.last_list.domain(), "b.example");
  EXPECT_EQ(service_.last_list.page_token(), "next-token");
  EXPECT_EQ(service_.last_list.state(), verifier::v1::MENTION_STATE_UNSPECIFIED);
}

TEST_F(MentionCommandsTest, ListOptionsAreCheckedBeforeAnyCall) {
  const MentionListOptions bad[] = {
      {},
      {.target = "https://b.example/", .site = "b.example"},
      {.site = "b.example", .state = "deleted"},
      {.site = "b.example", .type = "comment"},
      {.site = "b.example", .page_size = 1001},
  };
  for (const MentionListOptions& options : bad) {
    std::ostringstream err;
    EXPECT_EQ(ListMentions(*stub_, absl::Seconds(5), options, out_, err), kExitUsage);
    EXPECT_EQ(err.str().rfind("error: ", 0), 0u) << err.str();
  }
  EXPECT_EQ(service_.last_list.ByteSizeLong(), 0u) << "no call was made";
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(MentionCommandsTest, ListThroughTheCommandLine) {
  CliOptions options;
  options.verifier_target = server_.target();
  options.token = kTestToken;
  options.timeout = absl::Seconds(5);
  options.list_site = "b.example";
  options.list_type = "reply";
  EXPECT_EQ(cli::Run({"mention", "list"}, options, out_, err_), kExitOk) << err_.str();
  EXPECT_EQ(service_.last_list.type(), verifier::v1::MENTION_TYPE_REPLY);
  EXPECT_EQ(cli::Run({"mention", "list", "extra"}, options, out_, err_), kExitUsage);
}

}  // namespace
}  // namespace portcullis::cli
