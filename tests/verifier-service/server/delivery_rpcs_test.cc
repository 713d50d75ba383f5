#include "verifier-service/src/server/delivery_rpcs.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

v1::CreateSubscriptionRequest SiteRequest(const std::string& url) {
  v1::CreateSubscriptionRequest request;
  request.set_site("Blog.Example");
  request.set_url(url);
  request.add_events("mention.verified");
  request.add_events("mention.removed");
  request.add_events("mention.verified");
  request.set_secret(kSecret);
  return request;
}

class VerifierDeliveryRpcsTest : public ::testing::Test {
 protected:
  fetch::EgressPolicy policy_;
  auth::Caller unbound_;
};

TEST_F(VerifierDeliveryRpcsTest, AValidSiteSubscriptionIsNormalized) {
  absl::StatusOr<store::NewSubscription> subscription =
      ValidateCreateSubscription(SiteRequest("https://Hooks.Example/in?x=1"), unbound_, policy_);
  ASSERT_TRUE(subscription.ok()) << subscription.status();
  EXPECT_EQ(subscription->site, "blog.example");
  EXPECT_EQ(subscription->url, "https://hooks.example/in?x=1");
  EXPECT_EQ(subscription->events,
            (std::vector<std::string>{"mention.verified", "mention.removed"}));
  EXPECT_EQ(subscription->signature_version, "v1");
  EXPECT_EQ(subscription->signing_key.size(), 24u);
}

TEST_F(VerifierDeliveryRpcsTest, PrivateAndSpecialDestinationsAreRefusedAsPermissionDenied) {
  for (const char* url :
       {"http://169.254.169.254/", "http://127.0.0.1/hook", "http://10.0.0.8/", "http://[::1]/",
        "http://localhost/hook", "http://0x7f.1/", "http://93.184.216.34:22/"}) {
    const absl::Status status =
        ValidateCreateSubscription(SiteRequest(url), unbound_, policy_).status();
    EXPECT_TRUE(absl::IsPermissionDenied(status)) << url << ": " << status;
  }
  for (const char* url : {"", "not a url", "ftp://files.example/", "https://user:pw@h.example/"}) {
    const absl::Status status =
        ValidateCreateSubscription(SiteRequest(url), unbound_, policy_).status();
    EXPECT_FALSE(status.ok()) << url;
  }
}

TEST_F(VerifierDeliveryRpcsTest, ScopesEventsAndKeysAreChecked) {
  v1::CreateSubscriptionRequest both = SiteRequest("https://hooks.example/");
  both.set_publisher("feeds.example");
  EXPECT_TRUE(
      absl::IsInvalidArgument(ValidateCreateSubscription(both, unbound_, policy_).status()));
  v1::CreateSubscriptionRequest wrong_kind = SiteRequest("https://hooks.example/");
  wrong_kind.add_events("ingest.accepted");
  EXPECT_TRUE(
      absl::IsInvalidArgument(ValidateCreateSubscription(wrong_kind, unbound_, policy_).status()));
  v1::CreateSubscriptionRequest unknown = SiteRequest("https://hooks.example/");
  unknown.add_events("ping");
  EXPECT_TRUE(
      absl::IsInvalidArgument(ValidateCreateSubscription(unknown, unbound_, policy_).status()));
  v1::CreateSubscriptionRequest two_keys = SiteRequest("https://hooks.example/");
  two_keys.set_signing_key("whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=");
  EXPECT_TRUE(
      absl::IsInvalidArgument(ValidateCreateSubscription(two_keys, unbound_, policy_).status()));
  // Bound tokens: their sites only, and no publisher's.
  auth::Caller bound;
  bound.sites = {"other.example"};
  EXPECT_TRUE(absl::IsPermissionDenied(
      ValidateCreateSubscription(SiteRequest("https://hooks.example/"), bound, policy_).status()));
  v1::CreateSubscriptionRequest publisher;
  publisher.set_publisher("feeds.example");
  publisher.set_url("https://hooks.example/");
  publisher.add_events("ingest.accepted");
  publisher.set_signing_key("whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=");
  EXPECT_TRUE(ValidateCreateSubscription(publisher, unbound_, policy_).ok());
  EXPECT_TRUE(
      absl::IsPermissionDenied(ValidateCreateSubscription(publisher, bound, policy_).status()));
}

TEST_F(VerifierDeliveryRpcsTest, ReplayTakesAnIdOrASubscriptionWithFilters) {
  v1::ReplayDeliveriesRequest request;
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateReplay(request).status()));
  request.set_subscription_id("5b0f8c3e-8a8e-4c57-9a51-1f6f0b2d9c11");
  request.set_failed_only(true);
  request.mutable_since()->set_seconds(1764672000);
  request.set_event_type("mention.updated");
  absl::StatusOr<store::ReplayFilter> filter = ValidateReplay(request);
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_TRUE(filter->failed_only);
  EXPECT_EQ(filter->since, absl::FromUnixSeconds(1764672000));
  request.set_delivery_id("5b0f8c3e-8a8e-4c57-9a51-1f6f0b2d9c12");
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateReplay(request).status()));
  request.clear_subscription_id();
  request.set_delivery_id("not-a-uuid");
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateReplay(request).status()));
  request.set_delivery_id("5b0f8c3e-8a8e-4c57-9a51-1f6f0b2d9c12");
  request.set_event_type("mention.exploded");
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateReplay(request).status()));
}

}  // namespace
}  // namespace portcullis::verifier::server
