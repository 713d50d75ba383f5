// Differential: what `portcullis sign --key whsec_…` prints verifies with the reference Standard
// Webhooks library from npm ("standardwebhooks", pinned by tests/differential/standardwebhooks/
// package-lock.json). That library implements v1 (HMAC) only, so v1a is checked by our own
// verifier in ingest_tool_commands_test. Without node, npm or the registry the test is skipped
// loudly; under CI=true it fails.

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "boost/json/parse.hpp"
#include "boost/json/serialize.hpp"
#include "common/crypto/random.h"
#include "gtest/gtest.h"
#include "tests/support/npm_oracle.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace fs = std::filesystem;

TEST(SignDifferentialTest, TheReferenceAcceptsWhatPortcullisSignPrints) {
  std::optional<testing::NpmOracle> oracle;
  PORTCULLIS_INSTALL_NPM_ORACLE_OR_SKIP(oracle, PORTCULLIS_ORACLE_SOURCE_DIR,
                                        fs::path(PORTCULLIS_ORACLE_WORK_DIR) / "sign",
                                        absl::Seconds(45), "the reference library");
  boost::json::array deliveries;
  std::vector<bool> expected;
  for (int i = 0; i < 8; ++i) {
    const std::string secret = absl::StrCat(
        "whsec_", absl::Base64Escape(absl::HexStringToBytes(crypto::RandomHex(24 + 5 * i))));
    const std::string body = absl::StrCat("{\"id\":\"", crypto::RandomHex(6),
                                          "\",\"content\":\"caf\xC3\xA9 \\\"", i, "\\\"\"}\n");
    const fs::path file = oracle->work_dir() / absl::StrCat("body-", i, ".json");
    std::ofstream(file, std::ios::binary) << body;

    std::ostringstream out;
    std::ostringstream err;
    CliOptions options{.verifier_target = "127.0.0.1:1", .timeout = absl::Seconds(1)};
    options.key = secret;
    ASSERT_EQ(cli::Run({"sign", file.string()}, options, out, err), kExitOk) << err.str();
    std::map<std::string, std::string> headers;
    for (absl::string_view line : absl::StrSplit(out.str(), '\n', absl::SkipEmpty())) {
      const size_t colon = line.find(": ");
      headers[std::string(line.substr(0, colon))] = std::string(line.substr(colon + 2));
    }
    // Every fourth delivery is sent with one body byte changed: the reference must refuse it.
    const bool tamper = i % 4 == 3;
    boost::json::object delivery;
    delivery["secret"] = secret;
    delivery["msg_id"] = headers["webhook-id"];
    int64_t timestamp = 0;
    ASSERT_TRUE(absl::SimpleAtoi(headers["webhook-timestamp"], &timestamp));
    delivery["timestamp"] = timestamp;
    delivery["payload_base64"] = absl::Base64Escape(tamper ? body + " " : body);
    delivery["signature"] = headers["X-Provenance-Signature"];
    deliveries.push_back(std::move(delivery));
    expected.push_back(!tamper);
  }
  const fs::path file = oracle->work_dir() / "signed-by-cli.json";
  std::ofstream(file) << boost::json::serialize(deliveries);
  const std::optional<std::string> output =
      oracle->Run(absl::StrCat("verify ", testing::ShellQuoted(file)));
  ASSERT_TRUE(output.has_value()) << "node oracle.js verify failed";
  const boost::json::array verdicts = boost::json::parse(*output).as_array();
  ASSERT_EQ(verdicts.size(), expected.size());
  int passed = 0;
  int failed = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (verdicts[i].as_bool() == expected[i]) {
      ++passed;
    } else {
      ++failed;
      ADD_FAILURE() << "delivery " << i << ": reference said " << verdicts[i].as_bool();
    }
  }
  std::cout << "portcullis sign vs standardwebhooks: " << passed << " passed, " << failed
            << " failed\n";
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace portcullis::cli
