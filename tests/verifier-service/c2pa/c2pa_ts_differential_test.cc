// C2PA vectors made the way a real signer makes them, and a second opinion on each:
//  - a test PKI made with the `openssl` command (a trusted CA and an untrusted one, signing
//    certificates for ES256, ES384, PS256 and Ed25519, one that expired in 2021);
//  - JPEG and PNG files signed with the npm `@trustnxt/c2pa-ts` library (tests/differential/
//    c2pa-ts/oracle.js), some then changed by hand (pixels after signing, a truncated JUMBF box);
//  - our validator's verdict on each file against the expected one stated below, and c2pa-ts's own
//    validator on the same file as a differential oracle: where both check something (the claim
//    signature, the hashed URIs, the data hash, an expired signing certificate), the verdicts
//    agree. c2pa-ts does not evaluate chains of trust (its README: "mostly implemented except
//    chain of trust validation"), so signingCredential.trusted/untrusted is ours alone.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "boost/json/parse.hpp"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"
#include "tests/support/npm_oracle.h"
#include "verifier-service/src/c2pa/manifest_validator.h"
#include "verifier-service/src/c2pa/status_codes.h"

namespace portcullis::verifier::c2pa {
namespace {

namespace fs = std::filesystem;
using ::portcullis::testing::RunShell;
using ::portcullis::testing::ShellQuoted;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteAll(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The code's family: "assertion.dataHash.match" -> "assertion.dataHash".
std::string Family(const std::string& code) { return code.substr(0, code.rfind('.')); }

bool Compared(const std::string& family) {
  return family == "claimSignature" || family == "assertion.hashedURI" ||
         family == "assertion.dataHash";
}

class VerifierC2paDifferentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PORTCULLIS_INSTALL_NPM_ORACLE_OR_SKIP(
        oracle_, PORTCULLIS_ORACLE_SOURCE_DIR,
        fs::path(PORTCULLIS_ORACLE_WORK_DIR) /
            ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        absl::Seconds(90), "c2pa-ts");
    dir_ = oracle_->work_dir() / "vectors";
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cadb");
    ASSERT_TRUE(MakePki()) << "the openssl command failed";
    WriteAll(dir_ / "plain.jpg", testing::PlainTestJpeg());
    WriteAll(dir_ / "plain.png", testing::PlainTestPng());
    anchors_ = TrustAnchors::FromPem(ReadAll(dir_ / "ca.pem")).value();
  }

  bool Sh(const std::string& command) {
    return RunShell(absl::StrCat("cd ", ShellQuoted(dir_), " && (", command, ") 2>/dev/null"))
        .has_value();
  }

