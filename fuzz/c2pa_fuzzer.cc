// The C2PA path (verifier-service/src/c2pa) on arbitrary bytes: the JPEG/PNG container walk, the
// JUMBF box tree, the CBOR pre-scan and libcbor's decoding, COSE_Sign1 parsing and verification,
// hashed URIs and the data hash. The first byte picks the container (JPEG or PNG) for the rest;
// the same bytes are also fed to the JUMBF, CBOR and COSE parsers on their own.
// Invariants: no crash, leak or unbounded allocation; a kValid verdict has no failure code and a
// failure code comes with any other verdict that has statuses; a parsed JUMBF tree stays within
// the depth limit; whatever ScanCbor accepts, libcbor decodes.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fuzz/fuzz_check.h"
#include "tests/support/c2pa_test_signer.h"
#include "verifier-service/src/c2pa/cbor_reader.h"
#include "verifier-service/src/c2pa/cose_sign1.h"
#include "verifier-service/src/c2pa/jumbf.h"
#include "verifier-service/src/c2pa/manifest_validator.h"

namespace {

namespace c2pa = portcullis::verifier::c2pa;

// One anchor (a time-stamping authority made at startup), so that time-stamps and chains are
// parsed and verified rather than refused for want of anchors.
const c2pa::TrustAnchors& Anchors() {
  static const auto* anchors = [] {
    const absl::Time now = absl::FromUnixSeconds(1764633600);
    const portcullis::testing::C2paTestCredential authority =
        portcullis::testing::MakeC2paTestCredential("Fuzz TSA", now - absl::Hours(1),
                                                    now + absl::Hours(1), true);
    return new c2pa::TrustAnchors(*c2pa::TrustAnchors::FromPem(authority.certificate_pem));
  }();
  return *anchors;
}

size_t Depth(const c2pa::JumbfBox& box) {
  size_t deepest = 0;
  for (const c2pa::JumbfBox& child : box.children) {
    deepest = std::max(deepest, Depth(child));
  }
  return deepest + (box.is_superbox() ? 1 : 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const c2pa::C2paLimits limits;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);

  // The whole validator over a container.
  const c2pa::MediaType type = (data[0] & 1) != 0 ? c2pa::MediaType::kPng : c2pa::MediaType::kJpeg;
  const c2pa::ValidationResult result =
      c2pa::ValidateAsset(rest, type, Anchors(), absl::FromUnixSeconds(1764633600), limits);
  if (result.verdict == c2pa::Verdict::kValid) {
    FUZZ_CHECK(result.failure_code.empty(), result.failure_code);
  }
  if (result.verdict == c2pa::Verdict::kInvalid || result.verdict == c2pa::Verdict::kMalformed) {
    FUZZ_CHECK(!result.failure_code.empty(), std::string(c2pa::VerdictName(result.verdict)));
  }

  // The parsers on their own.
  if (const absl::StatusOr<c2pa::JumbfBox> box = c2pa::ParseJumbfSuperbox(rest, limits); box.ok()) {
    FUZZ_CHECK(Depth(*box) <= limits.max_jumbf_depth + 1, "JUMBF deeper than the limit");
  }
  if (c2pa::ScanCbor(rest, limits).ok()) {
    FUZZ_CHECK(c2pa::DecodeCbor(rest, limits).ok(), "libcbor refused what the scan accepted");
  }
  if (const absl::StatusOr<c2pa::CoseSign1> sign1 = c2pa::ParseCoseSign1(rest, limits);
      sign1.ok()) {
    FUZZ_CHECK(!sign1->x5chain.empty(), "a COSE_Sign1 without a certificate");
    (void)c2pa::VerifyCoseSign1(*sign1, rest.substr(0, 64));
    for (const c2pa::CoseTimestamp& timestamp : sign1->timestamps) {
      (void)Anchors().VerifyTimestamp(timestamp.der, rest.substr(0, 64),
                                      absl::FromUnixSeconds(1764633600));
    }
  }
  return 0;
}
