#include "tools/portcullis/src/http_fixture.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"
#include "tests/support/temp_path.h"

namespace portcullis::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(HttpFixtureTest, CrlfStatusHeadersAndBody) {
  const absl::StatusOr<HttpFixture> fixture = ParseHttpFixture(
      "HTTP/1.1 200 OK\r\nServer: Apache\r\nContent-Type:  text/html; charset=utf-8 \r\n\r\n"
      "<html>\r\n<p>x</p>\r\n");
  ASSERT_TRUE(fixture.ok()) << fixture.status();
  EXPECT_EQ(fixture->status_code, 200);
  EXPECT_EQ(fixture->reason, "OK");
  EXPECT_THAT(fixture->headers, ElementsAre(Pair("server", "Apache"),
                                            Pair("content-type", "text/html; charset=utf-8")));
  EXPECT_EQ(fixture->body, "<html>\r\n<p>x</p>\r\n");  // the body is kept byte for byte
  EXPECT_EQ(fixture->Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(fixture->Header("location"), std::nullopt);
}

TEST(HttpFixtureTest, LfLineEndings) {
  const auto fixture =
      ParseHttpFixture("HTTP/1.1 301 Moved Permanently\nLocation: /elsewhere\n\nbody\n");
  ASSERT_TRUE(fixture.ok()) << fixture.status();
  EXPECT_EQ(fixture->status_code, 301);
  EXPECT_EQ(fixture->reason, "Moved Permanently");
  EXPECT_EQ(fixture->Header("location"), "/elsewhere");
  EXPECT_EQ(fixture->body, "body\n");
}

TEST(HttpFixtureTest, MissingBodyIsEmpty) {
  for (const char* text :
       {"HTTP/1.1 410 Gone\r\nServer: x\r\n\r\n", "HTTP/1.1 410 Gone\r\nServer: x\r\n",
        "HTTP/1.1 410 Gone\r\nServer: x", "HTTP/1.1 410 Gone"}) {
    const auto fixture = ParseHttpFixture(text);
    ASSERT_TRUE(fixture.ok()) << text << ": " << fixture.status();
    EXPECT_EQ(fixture->status_code, 410) << text;
    EXPECT_EQ(fixture->body, "") << text;
  }
}

TEST(HttpFixtureTest, RepeatedHeadersKeptInOrderNamesLowercased) {
  const auto fixture = ParseHttpFixture("HTTP/1.0 200\r\nLink: <a>\r\nLINK: <b>\r\n\r\n");
  ASSERT_TRUE(fixture.ok()) << fixture.status();
  EXPECT_EQ(fixture->reason, "");
  EXPECT_THAT(fixture->headers, ElementsAre(Pair("link", "<a>"), Pair("link", "<b>")));
  EXPECT_EQ(fixture->Header("Link"), "<a>");
}

TEST(HttpFixtureTest, RejectsWhatIsNotARawHttpResponse) {
  for (const char* text : {"", "<html></html>", "HTTP/1.1 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n",
                           "HTTP/1.1 2000 OK\r\n", "HTTP/1.1 099 X\r\n", "HTTP/1.1\r\n"}) {
    const auto fixture = ParseHttpFixture(text);
    EXPECT_TRUE(absl::IsInvalidArgument(fixture.status())) << text;
  }
  const auto no_colon = ParseHttpFixture("HTTP/1.1 200 OK\r\nServer\r\n\r\n");
  EXPECT_TRUE(absl::IsInvalidArgument(no_colon.status()));
  EXPECT_THAT(no_colon.status().message(), HasSubstr("line 2"));
}

TEST(HttpFixtureTest, ReadsAFileAndNamesItInErrors) {
  const std::filesystem::path dir =
      std::filesystem::path(portcullis::testing::PrivateTempPath("http_fixture_test")) /
      "source.example.com";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "page").string();
  std::ofstream(good, std::ios::binary) << "HTTP/1.1 200 OK\r\n\r\n<a href=x>";
  const auto fixture = ReadHttpFixture(good);
  ASSERT_TRUE(fixture.ok()) << fixture.status();
  EXPECT_EQ(fixture->body, "<a href=x>");

  const std::string bad = (dir / "bad").string();
  std::ofstream(bad, std::ios::binary) << "not http";
  EXPECT_THAT(ReadHttpFixture(bad).status().message(), HasSubstr(bad));
  EXPECT_TRUE(absl::IsNotFound(ReadHttpFixture((dir / "absent").string()).status()));
}

TEST(HttpFixtureTest, UrlFromTheHostFolder) {
  EXPECT_EQ(HttpFixtureUrl("/data/xray/source.example.com/basictest").value(),
            "http://source.example.com/basictest");
  EXPECT_EQ(HttpFixtureUrl("source.example.com/rel-alternate-fallback.json").value(),
            "http://source.example.com/rel-alternate-fallback.json");
  EXPECT_FALSE(HttpFixtureUrl("basictest").ok());
  EXPECT_FALSE(HttpFixtureUrl("/data/not a host/x").ok());
}

TEST(HttpFixtureTest, EverySharedXrayFixtureReads) {
  const std::filesystem::path dir = std::filesystem::path(PORTCULLIS_SHARED_TESTDATA_DIR) /
                                    "authorship" / "xray" / "source.example.com";
  if (!std::filesystem::is_directory(dir)) {
    if (portcullis::testing::RunningInCi()) {
      FAIL() << "shared test data missing under CI=true: " << dir;
    }
    GTEST_SKIP() << "SKIPPED: shared test data not found at " << dir;
  }
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto fixture = ReadHttpFixture(entry.path().string());
    ASSERT_TRUE(fixture.ok()) << fixture.status();
    EXPECT_GE(fixture->status_code, 200) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 70);
  const auto gone = ReadHttpFixture((dir / "deleted-empty").string());
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->status_code, 410);
  EXPECT_EQ(gone->body, "");
}

}  // namespace
}  // namespace portcullis::cli
