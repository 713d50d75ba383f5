// POST /webmention through the real gateway and verifier into a real PostgreSQL.
#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

using WebmentionStackTest = StackTest;

TEST_F(WebmentionStackTest, ValidMentionIs202StoredOnceAndReadable) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/post").ok());
  const testing::HttpResult first =
      stack_->PostWebmention("https://alice.example/reply", "https://bob.example/post");
  ASSERT_EQ(first.status, 202) << first.body << first.error;
  EXPECT_FALSE(first.Header("x-request-id").empty());
  const json::object body = json::parse(first.body).as_object();
  const std::string id(body.at("mention_id").as_string());
  EXPECT_EQ(body.at("status_url").as_string(), absl::StrCat("/webmention/status/", id));
  EXPECT_EQ(first.Header("location"), absl::StrCat("/webmention/status/", id));
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions WHERE state = 'PENDING'"), 1);

  // The same pair again (spelled differently) is the same mention: no second row.
  const testing::HttpResult second =
      stack_->PostWebmention("HTTPS://Alice.Example:443/reply#c1", "https://bob.example/post");
  ASSERT_EQ(second.status, 202) << second.body;
  EXPECT_EQ(json::parse(second.body).at("mention_id").as_string(), id);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 1);

  const testing::HttpResult status = stack_->Get(absl::StrCat("/webmention/status/", id));
  ASSERT_EQ(status.status, 200) << status.body;
  const json::value mention = json::parse(status.body);
  EXPECT_EQ(mention.at("state").as_string(), "PENDING");
  EXPECT_EQ(mention.at("source").as_string(), "https://alice.example/reply");

  // The CLI reads the same row over gRPC.
  const testing::CommandResult cli = testing::RunCommand(
      PORTCULLIS_CLI_BINARY, stack_->CliArgs({"mention", "get", id}));
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_NE(cli.output.find("MENTION_STATE_PENDING"), std::string::npos) << cli.output;
}

TEST_F(WebmentionStackTest, StatusPageIsEscapedHtmlForBrowsersAndJsonOtherwise) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/post").ok());
  const testing::HttpResult accepted = stack_->PostWebmention(
      "https://mallory.example/?q=<script>alert(1)</script>", "https://bob.example/post");
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string path(json::parse(accepted.body).at("status_url").as_string());
  // An unguessable id: a random UUID, not a sequence number.
  EXPECT_EQ(path.size(), std::string("/webmention/status/").size() + 36);

  const testing::HttpResult html =
      testing::SendHttp(stack_->http_port(), "GET", path, "", "", absl::Seconds(5),
                        {{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}});
  ASSERT_EQ(html.status, 200) << html.body;
  EXPECT_EQ(html.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(html.body.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos)
      << html.body;
  EXPECT_EQ(html.body.find("<script"), std::string::npos) << html.body;
  EXPECT_NE(html.body.find("PENDING"), std::string::npos);

  const testing::HttpResult plain = stack_->Get(path);
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(json::parse(plain.body).at("state").as_string(), "PENDING");
  EXPECT_EQ(testing::SendHttp(stack_->http_port(), "GET", path, "", "", absl::Seconds(5),
                              {{"Accept", "image/png"}})
                .status,
            406);
}

TEST_F(WebmentionStackTest, UnknownStatusIdIs404) {
  EXPECT_EQ(stack_->Get("/webmention/status/6f1c1b7e-1d5e-4f5e-8a47-0c0ffee00000").status, 404);
}

struct BadRequest {
  std::string name;
  std::string body;
  std::string content_type;
  std::string error;
};

// A form body with `source` and `target` encoded.
std::string Form(const std::string& source, const std::string& target) {
  return absl::StrCat("source=", testing::FormEncode(source),
                      "&target=", testing::FormEncode(target));
}

