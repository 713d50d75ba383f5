#include "tools/portcullis/src/delivery_commands.h"

#include <sstream>

#include "gtest/gtest.h"

namespace portcullis::cli {
namespace {

// Usage errors are found before anything is sent (no verifier, no token needed).
TEST(DeliveryCommandsTest, UsageErrorsNeedNoVerifier) {
  CliOptions options;
  options.token = "pct_unused";
  options.verifier_target = "127.0.0.1:1";
  options.timeout = absl::Seconds(1);
  const auto run = [&](std::vector<std::string> args) {
    std::ostringstream out;
    std::ostringstream err;
    const std::optional<int> code = RunDeliveryCommand(args, options, out, err);
    return std::make_pair(code.value_or(-1), err.str());
  };
  EXPECT_EQ(RunDeliveryCommand({"site", "list"}, options, std::cout, std::cerr), std::nullopt);
  EXPECT_EQ(run({"subscription"}).first, kExitUsage);
  EXPECT_EQ(run({"subscription", "add"}).first, kExitUsage);  // no scope
  options.list_site = "blog.example";
  options.subscription_publisher = "feeds.example";
  EXPECT_NE(run({"subscription", "add"}).second.find("exactly one of --site and --publisher"),
            std::string::npos);
  options.subscription_publisher.clear();
  options.subscription_url = "https://hooks.example/";
  options.subscription_events = "mention.verified";
  EXPECT_NE(run({"subscription", "add"}).second.find("exactly one of --secret and --signing-key"),
            std::string::npos);
  EXPECT_EQ(run({"subscription", "remove"}).first, kExitUsage);
  EXPECT_EQ(run({"delivery", "list"}).first, kExitUsage);  // no --subscription
  EXPECT_EQ(run({"delivery", "replay"}).first, kExitUsage);
  options.delivery_subscription = "5b0f8c3e-8a8e-4c57-9a51-1f6f0b2d9c11";
  options.delivery_since = "last week";
  EXPECT_NE(run({"delivery", "replay"}).second.find("--since"), std::string::npos);
  EXPECT_EQ(run({"delivery", "replay", "5b0f8c3e-8a8e-4c57-9a51-1f6f0b2d9c12"}).first,
            kExitUsage);  // an id and a filter
  EXPECT_EQ(run({"delivery", "frobnicate"}).first, kExitUsage);
}

}  // namespace
}  // namespace portcullis::cli
