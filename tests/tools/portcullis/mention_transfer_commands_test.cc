#include "tools/portcullis/src/mention_transfer_commands.h"

#include <sstream>

#include "gtest/gtest.h"

namespace portcullis::cli {
namespace {

namespace v1 = portcullis::verifier::v1;

// Two pages as webmention.io's /api/mentions.jf2 answers them (its README's example entry, one
// private child, and an empty last page), saved one after the other.
constexpr char kTwoPages[] = R"({"type":"feed","name":"Webmentions","children":[
  {"type":"entry","author":{"type":"card","name":"Tantek","photo":"https://t.example/p.jpg",
   "url":"http://tantek.com/"},"url":"http://tantek.com/2013/112/t2/reply",
   "published":"2013-04-22T15:03:00-07:00","wm-received":"2013-04-25T17:09:33-07:00",
   "wm-id":900,"wm-source":"http://tantek.com/2013/112/t2/reply",
   "wm-target":"https://b.example/post","content":{"text":"hi","html":"<b>hi</b>"},
   "in-reply-to":"https://b.example/post","wm-property":"in-reply-to","wm-private":false},
  {"type":"entry","wm-id":901,"wm-source":"https://secret.example/","wm-target":"https://b.example/post",
   "wm-received":"2013-04-25T17:09:33Z","wm-property":"like-of","wm-private":true}]}
{"type":"feed","name":"Webmentions","children":[
  {"type":"entry","wm-id":902,"wm-source":"https://carol.example/like","wm-target":"https://b.example/post",
   "wm-received":"2020-01-01T00:00:00Z","wm-property":"like-of","author":{"type":"card","name":"","photo":"","url":""}}]}
{"type":"feed","name":"Webmentions","children":[]}
)";

TEST(PortcullisMentionTransferTest, ReadsWebmentionIoPages) {
  std::istringstream in(kTwoPages);
  absl::StatusOr<std::vector<v1::Mention>> mentions = ReadWebmentionIoFeeds(in);
  ASSERT_TRUE(mentions.ok()) << mentions.status();
  ASSERT_EQ(mentions->size(), 2u);  // The private one is left out.
  const v1::Mention& reply = (*mentions)[0];
  EXPECT_EQ(reply.source(), "http://tantek.com/2013/112/t2/reply");
  EXPECT_EQ(reply.target(), "https://b.example/post");
  EXPECT_EQ(reply.type(), v1::MENTION_TYPE_REPLY);
  EXPECT_EQ(reply.state(), v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(reply.created_at().seconds(), 1366934973);  // wm-received, kept.
  EXPECT_EQ(reply.author().name(), "Tantek");
  EXPECT_EQ(reply.content_html(), "<b>hi</b>");
  EXPECT_EQ(reply.published(), "2013-04-22T15:03:00-07:00");
  EXPECT_EQ((*mentions)[1].type(), v1::MENTION_TYPE_LIKE);
}

TEST(PortcullisMentionTransferTest, RefusesWhatIsNotAFeed) {
  for (const char* bad : {"[1,2]", "{\"children\":[{\"wm-target\":\"https://b.example/\"}]}",
                          "{\"children\":[{\"wm-source\":\"a\",\"wm-target\":\"b\","
                          "\"wm-received\":\"yesterday\"}]}",
                          "{\"children\":[]} {", "not json"}) {
    std::istringstream in(bad);
    EXPECT_FALSE(ReadWebmentionIoFeeds(in).ok()) << bad;
  }
}

TEST(PortcullisMentionTransferTest, ReadsAnExportLineByLine) {
  std::istringstream in(
      "{\"source\":\"https://a.example/\",\"target\":\"https://b.example/\",\"wm_id\":\"7\","
      "\"state\":\"MENTION_STATE_FAILED\",\"reason\":\"no_link\",\"some_future_field\":1}\n\n"
      "{\"source\":\"https://c.example/\",\"target\":\"https://b.example/\"}\n");
  absl::StatusOr<std::vector<v1::Mention>> mentions = ReadPortcullisExport(in);
  ASSERT_TRUE(mentions.ok()) << mentions.status();
  ASSERT_EQ(mentions->size(), 2u);
  EXPECT_EQ((*mentions)[0].wm_id(), 7);
  EXPECT_EQ((*mentions)[0].state(), v1::MENTION_STATE_FAILED);
  std::istringstream broken("{\"source\":\"https://a.example/\"}\n{oops\n");
  absl::StatusOr<std::vector<v1::Mention>> refused = ReadPortcullisExport(broken);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("line 2"), std::string::npos);
}

}  // namespace
}  // namespace portcullis::cli
