// C2PA in ingested items (issue 19), end to end: the real gateway and verifier binaries against
// a real PostgreSQL, the verifier trusting one C2PA signer (--c2pa_trust_anchors), publishers set
// with the real `portcullis` CLI, images signed in process (tests/support/c2pa_test_signer.h).
// What a broker sees for each decision of the issue, and what the accepted item's record says.
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/support/c2pa_test_signer.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;
using ::portcullis::testing::C2paTestCredential;
using ::portcullis::testing::C2paTestManifest;
using ::portcullis::testing::JpegScanOffset;
using ::portcullis::testing::MakeC2paTestCredential;
using ::portcullis::testing::PlainTestJpeg;
using ::portcullis::testing::SignC2paTestAsset;
using verifier::c2pa::MediaType;

constexpr char kPublisher[] = "images.example";
constexpr char kTrained[] =
    "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia";

class C2paIngestTest : public StackTest {
 protected:
  C2paIngestTest() { start_stack_ = false; }

  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    dir_ = absl::StrCat(::testing::TempDir(), "/c2pa-ingest-test-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const absl::Time now = absl::Now();
    trusted_ = MakeC2paTestCredential("Trusted Camera Co", now - absl::Hours(24),
                                      now + absl::Hours(24 * 365));
    untrusted_ = MakeC2paTestCredential("Unknown Signer", now - absl::Hours(24),
                                        now + absl::Hours(24 * 365));
    anchors_file_ = absl::StrCat(dir_, "/anchors.pem");
    std::ofstream(anchors_file_, std::ios::binary) << trusted_.certificate_pem;
    ASSERT_TRUE(stack_->StartVerifier({absl::StrCat("--c2pa_trust_anchors=", anchors_file_)}).ok());
    ASSERT_TRUE(stack_->StartGateway().ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());

    C2paTestManifest photo;
    C2paTestManifest generated;
    generated.digital_source_type = kTrained;
    signed_photo_ = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, trusted_, photo);
    tampered_photo_ = signed_photo_;
    tampered_photo_[JpegScanOffset(tampered_photo_) + 10] ^= 1;
    untrusted_photo_ = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, untrusted_, photo);
    generated_ = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, trusted_, generated);
    untrusted_generated_ =
        SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, untrusted_, generated);
    garbage_ = signed_photo_;
    // A box length that runs past its superbox: the manifest store cannot be parsed.
    garbage_[garbage_.find("jumb", garbage_.find("jumb") + 4) - 4] = '\x7F';
  }
  void TearDown() override {
    StackTest::TearDown();
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }

  ::portcullis::testing::CommandResult Cli(std::vector<std::string> args) {
    return ::portcullis::testing::RunCommand(PORTCULLIS_CLI_BINARY,
                                             stack_->CliArgs(std::move(args)));
  }
  json::value CliJson(const std::vector<std::string>& args) {
    const ::portcullis::testing::CommandResult result = Cli(args);
    EXPECT_EQ(result.exit_code, 0) << absl::StrJoin(args, " ") << ": " << result.output;
    json::error_code ec;
    json::value value = json::parse(result.output, ec);
    EXPECT_FALSE(ec) << result.output;
    return value;
  }

  // An item with one JPEG.
  static std::string Item(const std::string& id, const std::string& jpeg, bool is_synthetic) {
    return absl::StrCat(R"({"id":")", id, R"(","content":"A lighthouse at dusk.","is_synthetic":)",
                        is_synthetic ? "true" : "false",
                        R"(,"media":[{"content_type":"image/jpeg","data":")",
                        absl::Base64Escape(jpeg), R"("}]})");
  }

  ::portcullis::testing::HttpResult Post(const std::string& body) const {
    return ::portcullis::testing::SendHttp(stack_->http_port(), "POST", "/ingest", body,
                                           "application/json", absl::Seconds(30),
                                           {{"X-Provenance-Source", kPublisher}});
  }

  static std::string Member(const ::portcullis::testing::HttpResult& result, const char* name) {
    json::error_code ec;
    const json::value body = json::parse(result.body, ec);
    if (ec || !body.is_object() || !body.as_object().contains(name)) {
      return "<absent>";
    }
    return std::string(body.at(name).as_string());
  }
  // "<status> <X-Ingest-Action> <body status> <reason>".
  static std::string Outcome(const ::portcullis::testing::HttpResult& result) {
    return absl::StrCat(result.status, " ", result.Header("x-ingest-action"), " ",
                        Member(result, "status"), " ", Member(result, "reason"));
  }

  // The accepted items of `portcullis items list`, by item id.
  std::map<std::string, json::object> AcceptedItems() {
    std::map<std::string, json::object> items;
    const json::value listed = CliJson({"items", "list"});
    if (!listed.is_object() || !listed.as_object().contains("items")) {
      return items;
    }
    for (const json::value& item : listed.at("items").as_array()) {
      items[std::string(item.at("item_id").as_string())] = item.as_object();
    }
    return items;
  }

  std::string dir_;
  std::string anchors_file_;
  C2paTestCredential trusted_, untrusted_;
  std::string signed_photo_, tampered_photo_, untrusted_photo_, generated_, untrusted_generated_,
      garbage_;
};