  bool MakePki() {
    WriteAll(
        dir_ / "openssl.cnf",
        "[ca]\ndefault_ca = test_ca\n"
        "[test_ca]\ndatabase = cadb/index.txt\nserial = cadb/serial\nnew_certs_dir = cadb\n"
        "default_md = sha256\npolicy = any\nunique_subject = no\n"
        "[any]\ncommonName = supplied\norganizationName = optional\n"
        "[req]\ndistinguished_name = dn\n[dn]\n"
        "[ca_ext]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign\n"
        "subjectKeyIdentifier = hash\n"
        "[tsa_ext]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature\n"
        "extendedKeyUsage = critical,timeStamping\n"
        "[signer_ext]\nbasicConstraints = critical,CA:FALSE\n"
        "keyUsage = critical,digitalSignature\nextendedKeyUsage = emailProtection\n"
        "subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid\n");
    WriteAll(dir_ / "cadb/index.txt", "");
    WriteAll(dir_ / "cadb/serial", "1000\n");
    bool ok = true;
    for (const char* ca : {"ca", "other_ca"}) {
      ok = ok && Sh(absl::StrCat(
                     "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ", ca,
                     ".key && openssl req -config openssl.cnf -x509 -new -key ", ca,
                     ".key -subj '/CN=", ca, "' -days 30 -extensions ca_ext -out ", ca, ".pem"));
    }
    // name, key algorithm, issuing CA, validity ("" = the next 30 days)
    const std::vector<std::vector<std::string>> signers = {
        {"signer", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "ca", ""},
        {"es384", "-algorithm EC -pkeyopt ec_paramgen_curve:P-384", "ca", ""},
        {"ps256", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048", "ca", ""},
        {"ed25519", "-algorithm ED25519", "ca", ""},
        {"stranger", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "other_ca", ""},
        {"expired", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "ca",
         "-startdate 20200101000000Z -enddate 20210101000000Z"},
        {"tsa", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256", "ca", ""},
    };
    for (const std::vector<std::string>& s : signers) {
      const std::string validity = s[3].empty() ? "-days 30" : s[3];
      ok = ok && Sh(absl::StrCat("openssl genpkey ", s[1], " -out ", s[0],
                                 ".key && openssl req -config ", "openssl.cnf -new -key ", s[0],
                                 ".key -subj '/CN=", s[0], " signer/O=Portcullis Tests' -out ",
                                 s[0], ".csr && openssl ca -batch ", "-config openssl.cnf -cert ",
                                 s[2], ".pem -keyfile ", s[2], ".key -in ", s[0], ".csr -out ",
                                 s[0], ".pem -extensions signer_ext -notext ", validity));
    }
    return ok;
  }

  // Signs dir/IN into dir/OUT with c2pa-ts.
  bool Sign(const std::string& in, const std::string& out, const std::string& signer,
            const std::string& algorithm, const std::string& options = "") {
    return oracle_
        ->Run(absl::StrCat("sign ", ShellQuoted(dir_ / in), " ", ShellQuoted(dir_ / out), " ",
                           ShellQuoted(dir_ / (signer + ".key")), " ",
                           ShellQuoted(dir_ / (signer + ".pem")), " ", algorithm, " ", options))
        .has_value();
  }

  std::optional<testing::NpmOracle> oracle_;
  fs::path dir_;
  TrustAnchors anchors_;
};

struct Expected {
  std::string file;
  Verdict verdict;
  std::string failure_code;
  std::string digital_source_type;
};

TEST_F(VerifierC2paDifferentialTest, VectorsSignedByC2paTsGetTheExpectedVerdicts) {
  ASSERT_TRUE(Sign("plain.jpg", "signed.jpg", "signer", "ES256"));
  ASSERT_TRUE(Sign("plain.png", "signed.png", "signer", "ES256"));
  ASSERT_TRUE(Sign("plain.jpg", "es384.jpg", "es384", "ES384"));
  ASSERT_TRUE(Sign("plain.jpg", "ps256.jpg", "ps256", "PS256"));
  ASSERT_TRUE(Sign("plain.png", "ed25519.png", "ed25519", "Ed25519"));
  ASSERT_TRUE(Sign("plain.jpg", "untrusted.jpg", "stranger", "ES256"));
  ASSERT_TRUE(Sign("plain.jpg", "expired.jpg", "expired", "ES256"));
  ASSERT_TRUE(
      Sign("plain.jpg", "generated.jpg", "signer", "ES256", absl::StrCat("--source ", kTrainedAlgorithmicMedia)));
  ASSERT_TRUE(
      Sign("plain.png", "generated.png", "signer", "ES256", absl::StrCat("--source ", kTrainedAlgorithmicMedia)));
  // A c2pa.claim.v2 (created_assertions, claim_generator_info as a map).
  ASSERT_TRUE(Sign("plain.png", "claim_v2.png", "signer", "ES256",
                   absl::StrCat("--v2 --source ", kTrainedAlgorithmicMedia)));
  // A time-stamp by c2pa-ts's own LocalTimestampProvider, with a TSA certificate of the trusted
  // CA: OpenSSL refuses that TSTInfo (its policy is not a valid OID encoding), so to us the
  // time-stamp is timeStamp.untrusted (informational) and the chain is judged now — still valid.
  ASSERT_TRUE(Sign(
      "plain.jpg", "timestamped.jpg", "signer", "ES256",
      absl::StrCat("--tsa ", ShellQuoted(dir_ / "tsa.key"), " ", ShellQuoted(dir_ / "tsa.pem"))));

  // Pixels changed after signing: one byte of the entropy-coded image data.
  std::string tampered = ReadAll(dir_ / "signed.jpg");
  tampered[testing::JpegScanOffset(tampered) + 10] ^= 0x01;
  WriteAll(dir_ / "tampered.jpg", tampered);
  // A truncated JUMBF box: the PNG's caBX chunk loses its last 64 bytes (the chunk length
  // follows, so the PNG itself stays well formed; the boxes inside now run past their end).
  std::string truncated = ReadAll(dir_ / "signed.png");
  const size_t chunk = truncated.find("caBX") - 4;
  const uint32_t length = (static_cast<uint8_t>(truncated[chunk]) << 24) |
                          (static_cast<uint8_t>(truncated[chunk + 1]) << 16) |
                          (static_cast<uint8_t>(truncated[chunk + 2]) << 8) |
                          static_cast<uint8_t>(truncated[chunk + 3]);
  const uint32_t shorter = length - 64;
  for (int i = 0; i < 4; ++i) {
    truncated[chunk + i] = static_cast<char>((shorter >> (8 * (3 - i))) & 0xFF);
  }
  truncated.erase(chunk + 8 + shorter, 64);
  WriteAll(dir_ / "truncated.png", truncated);

  const std::vector<Expected> expected = {
      {"signed.jpg", Verdict::kValid, "", ""},
      {"signed.png", Verdict::kValid, "", ""},
      {"es384.jpg", Verdict::kValid, "", ""},
      {"ps256.jpg", Verdict::kValid, "", ""},
      {"ed25519.png", Verdict::kValid, "", ""},
      {"tampered.jpg", Verdict::kInvalid, std::string(codes::kAssertionDataHashMismatch), ""},
      {"untrusted.jpg", Verdict::kInvalid, std::string(codes::kSigningCredentialUntrusted), ""},
      {"expired.jpg", Verdict::kInvalid, std::string(codes::kSigningCredentialExpired), ""},
      {"generated.jpg", Verdict::kValid, "", kTrainedAlgorithmicMedia},
      {"generated.png", Verdict::kValid, "", kTrainedAlgorithmicMedia},
      {"truncated.png", Verdict::kMalformed, std::string(codes::kGeneralError), ""},
      {"claim_v2.png", Verdict::kValid, "", kTrainedAlgorithmicMedia},
      {"timestamped.jpg", Verdict::kValid, "", ""},
      {"plain.jpg", Verdict::kNoManifest, "", ""},
  };
  int agreed = 0;
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.file);
    const std::string asset = ReadAll(dir_ / e.file);
    const ValidationResult ours =
        ValidateAsset(asset, SniffMediaType(asset).value(), anchors_, absl::Now(), C2paLimits{});
    EXPECT_EQ(VerdictName(ours.verdict), VerdictName(e.verdict));
    EXPECT_EQ(ours.failure_code, e.failure_code);
    EXPECT_EQ(ours.digital_source_type, e.digital_source_type);
    if (ours.verdict != Verdict::kNoManifest && ours.verdict != Verdict::kMalformed) {
      EXPECT_EQ(ours.claim_generator.rfind("c2pa-ts/", 0), 0u) << ours.claim_generator;
      EXPECT_NE(ours.signer_subject.find("O=Portcullis Tests"), std::string::npos);
    }

    if (e.file == "timestamped.jpg") {
      EXPECT_TRUE(std::any_of(ours.statuses.begin(), ours.statuses.end(),
                              [](const ValidationStatus& status) {
                                return status.code == codes::kTimeStampUntrusted;
                              }));
    }

    // The oracle's opinion of the same file.
    const std::optional<std::string> output =
        oracle_->Run(absl::StrCat("validate ", ShellQuoted(dir_ / e.file)));
    ASSERT_TRUE(output.has_value());
    const boost::json::object theirs = boost::json::parse(*output).as_object();
    const bool manifest = theirs.at("manifest").as_bool();
    const bool valid = theirs.at("valid").as_bool();
    EXPECT_EQ(manifest, ours.verdict != Verdict::kNoManifest);
    // Per family both check: all successes, or some failure.
    std::map<std::string, bool> their_families;
    for (const boost::json::value& entry : theirs.at("codes").as_array()) {
      const std::string code(entry.at("code").as_string());
      const std::string family = Family(code);
      if (Compared(family)) {
        auto [it, inserted] = their_families.emplace(family, true);
        it->second = it->second && entry.at("success").as_bool();
      }
    }
    std::map<std::string, bool> our_families;
    for (const ValidationStatus& status : ours.statuses) {
      const std::string family = Family(status.code);
      if (Compared(family)) {
        auto [it, inserted] = our_families.emplace(family, true);
        it->second = it->second && status.success;
      }
    }
    for (const auto& [family, ok] : our_families) {
      if (their_families.contains(family)) {
        EXPECT_EQ(ok, their_families[family]) << family << " (ours vs c2pa-ts): " << *output;
      }
    }
    // c2pa-ts checks a certificate's validity period (not its chain): an expired signer is
    // expired to both.
    if (e.failure_code == codes::kSigningCredentialExpired) {
      EXPECT_NE(output->find("\"signingCredential.expired\""), std::string::npos) << *output;
    }
    // Overall: a manifest we cannot parse, or whose signature, references or data hash fail, is
    // one c2pa-ts does not call valid either; where only trust differs, c2pa-ts cannot tell.
    const bool trust_only = e.failure_code == codes::kSigningCredentialUntrusted ||
                            e.failure_code == codes::kSigningCredentialExpired;
    if (manifest && !trust_only) {
      EXPECT_EQ(valid, ours.verdict == Verdict::kValid) << *output;
    }
    if (!::testing::Test::HasFailure()) {
      ++agreed;
    }
  }
  std::cout << "c2pa differential: " << agreed << " of " << expected.size()
            << " files as expected and in agreement with c2pa-ts\n";
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
