// The egress policy over ../shared/testdata/ssrf/vectors.json (SSRF-POLICY.md, "The test
// vectors"), read in place. What this pure part of the fetcher can run, it runs in full:
//   - resolved_ip: IpAddress::Parse, then EgressPolicy::CheckAddress;
//   - url: EgressPolicy::ParseAndCheckUrl (spelling, WHATWG parse, CheckUrl), then, when that
//     passes, CheckAddresses with the stubbed DNS answer 93.184.216.34 for a name (an IP-literal
//     host is its own answer).
// redirect_chain and dns_rebind need the fetch path (resolver, pinning, redirects): they run in
// safe_fetcher_test.cc, through SafeFetcher, as every other kind does there too.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/json.hpp"
#include "common/net/ip_address.h"
#include "gtest/gtest.h"
#include "verifier-service/src/fetch/egress_policy.h"

namespace portcullis::verifier::fetch {
namespace {

namespace json = boost::json;
using ::portcullis::net::IpAddress;

constexpr char kVectorsPath[] = PORTCULLIS_SSRF_VECTORS;
// The harness's stubbed resolver answers every name with this address (SSRF-POLICY.md).
constexpr char kStubAnswer[] = "93.184.216.34";

struct Vector {
  std::string id;
  std::string kind;
  json::value input;
  bool expect_block = false;
  std::string why;
};

bool RunningInCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// nullopt with `error` set when the file is missing or malformed.
std::optional<std::vector<Vector>> Load(std::string& error, bool& missing) {
  missing = false;
  std::error_code exists_error;
  if (!std::filesystem::exists(kVectorsPath, exists_error)) {
    missing = true;
    error = absl::StrCat("SSRF vectors not found at ", kVectorsPath,
                         " (the shared test data is not checked out beside the repository)");
    return std::nullopt;
  }
  std::ifstream file(kVectorsPath, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  json::error_code parse_error;
  const json::value root = json::parse(text.str(), parse_error);
  if (parse_error || !root.is_array()) {
    error = absl::StrCat(kVectorsPath, " is not a JSON array: ", parse_error.message());
    return std::nullopt;
  }
  std::vector<Vector> vectors;
  for (const json::value& item : root.as_array()) {
    const json::object* object = item.if_object();
    if (object == nullptr || !object->contains("id") || !object->contains("kind") ||
        !object->contains("input") || !object->contains("expect") ||
        !object->at("id").is_string() || !object->at("kind").is_string() ||
        !object->at("expect").is_string()) {
      error = absl::StrCat("malformed vector: ", json::serialize(item));
      return std::nullopt;
    }
    Vector vector;
    vector.id = std::string(object->at("id").as_string());
    vector.kind = std::string(object->at("kind").as_string());
    vector.input = object->at("input");
    const std::string expect(object->at("expect").as_string());
    if (expect != "block" && expect != "allow") {
      error = absl::StrCat("vector ", vector.id, ": expect must be block or allow, not ", expect);
      return std::nullopt;
    }
    vector.expect_block = expect == "block";
    if (const json::value* why = object->if_contains("why"); why != nullptr && why->is_string()) {
      vector.why = std::string(why->as_string());
    }
    vectors.push_back(std::move(vector));
  }
  return vectors;
}

class VerifierSsrfVectorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    bool missing = false;
    std::optional<std::vector<Vector>> loaded = Load(error, missing);
    if (!loaded.has_value()) {
      if (missing && !RunningInCi()) {
        GTEST_SKIP() << "SKIPPED: " << error << "; with CI=true this is a failure";
      }
      FAIL() << error;
    }
    vectors_ = *std::move(loaded);
  }

  std::vector<const Vector*> OfKind(absl::string_view kind) const {
    std::vector<const Vector*> result;
    for (const Vector& vector : vectors_) {
      if (vector.kind == kind) {
        result.push_back(&vector);
      }
    }
    return result;
  }