TEST_F(WebmentionStackTest, InvalidRequestsAre400WithSpecificCodes) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/post").ok());
  const std::string form = "application/x-www-form-urlencoded";
  const std::string alice = "https://alice.example/reply";
  const std::string bob = "https://bob.example/post";
  const std::vector<BadRequest> cases = {
      {"json instead of a form", R"({"source":"https://a.example/"})", "application/json",
       "unsupported_content_type"},
      {"no content type", Form(alice, bob), "", "unsupported_content_type"},
      {"broken percent-encoding", "source=%zz&target=x", form, "invalid_form"},
      {"missing source", "target=https%3A%2F%2Fbob.example%2F", form, "missing_source"},
      {"missing target", "source=https%3A%2F%2Falice.example%2F", form, "missing_target"},
      {"duplicate source", Form(alice, bob) + "&source=https%3A%2F%2Fc.example%2F", form,
       "duplicate_source"},
      {"duplicate target", Form(alice, bob) + "&target=https%3A%2F%2Fbob.example%2Fpost", form,
       "duplicate_target"},
      {"relative source", Form("/reply", bob), form, "invalid_source"},
      {"relative target", Form(alice, "/post"), form, "invalid_target"},
      {"non-http scheme", Form("ftp://alice.example/", bob), form, "unsupported_scheme"},
      {"credentials", Form("https://user:pw@alice.example/", bob), form, "credentials_in_url"},
      {"too long", Form(alice + "?" + std::string(2048, 'a'), bob), form, "url_too_long"},
      {"source equals target", Form(bob, bob), form, "same_source_and_target"},
      {"equal but for fragment and default port", Form("https://bob.example:443/post#c", bob), form,
       "same_source_and_target"},
      {"target on a site we do not serve", Form(alice, "https://carol.example/post"), form,
       "target_not_supported"},
      {"target not registered on a served site", Form(alice, "https://bob.example/other"), form,
       "target_not_found"},
  };
  for (const BadRequest& bad : cases) {
    const testing::HttpResult result =
        testing::SendHttp(stack_->http_port(), "POST", "/webmention", bad.body, bad.content_type);
    EXPECT_EQ(result.status, 400) << bad.name << ": " << result.body;
    const json::value body = json::parse(result.body);
    EXPECT_EQ(body.at("error").as_string(), bad.error) << bad.name;
    EXPECT_FALSE(body.at("error_description").as_string().empty()) << bad.name;
  }
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 0);
}

TEST_F(WebmentionStackTest, TargetFragmentIsIgnoredForTheCheckAndKeptInTheMention) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/post").ok());
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/notes/*").ok());
  const testing::HttpResult with_fragment =
      stack_->PostWebmention("https://alice.example/reply", "https://bob.example/post#comment-2");
  ASSERT_EQ(with_fragment.status, 202) << with_fragment.body;
  EXPECT_EQ(QueryCount(*database_,
                       "SELECT count(*) FROM mentions WHERE target = "
                       "'https://bob.example/post#comment-2'"),
            1);
  const testing::HttpResult under_prefix =
      stack_->PostWebmention("https://alice.example/reply", "https://bob.example/notes/2024/1");
  EXPECT_EQ(under_prefix.status, 202) << under_prefix.body;
  const testing::HttpResult beside_prefix =
      stack_->PostWebmention("https://alice.example/reply", "https://bob.example/notes");
  EXPECT_EQ(beside_prefix.status, 400) << beside_prefix.body;
}

TEST_F(WebmentionStackTest, OversizedBodyIs413) {
  const std::string huge = absl::StrCat("source=https%3A%2F%2Fa.example%2F&target=",
                                        std::string(1024 * 1024 + 1024, 'x'));
  const testing::HttpResult result = testing::SendHttp(stack_->http_port(), "POST", "/webmention",
                                                       huge, "application/x-www-form-urlencoded");
  // The server may close before reading everything; then the client sees no status at all.
  // Either way nothing is stored, and when an answer arrives it is a 413.
  if (result.status != 0) {
    EXPECT_EQ(result.status, 413) << result.body;
  } else {
    ADD_FAILURE() << "no answer to an oversized body: " << result.error;
  }
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 0);
}

}  // namespace
}  // namespace portcullis::integration
