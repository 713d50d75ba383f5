#include "ingest-gateway/src/http/router.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway::http {
namespace {

using ::testing::HasSubstr;

class RecordingObserver : public RouteObserver {
 public:
  void OnRequestStarted(absl::string_view route) override { started.emplace_back(route); }
  void OnRequestFinished(absl::string_view route, int status, absl::Duration) override {
    finished.emplace_back(std::string(route), status);
  }
  std::vector<std::string> started;
  std::vector<std::pair<std::string, int>> finished;
};

class GatewayRouterTest : public ::testing::Test {
 protected:
  GatewayRouterTest() : router_(&observer_) {
    router_.Add("POST", "/webmention", Named("submit"));
    router_.Add("GET", "/webmention/status/{id}", Named("status"));
    router_.Add("GET", "/healthz", Named("healthz"));
  }

  static RouteHandler Named(std::string name) {
    return [name](const HttpRequest& request, Respond respond) {
      HttpResponse response;
      response.body = name + ":" + request.path_param;
      respond(response);
    };
  }

  HttpResponse Route(std::string method, std::string path) {
    HttpRequest request;
    request.method = std::move(method);
    request.path = std::move(path);
    std::optional<HttpResponse> got;
    router_.Handle(request, [&](HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(HttpResponse{});
  }

  RecordingObserver observer_;
  Router router_;
};

TEST_F(GatewayRouterTest, ExactPath) {
  EXPECT_EQ(Route("POST", "/webmention").body, "submit:");
  EXPECT_EQ(Route("GET", "/healthz").body, "healthz:");
}

TEST_F(GatewayRouterTest, TrailingParameter) {
  EXPECT_EQ(Route("GET", "/webmention/status/abc-123").body, "status:abc-123");
}

TEST_F(GatewayRouterTest, ParameterIsOneNonEmptySegment) {
  EXPECT_EQ(Route("GET", "/webmention/status/").status, 404);
  EXPECT_EQ(Route("GET", "/webmention/status/a/b").status, 404);
}

TEST_F(GatewayRouterTest, UnknownPathIs404Json) {
  const HttpResponse response = Route("GET", "/nope");
  EXPECT_EQ(response.status, 404);
  EXPECT_THAT(response.body, HasSubstr(R"("error":"not_found")"));
  EXPECT_EQ(Route("POST", "/webmention/").status, 404);
}

TEST_F(GatewayRouterTest, WrongMethodIs405WithAllow) {
  const HttpResponse response = Route("GET", "/webmention");
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(response.headers.Get("Allow"), "POST");
  EXPECT_THAT(response.body, HasSubstr(R"("error":"method_not_allowed")"));
  EXPECT_EQ(Route("DELETE", "/webmention/status/x").headers.Get("Allow"), "GET");
}

TEST_F(GatewayRouterTest, ObserverSeesPatternsNotPaths) {
  Route("GET", "/webmention/status/one");
  Route("GET", "/webmention/status/two");
  Route("GET", "/random/path");
  Route("GET", "/webmention");
  ASSERT_EQ(observer_.finished.size(), 4u);
  EXPECT_EQ(observer_.finished[0], std::make_pair(std::string("/webmention/status/{id}"), 200));
  EXPECT_EQ(observer_.finished[1], std::make_pair(std::string("/webmention/status/{id}"), 200));
  EXPECT_EQ(observer_.finished[2], std::make_pair(std::string(kUnmatchedRoute), 404));
  EXPECT_EQ(observer_.finished[3], std::make_pair(std::string("/webmention"), 405));
  EXPECT_EQ(observer_.started.size(), 4u);
}

}  // namespace
}  // namespace portcullis::gateway::http
