#include "tools/portcullis/src/cli.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tests/tools/portcullis/fake_verifier.h"

namespace portcullis::cli {
namespace {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

CliResult RunCli(const std::vector<std::string>& args, const std::string& target) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = Run(args, {.verifier_target = target, .timeout = absl::Seconds(5)}, out, err);
  return {code, out.str(), err.str()};
}

TEST(CliTest, UsageErrorsSendNothingAndExit2) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"mention"}, {"mentions", "get", "x"}, {"mention", "delete", "x"},
           {"mention", "get"}, {"mention", "submit", "only-source"}}) {
    const CliResult result = RunCli(args, "127.0.0.1:1");
    EXPECT_EQ(result.code, kExitUsage);
    EXPECT_NE(result.err.find("usage:"), std::string::npos);
  }
}

TEST(CliTest, SubmitAndGetAgainstAVerifier) {
  FakeVerifier service;
  InProcessServer server(&service);
  const CliResult submitted =
      RunCli({"mention", "submit", "https://a.example/post", "https://b.example/"},
             server.target());
  EXPECT_EQ(submitted.code, kExitOk) << submitted.err;
  EXPECT_NE(submitted.out.find("\"DECISION_ACCEPTED\""), std::string::npos) << submitted.out;

  const CliResult got =
      RunCli({"mention", "get", "5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001"}, server.target());
  EXPECT_EQ(got.code, kExitOk) << got.err;
  EXPECT_NE(got.out.find("\"MENTION_STATE_PENDING\""), std::string::npos) << got.out;
}

TEST(CliTest, UnreachableVerifierFailsWithOneLine) {
  const CliResult result = RunCli({"mention", "get", "x"}, "127.0.0.1:1");
  EXPECT_EQ(result.code, kExitFailed);
  EXPECT_EQ(result.err.rfind("error: UNAVAILABLE: ", 0), 0u) << result.err;
}

}  // namespace
}  // namespace portcullis::cli
