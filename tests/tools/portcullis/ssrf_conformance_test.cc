#include "tools/portcullis/src/ssrf_conformance.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"
#include "tests/support/temp_path.h"
#include "tools/portcullis/src/cli.h"
#include "verifier-service/src/fetch/ssrf_conformance.h"

namespace portcullis::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two vectors that pass and three whose expectation is wrong on purpose: the harness must report
// them as failures (a runner that passes everything proves nothing).
constexpr char kMixed[] = R"json([
  {"id": "ok-url", "kind": "url", "input": "https://example.com/", "expect": "allow", "why": "public"},
  {"id": "wrong-url", "kind": "url", "input": "http://127.0.0.1/", "expect": "allow",
   "why": "deliberately wrong"},
  {"id": "ok-chain", "kind": "redirect_chain",
   "input": {"start": "http://a.test/", "dns": {"a.test": ["93.184.216.34"], "x.test": ["10.0.0.1"]},
             "hops": [{"status": 302, "location": "http://x.test/"}]},
   "expect": "block", "why": "private second hop"},
  {"id": "wrong-chain", "kind": "redirect_chain",
   "input": {"start": "http://a.test/", "dns": {"a.test": ["93.184.216.34"], "x.test": ["10.0.0.1"]},
             "hops": [{"status": 302, "location": "http://x.test/"}]},
   "expect": "allow", "why": "deliberately wrong"},
  {"id": "wrong-rebind", "kind": "dns_rebind",
   "input": {"url": "http://r.test/", "lookups": [["93.184.216.34"], ["127.0.0.1"]]},
   "expect": "allow", "why": "deliberately wrong"}
])json";

TEST(PortcullisSsrfConformanceTest, CountsPerKindAndReportsFailuresWithTheirPath) {
  std::ostringstream out;
  const absl::StatusOr<SsrfConformanceSummary> summary = RunSsrfConformance(kMixed, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 2);
  EXPECT_EQ(summary->failed, 3);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("url: 1 passed, 1 failed\n"));
  EXPECT_THAT(text, HasSubstr("redirect_chain: 1 passed, 1 failed\n"));
  EXPECT_THAT(text, HasSubstr("dns_rebind: 0 passed, 1 failed\n"));
  EXPECT_THAT(text, HasSubstr("\n2 passed, 3 failed\n"));
  EXPECT_THAT(text, HasSubstr("FAIL wrong-url (url, expect allow)"));
  EXPECT_THAT(text, HasSubstr("forbidden_address"));
  EXPECT_THAT(text, HasSubstr("lookup x.test -> [10.0.0.1]"));
  EXPECT_THAT(text, HasSubstr("connect http://r.test/ @ 93.184.216.34"));
  EXPECT_THAT(text, Not(HasSubstr("FAIL ok-")));
}

// "block" vectors that fail for a reason the policy did not decide: each must FAIL, never count
// as a correct block.
constexpr char kBlockedForTheWrongReason[] = R"json([
  {"id": "nxdomain-chain", "kind": "redirect_chain",
   "input": {"start": "http://a.test/", "dns": {"a.test": ["93.184.216.34"]},
             "hops": [{"status": 302, "location": "http://unlisted.test/"}]},
   "expect": "block", "why": "the second name is not in the stub DNS: NXDOMAIN, not a refusal"},
  {"id": "not-found-chain", "kind": "redirect_chain",
   "input": {"start": "http://a.test/", "dns": {"a.test": ["93.184.216.34"]},
             "hops": [{"status": 404}]},
   "expect": "block", "why": "a 404 is not a refusal"},
  {"id": "unscripted-rebind", "kind": "dns_rebind",
   "input": {"url": "http://r.test/", "lookups": [[]]},
   "expect": "block", "why": "no record at all: dns_not_found, not a refused answer"},
  {"id": "not-an-address", "kind": "resolved_ip", "input": "999.1.1.1", "expect": "block",
   "why": "the policy never runs on it"},
  {"id": "not-an-address-allow", "kind": "resolved_ip", "input": "nope", "expect": "allow",
   "why": "the policy never runs on it"},
  {"id": "limit-only-as-scripted", "kind": "redirect_chain",
   "input": {"start": "http://a.test/", "dns": {"a.test": ["93.184.216.34"]},
             "hops": [{"status": 302, "location": "/1"}, {"status": 302, "location": "/2"},
                      {"status": 302, "location": "/3"}, {"status": 302, "location": "/4"}]},
   "expect": "block", "why": "four redirects: refused by the hop limit, which is expected here"}
])json";

