#include "verifier-service/src/store/site_binding_sql.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::store {
namespace {

TEST(VerifierSiteBindingSqlTest, AnEmptyBindingIsTheEmptyArrayAndSeesEverySite) {
  EXPECT_EQ(SiteBindingParameter({}), "{}");
  EXPECT_TRUE(SiteVisible({}, "a.example"));
  EXPECT_TRUE(SiteVisible({}, ""));
}

TEST(VerifierSiteBindingSqlTest, EachDomainIsOneQuotedElement) {
  EXPECT_EQ(SiteBindingParameter({"a.example", "b.example"}), R"({"a.example","b.example"})");
  // Nothing a binding holds can end its element or the array early.
  EXPECT_EQ(SiteBindingParameter({R"(a"b\c)", "x,y}"}), R"({"a\"b\\c","x,y}"})");
}

TEST(VerifierSiteBindingSqlTest, ABoundCallerSeesItsDomainsExactly) {
  const SiteBinding binding = {"a.example", "b.example"};
  EXPECT_TRUE(SiteVisible(binding, "a.example"));
  EXPECT_TRUE(SiteVisible(binding, "b.example"));
  EXPECT_FALSE(SiteVisible(binding, "c.example"));
  EXPECT_FALSE(SiteVisible(binding, "sub.a.example")) << "no parent-domain matching";
  EXPECT_FALSE(SiteVisible(binding, "")) << "the global scope is not a bound site";
}

TEST(VerifierSiteBindingSqlTest, RefusalsArePermissionDeniedAndNameOnlyTheAskedDomain) {
  const absl::Status site = SiteNotVisible("c.example");
  EXPECT_TRUE(absl::IsPermissionDenied(site));
  EXPECT_NE(site.message().find("c.example"), absl::string_view::npos);
  EXPECT_TRUE(absl::IsPermissionDenied(GlobalNotVisible()));
}

}  // namespace
}  // namespace portcullis::verifier::store