TEST_F(C2paIngestTest, TheDecisionsOfTheIssue) {
  CliJson({"publisher", "add", kPublisher});

  // A synthetic item whose image carries a valid manifest by a trusted signer: provenance.
  EXPECT_EQ(Outcome(Post(Item("signed", signed_photo_, true))), "202 accept accepted <absent>");
  // The same item with the image's pixels changed after signing.
  EXPECT_EQ(Outcome(Post(Item("tampered", tampered_photo_, true))),
            "200 drop dropped c2pa_assertion.dataHash.mismatch");
  // Signed by a certificate outside the trust list.
  EXPECT_EQ(Outcome(Post(Item("untrusted", untrusted_photo_, true))),
            "200 drop dropped c2pa_signingCredential.untrusted");
  // A generator-declared image, trusted signer, in an item that says it is not synthetic: kept
  // (synthetic, with valid provenance).
  EXPECT_EQ(Outcome(Post(Item("generated", generated_, false))), "202 accept accepted <absent>");
  // The same declaration by an untrusted signer: nothing trusted vouches for it.
  EXPECT_EQ(Outcome(Post(Item("generated-untrusted", untrusted_generated_, false))),
            "200 drop dropped c2pa_signingCredential.untrusted");
  // Without a manifest, and nothing requires one: a plain item with a plain image.
  EXPECT_EQ(Outcome(Post(Item("plain", PlainTestJpeg(), false))), "202 accept accepted <absent>");
  // A synthetic item with a plain image has no provenance.
  EXPECT_EQ(Outcome(Post(Item("plain-synthetic", PlainTestJpeg(), true))),
            "200 drop dropped unverified_synthetic_content");

  // What was verified is kept with the accepted items.
  std::map<std::string, json::object> items = AcceptedItems();
  ASSERT_EQ(items.size(), 3u);
  ASSERT_TRUE(items.contains("generated"));
  const json::object& generated = items["generated"].at("media").as_array().at(0).as_object();
  EXPECT_EQ(generated.at("verdict").as_string(), "valid");
  EXPECT_EQ(generated.at("synthetic").as_bool(), true);
  EXPECT_EQ(generated.at("digital_source_type").as_string(), kTrained);
  EXPECT_EQ(generated.at("signer_subject").as_string(), "CN=Trusted Camera Co");
  EXPECT_EQ(generated.at("claim_generator").as_string(), "portcullis-test-signer/1");
  EXPECT_EQ(generated.at("content_type").as_string(), "image/jpeg");
  std::vector<std::string> codes;
  for (const json::value& code : generated.at("status_codes").as_array()) {
    codes.emplace_back(code.as_string());
  }
  EXPECT_NE(std::find(codes.begin(), codes.end(), "claimSignature.validated"), codes.end())
      << absl::StrJoin(codes, ",");
  EXPECT_NE(std::find(codes.begin(), codes.end(), "assertion.dataHash.match"), codes.end())
      << absl::StrJoin(codes, ",");
  const json::object& photo = items["signed"].at("media").as_array().at(0).as_object();
  EXPECT_EQ(photo.at("verdict").as_string(), "valid");
  EXPECT_FALSE(photo.contains("synthetic") && photo.at("synthetic").as_bool());
  const json::object& plain = items["plain"].at("media").as_array().at(0).as_object();
  EXPECT_EQ(plain.at("verdict").as_string(), "no_manifest");
}

