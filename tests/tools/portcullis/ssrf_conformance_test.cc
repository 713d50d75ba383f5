#include "tools/portcullis/src/ssrf_conformance.h"

#include <filesystem>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/ci.h"
#include "tools/portcullis/src/cli.h"

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
