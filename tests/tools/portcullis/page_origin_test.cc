// PageOrigin: the loopback-only page server of `portcullis demo serve` and the verification
// scenarios, over real loopback HTTP.
#include "tools/portcullis/src/page_origin.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tests/support/http_client.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

TEST(PortcullisPageOriginTest, ServesItsRoutesAndCountsRequests) {
  absl::StatusOr<std::unique_ptr<PageOrigin>> origin = PageOrigin::Start("127.0.0.1", 0);
  ASSERT_TRUE(origin.ok()) << origin.status();
  (*origin)->SetRoute("/reply", PageResponse::Html("<p>hi</p>"));
  (*origin)->SetRoute("/old", PageResponse::Redirect(301, "/reply"));
  (*origin)->SetRoute("/gone", PageResponse::Status(410));
  const int port = (*origin)->port();
  EXPECT_EQ((*origin)->origin(), "http://127.0.0.1:" + std::to_string(port));

  testing::HttpResult page = testing::SendHttp(port, "GET", "/reply?utm_source=x");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.body, "<p>hi</p>");
  EXPECT_EQ(page.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(testing::SendHttp(port, "GET", "/old").Header("location"), "/reply");
  EXPECT_EQ(testing::SendHttp(port, "GET", "/gone").status, 410);
  EXPECT_EQ(testing::SendHttp(port, "GET", "/missing").status, 404);
  EXPECT_EQ((*origin)->requests("/reply"), 1);

  (*origin)->SetRoute("/reply", PageResponse::Status(503));
  EXPECT_EQ(testing::SendHttp(port, "GET", "/reply").status, 503);
}

TEST(PortcullisPageOriginTest, BindsLoopbackOnly) {
  EXPECT_TRUE(absl::IsInvalidArgument(PageOrigin::Start("0.0.0.0", 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(PageOrigin::Start("10.1.2.3", 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(PageOrigin::Start("localhost", 0).status()));
  EXPECT_TRUE(PageOrigin::Start("127.0.0.1", 0).ok());
}

TEST(PortcullisPageOriginTest, DemoServeRefusesBadArguments) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunDemoServe({"demo", "serve", "0.0.0.0:0", "/a=/dev/null"}, out, err), kExitUsage);
  EXPECT_EQ(RunDemoServe({"demo", "serve", "127.0.0.1:0", "a=/dev/null"}, out, err), kExitUsage);
  EXPECT_EQ(RunDemoServe({"demo", "serve", "127.0.0.1:0"}, out, err), kExitUsage);
  EXPECT_EQ(RunDemoServe({"demo", "serve", "127.0.0.1:0", "/a=/nonexistent/file"}, out, err),
            kExitFailed);
}

}  // namespace
}  // namespace portcullis::cli
