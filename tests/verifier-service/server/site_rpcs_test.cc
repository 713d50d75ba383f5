// site_rpcs: the site and target requests checked against the caller's binding, and the mapping
// of stored sites and targets (the handlers run over the service in verifier_service_test.cc and
// over PostgreSQL in authorized_call_test.cc).

#include "verifier-service/src/server/site_rpcs.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

auth::Caller BoundTo(std::vector<std::string> sites) {
  auth::Caller caller;
  caller.name = "test";
  caller.sites = std::move(sites);
  return caller;
}

TEST(VerifierSiteRpcsTest, ASiteIsNormalizedThenCheckedAgainstTheBinding) {
  v1::AddSiteRequest add;
  add.set_domain("Blog.Example");
  EXPECT_EQ(ValidateSite(add, BoundTo({})).value_or(""), "blog.example");
  EXPECT_EQ(ValidateSite(add, BoundTo({"blog.example"})).value_or(""), "blog.example");
  const absl::StatusOr<std::string> other = ValidateSite(add, BoundTo({"other.example"}));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(other.status().message(), ::testing::HasSubstr("blog.example"));
  EXPECT_THAT(other.status().message(), ::testing::Not(::testing::HasSubstr("other.example")));
  v1::RemoveSiteRequest remove;
  remove.set_domain("not a host");
  EXPECT_EQ(ValidateSite(remove, BoundTo({})).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(VerifierSiteRpcsTest, EveryImportedTargetMustBeOnABoundSite) {
  const url::TrackingParameters tracking = url::TrackingParameters::Default();
  v1::ImportTargetsRequest request;
  v1::AddTargetRequest* a = request.add_targets();
  a->set_url("https://a.example/post");
  a->set_kind(v1::TARGET_KIND_EXACT);
  v1::AddTargetRequest* b = request.add_targets();
  b->set_url("https://b.example/");
  b->set_kind(v1::TARGET_KIND_PREFIX);
  absl::StatusOr<std::vector<intake::TargetRule>> rules =
      ValidateTargets(request, tracking, BoundTo({"a.example", "b.example"}));
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ((*rules)[1].domain, "b.example");
  EXPECT_EQ(ValidateTargets(request, tracking, BoundTo({"a.example"})).status().code(),
            absl::StatusCode::kPermissionDenied);
  v1::ListTargetsRequest list;
  EXPECT_TRUE(ValidateTargetPage(list, BoundTo({"a.example"})).ok()) << "no site: the binding's";
  list.set_domain("b.example");
  EXPECT_EQ(ValidateTargetPage(list, BoundTo({"a.example"})).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(VerifierSiteRpcsTest, StoredSitesAndTargetsMapOntoTheProto) {
  v1::Site site;
  ToProto(store::SiteRecord{"blog.example", absl::FromUnixSeconds(1700000000), 3}, &site);
  EXPECT_EQ(site.domain(), "blog.example");
  EXPECT_EQ(site.created_at().seconds(), 1700000000);
  EXPECT_EQ(site.target_count(), 3);
  v1::Target target;
  ToProto(store::TargetRecord{{"https://blog.example/", intake::TargetKind::kPrefix, "blog.example"},
                              absl::FromUnixSeconds(1700000001)},
          &target);
  EXPECT_EQ(target.url(), "https://blog.example/");
  EXPECT_EQ(target.kind(), v1::TARGET_KIND_PREFIX);
  EXPECT_EQ(target.domain(), "blog.example");
  EXPECT_EQ(target.created_at().seconds(), 1700000001);
}

}  // namespace
}  // namespace portcullis::verifier::server
