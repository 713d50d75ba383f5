// Issue 22: an ambiguous numeric host is refused the same way wherever a stranger's URL enters
// the fetch path — the start URL of a fetch (a webmention source, a SafeFetch request) and every
// redirect Location — as forbidden_url, before any lookup or connection, whatever address the
// spelling means. SafeFetcher with a scripted resolver and a recording HTTP client (no sockets).

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/fetch/ssrf_conformance.h"

namespace portcullis::verifier::fetch {
namespace {

using ::portcullis::net::IpAddress;

class VerifierEgressNumericHostFetchTest : public ::testing::Test {
 protected:
  VerifierEgressNumericHostFetchTest()
      : resolver_(
            [](absl::string_view host) -> absl::StatusOr<std::vector<IpAddress>> {
              if (host == "a.test") {
                return std::vector<IpAddress>{*IpAddress::Parse("93.184.216.34")};
              }
              return absl::NotFoundError(absl::StrCat("NXDOMAIN ", host));
            },
            &events_),
        http_(
            [this](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
              HttpResponse response;
              response.status = 302;
              response.content_type = "text/html";
              response.location = location_;
              return response;
            },
            &events_) {}

  FetchResult Run(absl::string_view url) {
    absl::StatusOr<std::unique_ptr<SafeFetcher>> fetcher =
        SafeFetcher::Create({}, &policy_, &resolver_, &http_);
    EXPECT_TRUE(fetcher.ok()) << fetcher.status();
    std::optional<FetchResult> result;
    (*fetcher)->Fetch(url, [&](FetchResult done) { result = std::move(done); });
    EXPECT_TRUE(result.has_value()) << "synchronous fakes finish the fetch inside Fetch()";
    return result.value_or(FetchResult{});
  }

  EgressPolicy policy_;
  std::string location_;
  std::vector<FetchEvent> events_;
  ScriptedResolver resolver_;
  RecordingHttpClient http_;
};

TEST_F(VerifierEgressNumericHostFetchTest, AmbiguousStartUrlsAreForbiddenUrlsWithoutAnyContact) {
  // Public (8.0.0.1, 8.8.8.8) and loopback (127.0.0.1) meanings alike.
  for (const char* url : {"http://010.0.0.1/", "http://0x7f.1/", "http://0177.0.0.1/",
                          "http://134744072/", "http://8.8.8.010/"}) {
    const FetchResult result = Run(url);
    EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenUrl) << url << ": " << result.detail;
    EXPECT_NE(result.detail.find("ambiguous numeric host"), std::string::npos) << result.detail;
  }
  EXPECT_EQ(resolver_.lookups(), 0);
  EXPECT_EQ(http_.connections(), 0);
}

TEST_F(VerifierEgressNumericHostFetchTest, AmbiguousRedirectTargetsAreForbiddenUrls) {
  for (const char* location : {"http://0x7f.1/", "//010.0.0.1/x", "https://2130706433/"}) {
    location_ = location;
    events_.clear();
    const FetchResult result = Run("http://a.test/start");
    EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenUrl) << location << ": " << result.detail;
    EXPECT_NE(result.detail.find("ambiguous numeric host"), std::string::npos) << result.detail;
    EXPECT_EQ(result.redirects, 1);
  }
  // One connection per fetch (to a.test), never one to the redirect target.
  EXPECT_EQ(http_.connections(), 3);
}

}  // namespace
}  // namespace portcullis::verifier::fetch
