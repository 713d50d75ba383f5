#include "verifier-service/src/intake/site_request_validation.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::intake {
namespace {

const url::TrackingParameters kTracking = url::TrackingParameters::Default();

TEST(VerifierSiteRequestValidationTest, PageSizeAndTokens) {
  v1::ListSitesRequest sites;
  EXPECT_EQ(Validate(sites)->size, kDefaultPageSize);
  sites.set_page_size(kMaxPageSize);
  EXPECT_EQ(Validate(sites)->size, kMaxPageSize);
  for (const int bad : {-1, kMaxPageSize + 1}) {
    sites.set_page_size(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(Validate(sites).status())) << bad;
  }
  sites.set_page_size(0);
  sites.set_page_token(SitePageToken("blog.example"));
  EXPECT_EQ(Validate(sites)->after_domain, "blog.example");
  for (const char* bad : {"!!", "YWJj", "c2l0ZTo"}) {  // Not base64; "abc"; "site:" (empty).
    sites.set_page_token(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(Validate(sites).status())) << bad;
  }

  v1::ListTargetsRequest targets;
  targets.set_domain("Blog.Example");
  const TargetRule last{"https://blog.example/posts/", TargetKind::kPrefix, "blog.example"};
  targets.set_page_token(TargetPageToken(last));
  absl::StatusOr<TargetPage> page = Validate(targets);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->domain, "blog.example");
  ASSERT_TRUE(page->after.has_value());
  EXPECT_EQ(page->after->url, last.url);
  EXPECT_EQ(page->after->kind, TargetKind::kPrefix);
  targets.set_page_token(SitePageToken("blog.example"));  // A token of the other list.
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(targets).status()));
}

TEST(VerifierSiteRequestValidationTest, TargetKindIsRequired) {
  v1::AddTargetRequest request;
  request.set_url("https://blog.example/");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request, kTracking).status()));
  request.set_kind(v1::TARGET_KIND_EXACT);
  EXPECT_TRUE(Validate(request, kTracking).ok());
}

TEST(VerifierSiteRequestValidationTest, ImportNamesTheFirstBadEntryAndIsBounded) {
  v1::ImportTargetsRequest request;
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request, kTracking).status()));
  for (const char* url : {"https://blog.example/a", "https://blog.example/b", "ftp://x/"}) {
    v1::AddTargetRequest* entry = request.add_targets();
    entry->set_url(url);
    entry->set_kind(v1::TARGET_KIND_EXACT);
  }
  const absl::Status status = Validate(request, kTracking).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_EQ(status.message().rfind("target 2 (ftp://x/)", 0), 0u) << status;
  request.mutable_targets()->RemoveLast();
  EXPECT_EQ(Validate(request, kTracking)->size(), 2u);
  while (request.targets_size() <= kMaxImportTargets) {
    *request.add_targets() = request.targets(0);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request, kTracking).status()));
}

}  // namespace
}  // namespace portcullis::verifier::intake