  // Compares each decision with its vector, prints every mismatch with its id and why, and the
  // summary line; fails when any vector failed.
  static void Report(absl::string_view kind, const std::vector<const Vector*>& vectors,
                     const std::vector<absl::Status>& decisions) {
    int passed = 0;
    int failed = 0;
    for (size_t i = 0; i < vectors.size(); ++i) {
      const Vector& vector = *vectors[i];
      const bool blocked = !decisions[i].ok();
      if (blocked == vector.expect_block) {
        ++passed;
        continue;
      }
      ++failed;
      ADD_FAILURE() << "FAIL " << vector.id << " (" << kind << ") input "
                    << json::serialize(vector.input) << ": expected "
                    << (vector.expect_block ? "block" : "allow") << ", got "
                    << (blocked ? absl::StrCat("block: ", decisions[i].ToString())
                                : std::string("allow"))
                    << "\n  why: " << vector.why;
    }
    std::cout << kind << ": " << passed << " passed, " << failed << " failed" << std::endl;
    EXPECT_EQ(failed, 0) << kind << ": " << passed << " passed, " << failed << " failed";
  }

  std::vector<Vector> vectors_;
};

TEST_F(VerifierSsrfVectorsTest, EveryKindIsKnown) {
  std::map<std::string, int> counts;
  for (const Vector& vector : vectors_) {
    ++counts[vector.kind];
  }
  for (const auto& [kind, count] : counts) {
    EXPECT_TRUE(kind == "resolved_ip" || kind == "url" || kind == "redirect_chain" ||
                kind == "dns_rebind")
        << count << " vectors of unknown kind " << kind;
  }
  EXPECT_GT(counts["resolved_ip"], 0);
  EXPECT_GT(counts["url"], 0);
}

TEST_F(VerifierSsrfVectorsTest, ResolvedIpThroughCheckAddress) {
  const EgressPolicy policy;
  const std::vector<const Vector*> vectors = OfKind("resolved_ip");
  std::vector<absl::Status> decisions;
  for (const Vector* vector : vectors) {
    if (!vector->input.is_string()) {
      decisions.push_back(absl::InvalidArgumentError("input is not a string"));
      ADD_FAILURE() << vector->id << ": resolved_ip input is not a string";
      continue;
    }
    const json::string& text = vector->input.as_string();
    const absl::StatusOr<IpAddress> address =
        IpAddress::Parse(absl::string_view(text.data(), text.size()));
    if (!address.ok()) {
      // A resolver never answers something that is not an address: the policy cannot run on it,
      // so the vector proves nothing, whatever it expects.
      ADD_FAILURE() << vector->id << ": resolved_ip input " << json::serialize(vector->input)
                    << " is not an IP address (" << address.status()
                    << "): the egress policy never ran on it";
    }
    decisions.push_back(address.ok() ? policy.CheckAddress(*address) : address.status());
  }
  Report("resolved_ip", vectors, decisions);
}

TEST_F(VerifierSsrfVectorsTest, UrlThroughCheckUrlThenStubbedAnswer) {
  const EgressPolicy policy;
  const IpAddress stub = *IpAddress::Parse(kStubAnswer);
  const std::vector<const Vector*> vectors = OfKind("url");
  std::vector<absl::Status> decisions;
  for (const Vector* vector : vectors) {
    if (!vector->input.is_string()) {
      decisions.push_back(absl::InvalidArgumentError("input is not a string"));
      ADD_FAILURE() << vector->id << ": url input is not a string";
      continue;
    }
    const json::string& text = vector->input.as_string();
    const absl::StatusOr<url::Url> url =
        policy.ParseAndCheckUrl(absl::string_view(text.data(), text.size()));
    if (!url.ok()) {
      decisions.push_back(url.status());
      continue;
    }
    const std::optional<IpAddress> literal = IpAddress::FromUrl(*url);
    const IpAddress answer = literal.has_value() ? *literal : stub;
    decisions.push_back(policy.CheckAddresses(*url, {answer}));
  }
  Report("url", vectors, decisions);
}

}  // namespace
}  // namespace portcullis::verifier::fetch
