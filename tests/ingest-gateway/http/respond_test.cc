#include "ingest-gateway/src/http/respond.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace portcullis::gateway::http {
namespace {

class ObserverLog : public RouteObserver {
 public:
  void OnRequestStarted(absl::string_view) override {}
  void OnRequestFinished(absl::string_view route, int status, absl::Duration elapsed) override {
    finished.emplace_back(std::string(route), status);
    last_elapsed = elapsed;
  }
  std::vector<std::pair<std::string, int>> finished;
  absl::Duration last_elapsed = -absl::InfiniteDuration();
};

class TargetLog : public ResponseTarget {
 public:
  void Deliver(uint64_t request, HttpResponse response) override {
    delivered.emplace_back(request, std::move(response.body));
  }
  std::vector<std::pair<uint64_t, std::string>> delivered;
};

HttpResponse ResponseWithBody(std::string body, int status = 200) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

TEST(GatewayRespondTest, AFunctionRespondCallsTheFunction) {
  std::optional<HttpResponse> got;
  const Respond respond = [&](HttpResponse response) { got = std::move(response); };
  respond(ResponseWithBody("hello", 202));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 202);
  EXPECT_EQ(got->body, "hello");
}

TEST(GatewayRespondTest, ADefaultRespondAnswersNothing) {
  const Respond respond;
  EXPECT_NO_THROW(respond(ResponseWithBody("nobody hears this")));
}

TEST(GatewayRespondTest, ATargetRespondDeliversItsRequestNumberToItsTarget) {
  auto target = std::make_shared<TargetLog>();
  const Respond respond = Respond::ToTarget(target, 7);
  const Respond copy = respond;
  copy(ResponseWithBody("first"));
  respond(ResponseWithBody("second"));
  // The target decides which of them counts; both reach it with the number of their request.
  ASSERT_EQ(target->delivered.size(), 2u);
  EXPECT_EQ(target->delivered[0], std::make_pair(uint64_t{7}, std::string("first")));
  EXPECT_EQ(target->delivered[1], std::make_pair(uint64_t{7}, std::string("second")));
}

TEST(GatewayRespondTest, ATargetRespondOutlivingItsTargetAnswersNothing) {
  auto target = std::make_shared<TargetLog>();
  const Respond respond = Respond::ToTarget(target, 1);
  std::weak_ptr<TargetLog> weak = target;
  target.reset();
  ASSERT_TRUE(weak.expired());
  EXPECT_NO_THROW(respond(ResponseWithBody("too late")));  // The connection is gone.
}

TEST(GatewayRespondTest, AnObservedRespondReportsTheRouteAndStatusThenAnswers) {
  ObserverLog observer;
  auto target = std::make_shared<TargetLog>();
  const std::string route = "/webmention/status/{id}";
  const Respond respond = Respond::ToTarget(target, 3).ObservedAs(&observer, route);
  respond(ResponseWithBody("gone", 404));
  ASSERT_EQ(observer.finished.size(), 1u);
  EXPECT_EQ(observer.finished[0], std::make_pair(route, 404));
  EXPECT_GE(observer.last_elapsed, absl::ZeroDuration());
  ASSERT_EQ(target->delivered.size(), 1u);
  EXPECT_EQ(target->delivered[0].second, "gone");
}

TEST(GatewayRespondTest, ObservingACopyLeavesTheOriginalUnobserved) {
  ObserverLog observer;
  std::vector<std::string> bodies;
  const Respond plain = [&](HttpResponse response) { bodies.push_back(response.body); };
  const Respond observed = plain.ObservedAs(&observer, "/ingest");
  plain(ResponseWithBody("a"));
  observed(ResponseWithBody("b"));
  EXPECT_EQ(bodies, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(observer.finished.size(), 1u);
  EXPECT_EQ(observer.finished[0].first, "/ingest");
}

}  // namespace
}  // namespace portcullis::gateway::http
