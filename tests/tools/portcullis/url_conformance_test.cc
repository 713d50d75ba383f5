#include "tools/portcullis/src/url_conformance.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_path.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// One passing http case, one failing (wrong expected pathname), one skipped (file scheme), one
// skipped relative to an unsupported base, one failure case refused for its scheme (skipped: the
// scheme alone refused it), one failure case rejected by the parser, comments in between.
constexpr char kMixed[] = R"json([
  "comment",
  {"input": "HTTP://Example.com:80/a/../b", "base": null, "href": "http://example.com/b",
   "origin": "http://example.com", "protocol": "http:", "username": "", "password": "",
   "host": "example.com", "hostname": "example.com", "port": "", "pathname": "/b",
   "search": "", "hash": ""},
  {"input": "http://h/x", "base": null, "href": "http://h/x", "protocol": "http:",
   "username": "", "password": "", "host": "h", "hostname": "h", "port": "",
   "pathname": "/y", "search": "", "hash": ""},
  {"input": "file:///etc", "base": null, "href": "file:///etc", "protocol": "file:",
   "username": "", "password": "", "host": "", "hostname": "", "port": "",
   "pathname": "/etc", "search": "", "hash": ""},
  {"input": "x", "base": "sc://h/", "href": "sc://h/x", "protocol": "sc:",
   "username": "", "password": "", "host": "h", "hostname": "h", "port": "",
   "pathname": "/x", "search": "", "hash": ""},
  "another comment",
  {"input": "sc://\u0000/", "base": null, "failure": true},
  {"input": "http://1.2.3.09/", "base": null, "failure": true}
])json";

TEST(UrlConformanceTest, CountsPassFailSkip) {
  std::ostringstream out;
  const absl::StatusOr<UrlConformanceSummary> summary = RunUrlConformance(kMixed, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 2);
  EXPECT_EQ(summary->failed, 1);
  EXPECT_EQ(summary->skipped, 3);
  EXPECT_EQ(summary->skipped_failure_by_scheme, 1);
  EXPECT_EQ(summary->skipped_by_reason.at("input scheme 'file'"), 1);
  EXPECT_EQ(summary->skipped_by_reason.at("relative to a base with scheme 'sc'"), 1);
  EXPECT_EQ(summary->skipped_by_reason.at("failure case refused only for its scheme 'sc'"), 1);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("FAIL \"http://h/x\": pathname: got \"/x\", want \"/y\""));
  EXPECT_THAT(text, HasSubstr("1 input scheme 'file'"));
  const std::string summary_line =
      "2 passed, 1 failed, 3 skipped (1 of them failure cases refused only for their scheme)\n";
  EXPECT_THAT(text, HasSubstr("\n" + summary_line));
  EXPECT_EQ(text.substr(text.rfind('\n', text.size() - 2) + 1), summary_line);
}

TEST(UrlConformanceTest, AFailureCaseRefusedOnlyForItsSchemeIsSkippedNotPassed) {
  // Refusing "sc:" says nothing about the error a full parser would find in the URL.
  std::ostringstream out;
  const auto summary = RunUrlConformance(
      R"([{"input": "sc://\u0000/", "base": null, "failure": true},
          {"input": "non-spec:/.//p", "base": null, "failure": true}])",
      out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 0);
  EXPECT_EQ(summary->skipped, 2);
  EXPECT_EQ(summary->skipped_failure_by_scheme, 2);
  EXPECT_THAT(out.str(),
              HasSubstr("0 passed, 0 failed, 2 skipped (2 of them failure cases refused only for "
                        "their scheme)\n"));
}

TEST(UrlConformanceTest, ExpectedFailureThatParsesFailsTheCase) {
  std::ostringstream out;
  const auto summary =
      RunUrlConformance(R"([{"input": "http://h/", "base": null, "failure": true}])", out);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->failed, 1);
  EXPECT_THAT(out.str(), HasSubstr("expected failure, got \"http://h/\""));
}

TEST(UrlConformanceTest, AnHttpAnswerIsNeverSkipped) {
  // If the parser refused a case whose answer is an http URL, that is a failure, not a skip.
  std::ostringstream out;
  const auto summary = RunUrlConformance(
      R"([{"input": "x", "base": "about:blank", "href": "http://h/x", "protocol": "http:"}])", out);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->failed, 1);
  EXPECT_EQ(summary->skipped, 0);
}

TEST(UrlConformanceTest, ToAsciiFormat) {
  std::ostringstream out;
  const auto summary = RunUrlConformance(R"json([
    "comment",
    {"input": "bücher.example", "output": "xn--bcher-kva.example"},
    {"input": "a\u00ADb", "output": "ab"},
    {"input": "a<b", "output": null},
    {"input": "example.com", "output": null}
  ])json",
                                         out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 3);
  EXPECT_EQ(summary->failed, 1);
  EXPECT_THAT(out.str(), HasSubstr("FAIL \"example.com\": expected failure"));
  EXPECT_THAT(out.str(), HasSubstr("3 passed, 1 failed, 0 skipped\n"));
}