TEST(PortcullisSsrfConformanceTest, ABlockVectorPassesOnlyWhenThePolicyRefused) {
  std::ostringstream out;
  const absl::StatusOr<SsrfConformanceSummary> summary =
      RunSsrfConformance(kBlockedForTheWrongReason, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  const std::string text = out.str();
  EXPECT_EQ(summary->failed, 5) << text;
  EXPECT_EQ(summary->passed, 1) << text;
  EXPECT_THAT(text, HasSubstr("FAIL nxdomain-chain"));
  EXPECT_THAT(text, HasSubstr("expected a refusal by the policy (forbidden_address or "
                              "forbidden_url or bad_scheme), got block (dns_not_found"));
  EXPECT_THAT(text, HasSubstr("FAIL not-found-chain"));
  EXPECT_THAT(text, HasSubstr("got block (http_4xx"));
  EXPECT_THAT(text, HasSubstr("FAIL unscripted-rebind"));
  EXPECT_THAT(text, HasSubstr("FAIL not-an-address (resolved_ip, expect block)"));
  EXPECT_THAT(text, HasSubstr("FAIL not-an-address-allow (resolved_ip, expect allow)"));
  EXPECT_THAT(text, HasSubstr("the egress policy never ran on it"));
  EXPECT_THAT(text, Not(HasSubstr("FAIL limit-only-as-scripted")));
}

TEST(PortcullisSsrfConformanceTest, AUrlVectorIsRefusedBeforeDns) {
  // A refused port (forbidden_url) and a refused scheme (bad_scheme), both before any lookup.
  std::ostringstream out;
  const absl::StatusOr<SsrfConformanceSummary> summary = RunSsrfConformance(R"json([
    {"id": "port", "kind": "url", "input": "http://example.com:6379/", "expect": "block"},
    {"id": "scheme", "kind": "url", "input": "gopher://example.com/", "expect": "block"}
  ])json",
                                                                            out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 2) << out.str();
}

TEST(PortcullisSsrfConformanceTest, AnEmptyFileOrAnUnknownKindIsAnError) {
  std::ostringstream out;
  std::ostringstream err;
  const absl::StatusOr<SsrfConformanceSummary> empty = RunSsrfConformance("[]", out);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("no vector"));
  const std::string path = portcullis::testing::PrivateTempPath("empty-ssrf-vectors.json");
  std::ofstream(path) << "[]";
  EXPECT_EQ(RunSsrfConformanceFile(path, MissingData::kFail, false, out, err), kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("no vector"));
  // Built by hand (the parser refuses it already): still nothing passes.
  verifier::fetch::SsrfVector unknown;
  unknown.id = "x";
  unknown.kind = "carrier_pigeon";
  unknown.expect_block = true;
  const verifier::fetch::SsrfVectorRun run = verifier::fetch::RunSsrfVector(unknown);
  EXPECT_FALSE(run.passed);
  EXPECT_TRUE(run.events.empty());
}

TEST(PortcullisSsrfConformanceTest, MalformedFilesAreRefusedBeforeRunning) {
  std::ostringstream out;
  EXPECT_FALSE(RunSsrfConformance("{}", out).ok());
  EXPECT_FALSE(
      RunSsrfConformance(R"([{"id": "x", "kind": "nope", "input": "a", "expect": "block"}])", out)
          .ok());
  EXPECT_FALSE(
      RunSsrfConformance(R"([{"id": "x", "kind": "url", "input": "a", "expect": "maybe"}])", out)
          .ok());
  EXPECT_TRUE(out.str().empty());
}

TEST(PortcullisSsrfConformanceTest, MissingFileSkipsUnlessCi) {
  std::ostringstream out;
  std::ostringstream err;
  const std::string missing = "/nonexistent/ssrf/vectors.json";
  EXPECT_EQ(RunSsrfConformanceFile(missing, MissingData::kSkipUnlessCi, false, out, err),
            kExitSkipped);
  EXPECT_THAT(err.str(), HasSubstr("SKIPPED"));
  EXPECT_EQ(RunSsrfConformanceFile(missing, MissingData::kSkipUnlessCi, true, out, err),
            kExitFailed);
  EXPECT_EQ(RunSsrfConformanceFile(missing, MissingData::kFail, false, out, err), kExitFailed);
}

TEST(PortcullisSsrfConformanceTest, CliRunsTheSubcommand) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(cli::Run({"conformance", "ssrf"}, CliOptions{}, out, err), kExitUsage);
  // A missing file is a skip on a developer machine and a failure under CI=true.
  EXPECT_EQ(
      cli::Run({"conformance", "ssrf-if-present", "/nonexistent.json"}, CliOptions{}, out, err),
      testing::RunningInCi() ? kExitFailed : kExitSkipped);
}

}  // namespace
}  // namespace portcullis::cli
