// The drop ledger's commands (issue 17): --keep-drops and --since parsing, `drops list` paging
// and `drops reevaluate` printing exactly its three counts, against an in-process fake verifier.
#include "tools/portcullis/src/lifecycle_commands.h"

#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "boost/json/parse.hpp"
#include "gtest/gtest.h"
#include "tests/tools/portcullis/fake_verifier.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace v1 = verifier::v1;

TEST(ParseKeepDropsTest, OffOrAPositiveWholeDurationWithDays) {
  EXPECT_EQ(*ParseKeepDrops("off"), absl::ZeroDuration());
  EXPECT_EQ(*ParseKeepDrops("OFF"), absl::ZeroDuration());
  EXPECT_EQ(*ParseKeepDrops("0"), absl::ZeroDuration());
  EXPECT_EQ(*ParseKeepDrops("7d"), absl::Hours(7 * 24));
  EXPECT_EQ(*ParseKeepDrops("36h"), absl::Hours(36));
  EXPECT_EQ(*ParseKeepDrops("90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseKeepDrops("1d12h"), absl::Hours(36));
  EXPECT_EQ(*ParseKeepDrops("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseKeepDrops("3660d"), absl::Hours(3660 * 24));
  for (const char* bad : {"", "soon", "7", "-1h", "0s", "1.5s", "d", "7dd", "1.5d", "x7d", "3661d",
                          "100000d", "7d-1h"}) {
    const absl::StatusOr<absl::Duration> parsed = ParseKeepDrops(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << bad;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.status().message().find("--keep-drops"), absl::string_view::npos);
    }
  }
}

TEST(ParseSinceTest, ATimeOrHowLongAgo) {
  const absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  EXPECT_EQ(*ParseSince("2023-11-14T22:13:20Z", now), now);
  EXPECT_EQ(*ParseSince("2023-11-15T00:13:20+02:00", now), now);
  EXPECT_EQ(*ParseSince("24h", now), now - absl::Hours(24));
  EXPECT_EQ(*ParseSince("2d", now), now - absl::Hours(48));
  for (const char* bad : {"", "yesterday", "-1h", "2023-13-01T00:00:00Z"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseSince(bad, now).status())) << bad;
  }
}

// Answers ListDrops (two pages) and ReevaluateDrops; records the requests.
class FakeDropLedger final : public v1::Verifier::Service {
 public:
  grpc::Status ListDrops(grpc::ServerContext*, const v1::ListDropsRequest* request,
                         v1::ListDropsResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    lists.push_back(*request);
    v1::DroppedDelivery* drop = response->add_drops();
    drop->set_publisher(request->publisher());
    if (request->page_token().empty()) {
      drop->set_item_id("first");
      response->set_next_page_token("more");
    } else {
      drop->set_item_id("second");
    }
    return grpc::Status::OK;
  }
  grpc::Status ReevaluateDrops(grpc::ServerContext*, const v1::ReevaluateDropsRequest* request,
                               v1::ReevaluateDropsResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    reevaluations.push_back(*request);
    if (request->publisher() == "nobody") {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "unknown publisher");
    }
    response->set_matched(3);
    response->set_accepted(request->dry_run() ? 0 : 1);
    response->set_still_dropped(2);
    response->set_dry_run(request->dry_run());
    return grpc::Status::OK;
  }

  std::vector<v1::ListDropsRequest> lists;
  std::vector<v1::ReevaluateDropsRequest> reevaluations;

 private:
  std::mutex mu_;
};

class DropsCommandTest : public ::testing::Test {
 protected:
  int Run(const std::vector<std::string>& args, CliOptions options = {}) {
    out_.str("");
    err_.str("");
    options.verifier_target = server_.target();
    options.token = kTestToken;
    options.timeout = absl::Seconds(5);
    return cli::Run(args, options, out_, err_);
  }

  FakeDropLedger service_;
  InProcessServer server_{&service_};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(DropsCommandTest, ReevaluatePrintsExactlyTheThreeCounts) {
  CliOptions options;
  options.drops_publisher = "feeds";
  options.drops_reason = "invalid_provenance_signature";
  options.drops_since = "2023-11-14T22:13:20.5Z";
  ASSERT_EQ(Run({"drops", "reevaluate"}, options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "{\"matched\":3,\"accepted\":1,\"still_dropped\":2}\n");
  ASSERT_EQ(service_.reevaluations.size(), 1u);
  const v1::ReevaluateDropsRequest& sent = service_.reevaluations[0];
  EXPECT_EQ(sent.publisher(), "feeds");
  EXPECT_EQ(sent.reason(), "invalid_provenance_signature");
  EXPECT_EQ(sent.since().seconds(), 1'700'000'000);
  EXPECT_EQ(sent.since().nanos(), 500'000'000);
  EXPECT_FALSE(sent.dry_run());

  options.dry_run = true;
  options.drops_since.clear();
  ASSERT_EQ(Run({"drops", "reevaluate"}, options), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "{\"matched\":3,\"accepted\":0,\"still_dropped\":2}\n");
  EXPECT_TRUE(service_.reevaluations[1].dry_run());
  EXPECT_FALSE(service_.reevaluations[1].has_since());

  options.drops_publisher = "nobody";
  EXPECT_EQ(Run({"drops", "reevaluate"}, options), kExitFailed);
  EXPECT_NE(err_.str().find("FAILED_PRECONDITION"), std::string::npos) << err_.str();
}

TEST_F(DropsCommandTest, ListReadsEveryPageIntoOneObject) {
  CliOptions options;
  options.drops_publisher = "feeds";
  ASSERT_EQ(Run({"drops", "list"}, options), kExitOk) << err_.str();
  const boost::json::value listed = boost::json::parse(out_.str());
  ASSERT_EQ(listed.at("drops").as_array().size(), 2u);
  EXPECT_EQ(listed.at("drops").as_array()[0].at("item_id").as_string(), "first");
  EXPECT_EQ(listed.at("drops").as_array()[1].at("item_id").as_string(), "second");
  ASSERT_EQ(service_.lists.size(), 2u);
  EXPECT_EQ(service_.lists[1].page_token(), "more");
}

TEST_F(DropsCommandTest, UsageErrorsSendNothing) {
  CliOptions options;
  EXPECT_EQ(Run({"drops", "list"}, options), kExitUsage);  // No --publisher.
  options.drops_publisher = "feeds";
  EXPECT_EQ(Run({"drops"}, options), kExitUsage);
  EXPECT_EQ(Run({"drops", "purge"}, options), kExitUsage);
  EXPECT_EQ(Run({"drops", "list", "extra"}, options), kExitUsage);
  options.drops_since = "last tuesday";
  EXPECT_EQ(Run({"drops", "list"}, options), kExitUsage);
  options.drops_since.clear();
  options.dry_run = true;
  EXPECT_EQ(Run({"drops", "list"}, options), kExitUsage);
  EXPECT_TRUE(service_.lists.empty());
  EXPECT_TRUE(service_.reevaluations.empty());
}

}  // namespace
}  // namespace portcullis::cli
