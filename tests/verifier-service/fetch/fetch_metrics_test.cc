// FetchMetrics fed by SafeFetcher (scripted resolver, recording HTTP client), read back in the
// Prometheus text format as a scrape would.

#include "verifier-service/src/fetch/fetch_metrics.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/metrics/text_exposition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/fetch/ssrf_conformance.h"

namespace portcullis::verifier::fetch {
namespace {

using ::portcullis::net::IpAddress;
using ::testing::HasSubstr;

class VerifierFetchMetricsTest : public ::testing::Test {
 protected:
  VerifierFetchMetricsTest()
      : metrics_(registry_),
        resolver_(
            [this](absl::string_view host) -> absl::StatusOr<std::vector<IpAddress>> {
              const auto it = dns_.find(std::string(host));
              if (it == dns_.end()) {
                return absl::NotFoundError("NXDOMAIN");
              }
              return it->second;
            },
            &events_),
        http_(
            [this](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
              HttpResponse response;
              if (request.url.path() == "/to-loopback") {
                response.status = 302;
                response.location = "http://127.0.0.1/";
                return response;
              }
              response.status = 200;
              response.content_type = "text/html";
              response.body = "12345";
              return response;
            },
            &events_) {}

  FetchOutcome Run(const std::string& url) {
    auto fetcher = *SafeFetcher::Create({}, &policy_, &resolver_, &http_, &metrics_);
    FetchOutcome outcome = FetchOutcome::kCancelled;
    fetcher->Fetch(url, [&](FetchResult result) { outcome = result.outcome; });
    return outcome;
  }

  std::string Scrape() { return metrics::RenderText(registry_); }

  prometheus::Registry registry_;
  FetchMetrics metrics_;
  EgressPolicy policy_;
  std::map<std::string, std::vector<IpAddress>> dns_ = {
      {"a.test", {*IpAddress::Parse("93.184.216.34")}},
      {"mixed.test", {*IpAddress::Parse("93.184.216.34"), *IpAddress::Parse("169.254.169.254")}},
      {"mapped.test", {*IpAddress::Parse("::ffff:10.0.0.1")}},
  };
  std::vector<FetchEvent> events_;
  ScriptedResolver resolver_;
  RecordingHttpClient http_;
};

TEST_F(VerifierFetchMetricsTest, CountsOutcomesRefusalsLookupsAndBytes) {
  EXPECT_EQ(Run("http://a.test/"), FetchOutcome::kOk);
  EXPECT_EQ(Run("http://a.test/to-loopback"), FetchOutcome::kForbiddenAddress);
  EXPECT_EQ(Run("http://mixed.test/"), FetchOutcome::kForbiddenAddress);
  EXPECT_EQ(Run("http://mapped.test/"), FetchOutcome::kForbiddenAddress);
  EXPECT_EQ(Run("http://user:pw@a.test/"), FetchOutcome::kForbiddenUrl);
  EXPECT_EQ(Run("http://nowhere.test/"), FetchOutcome::kDnsNotFound);
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_fetches_total{outcome=\"ok\"} 1"));
  EXPECT_THAT(
      text, HasSubstr("portcullis_verifier_fetch_fetches_total{outcome=\"forbidden_address\"} 3"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_refusals_total{reason=\"loopback\","
                              "stage=\"redirect\"} 1"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_refusals_total{reason=\"link local\","
                              "stage=\"dns\"} 1"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_refusals_total{reason=\"IPv4-mapped\","
                              "stage=\"dns\"} 1"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_refusals_total{reason=\"forbidden_url\","
                              "stage=\"url\"} 1"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_body_bytes_total 5"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_in_flight 0"));
  EXPECT_THAT(
      text,
      HasSubstr("portcullis_verifier_fetch_dns_lookup_duration_seconds_count{result=\"ok\"} 4"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_fetch_dns_lookup_duration_seconds_count{result="
                              "\"not_found\"} 1"));
}

}  // namespace
}  // namespace portcullis::verifier::fetch