TEST(UrlConformanceTest, KnownDifferencesAreReportedApartWithTheirReason) {
  std::ostringstream out;
  const auto summary = RunUrlConformance(R"json([
    {"input": "\u1E9E.com", "output": "xn--zca.com"},
    {"input": "\u00DF.com", "output": "xn--zca.com"}
  ])json",
                                         out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->passed, 1);
  EXPECT_EQ(summary->failed, 0);
  EXPECT_EQ(summary->known_differences, 1);
  EXPECT_THAT(out.str(), HasSubstr("KNOWN \"\u1E9E.com\""));
  EXPECT_THAT(out.str(), HasSubstr("ICU 72 (Unicode 15.0) maps it to \"ss\""));
  EXPECT_THAT(out.str(), HasSubstr("1 known differences"));
}

TEST(UrlConformanceTest, MalformedDataIsOneClearError) {
  for (const std::string bad : {"[", "{\"input\": \"x\"}", "[42]", "[{\"base\": null}]",
                                "[{\"input\": \"x\", \"base\": null}]", "[]", "[\"only comments\"]",
                                "[{\"input\": \"a\", \"output\": 1}]",
                                "[{\"input\": \"a\", \"output\": null}, {\"input\": \"b\", "
                                "\"base\": null, \"failure\": true}]"}) {
    std::ostringstream out;
    const auto summary = RunUrlConformance(bad, out);
    EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(out.str(), "") << bad;
  }
}

class UrlConformanceFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = portcullis::testing::PrivateTempPath(name);
    std::ofstream(path) << content;
    return path;
  }
};

TEST_F(UrlConformanceFileTest, ExitCodes) {
  std::ostringstream out;
  std::ostringstream err;
  const std::string passing =
      Write("passing.json", R"([{"input": "http://1.2.3.09/", "base": null, "failure": true}])");
  EXPECT_EQ(RunUrlConformanceFile(passing, MissingData::kFail, false, out, err), kExitOk);
  EXPECT_EQ(RunUrlConformanceFile(Write("mixed.json", kMixed), MissingData::kFail, false, out, err),
            kExitFailed);
  EXPECT_EQ(RunUrlConformanceFile(Write("bad.json", "[{"), MissingData::kFail, false, out, err),
            kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("malformed JSON"));
}

TEST_F(UrlConformanceFileTest, MissingFileIsSkippedOnlyOutsideCi) {
  const std::string missing = ::testing::TempDir() + "/does-not-exist.json";
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(RunUrlConformanceFile(missing, MissingData::kFail, false, out, err), kExitFailed);
  EXPECT_EQ(RunUrlConformanceFile(missing, MissingData::kSkipUnlessCi, true, out, err),
            kExitFailed);
  std::ostringstream skip_err;
  EXPECT_EQ(RunUrlConformanceFile(missing, MissingData::kSkipUnlessCi, false, out, skip_err),
            kExitSkipped);
  EXPECT_THAT(skip_err.str(), HasSubstr("SKIPPED"));
}

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

CliResult RunCli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code =
      Run(args, {.verifier_target = "127.0.0.1:1", .timeout = absl::Seconds(1)}, out, err);
  return {code, out.str(), err.str()};
}

TEST(UrlCliTest, ParsePrintsComponentsAsJson) {
  const CliResult result =
      RunCli({"url", "parse", "../c?utm_source=x#f", "HTTP://U:P@0x7f.1:8080/a/b"});
  EXPECT_EQ(result.code, kExitOk) << result.err;
  EXPECT_EQ(
      result.out,
      "{\"href\":\"http://U:P@127.0.0.1:8080/c?utm_source=x#f\","
      "\"origin\":\"http://127.0.0.1:8080\",\"protocol\":\"http:\",\"username\":\"U\","
      "\"password\":\"P\",\"host\":\"127.0.0.1:8080\",\"hostname\":\"127.0.0.1\","
      "\"port\":\"8080\",\"pathname\":\"/c\",\"search\":\"?utm_source=x\",\"hash\":\"#f\"}\n");
}

TEST(UrlCliTest, ParseErrorsAndUsage) {
  EXPECT_EQ(RunCli({"url", "parse", "http://1.2.3.09/"}).code, kExitFailed);
  EXPECT_THAT(RunCli({"url", "parse", "ftp://h/"}).err, HasSubstr("UNIMPLEMENTED"));
  EXPECT_THAT(RunCli({"url", "parse", "x", "nope"}).err, HasSubstr("error: base:"));
  for (const auto& args : std::vector<std::vector<std::string>>{{"url"},
                                                                {"url", "parse"},
                                                                {"url", "print", "x"},
                                                                {"url", "parse", "a", "b", "c"},
                                                                {"conformance"},
                                                                {"conformance", "css", "f"},
                                                                {"conformance", "url"},
                                                                {"conformance", "url", "a", "b"}}) {
    const CliResult result = RunCli(args);
    EXPECT_EQ(result.code, kExitUsage);
    EXPECT_THAT(result.err, HasSubstr("usage:"));
  }
  EXPECT_THAT(RunCli({"conformance", "url", "/nonexistent/urltestdata.json"}).err,
              Not(HasSubstr("SKIPPED")));
}

}  // namespace
}  // namespace portcullis::cli