TEST_F(C2paIngestTest, RequireC2paForMediaDropsAPlainJpeg) {
  CliJson({"publisher", "add", kPublisher});
  EXPECT_EQ(Outcome(Post(Item("before", PlainTestJpeg(), false))), "202 accept accepted <absent>");
  const json::value set = CliJson({"publisher", "set", kPublisher, "--require-c2pa-for-media"});
  EXPECT_EQ(set.at("publisher").at("require_c2pa_for_media").as_bool(), true) << set;
  EXPECT_EQ(Outcome(Post(Item("after", PlainTestJpeg(), false))),
            "200 drop dropped missing_c2pa_manifest");
  // A signed image still passes.
  EXPECT_EQ(Outcome(Post(Item("signed", signed_photo_, false))), "202 accept accepted <absent>");
  // Changing only what is given: turning it off keeps the rest.
  const json::value off =
      CliJson({"publisher", "set", kPublisher, "--require-c2pa-for-media=false"});
  EXPECT_FALSE(off.at("publisher").as_object().contains("require_c2pa_for_media") &&
               off.at("publisher").at("require_c2pa_for_media").as_bool())
      << off;
  EXPECT_EQ(Outcome(Post(Item("off-again", PlainTestJpeg(), false))),
            "202 accept accepted <absent>");
}

TEST_F(C2paIngestTest, APublishersOwnTrustAnchorsVouchForItsSigner) {
  CliJson({"publisher", "add", kPublisher});
  EXPECT_EQ(Outcome(Post(Item("first", untrusted_generated_, false))),
            "200 drop dropped c2pa_signingCredential.untrusted");
  const std::string own = absl::StrCat(dir_, "/own.pem");
  std::ofstream(own, std::ios::binary) << untrusted_.certificate_pem;
  const json::value set = CliJson({"publisher", "set", kPublisher, "--c2pa-trust", own});
  EXPECT_NE(std::string(set.at("publisher").at("c2pa_trust").as_string()).find("BEGIN CERTIFICATE"),
            std::string::npos);
  EXPECT_EQ(Outcome(Post(Item("second", untrusted_generated_, false))),
            "202 accept accepted <absent>");
  // Not a PEM certificate: refused, nothing changed.
  const std::string bad = absl::StrCat(dir_, "/bad.pem");
  std::ofstream(bad, std::ios::binary) << "not a certificate";
  EXPECT_NE(Cli({"publisher", "set", kPublisher, "--c2pa-trust", bad}).exit_code, 0);
  EXPECT_EQ(Outcome(Post(Item("third", untrusted_generated_, false))),
            "202 accept accepted <absent>");
}

TEST_F(C2paIngestTest, AGarbageManifestFromAVerifiedPublisherIsQuarantined) {
  CliJson({"publisher", "add", kPublisher, "--verified"});
  const ::portcullis::testing::HttpResult quarantined = Post(Item("garbage", garbage_, false));
  EXPECT_EQ(Outcome(quarantined), "202 quarantine quarantined malformed_c2pa_manifest");
  const json::value letters = CliJson({"deadletter", "list"});
  ASSERT_EQ(letters.at("dead_letters").as_array().size(), 1u) << letters;
  EXPECT_EQ(letters.at("dead_letters").as_array()[0].at("reason").as_string(),
            "malformed_c2pa_manifest");
}

TEST_F(C2paIngestTest, AGarbageManifestFromAnUnverifiedPublisherIsDropped) {
  CliJson({"publisher", "add", kPublisher});
  EXPECT_EQ(Outcome(Post(Item("garbage", garbage_, false))), "200 drop dropped c2pa_general.error");
}

}  // namespace
}  // namespace portcullis::integration
