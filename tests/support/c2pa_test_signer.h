#pragma once

// A minimal C2PA signer of our own, for tests, fuzz seeds and benchmarks that must run without
// node: it writes what verifier-service/src/c2pa reads — a manifest store with one manifest
// (a c2pa.claim v1, c2pa.hash.data, optionally c2pa.actions.v2 with a digitalSourceType) signed
// ES256 with a self-signed signing certificate made in process — into a JPEG (APP11) or PNG
// (caBX). The c2pa-ts vectors (tests/differential/c2pa-ts) are the independent ones; this one
// only makes hermetic tests possible.

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/c2pa/asset_container.h"

struct evp_pkey_st;

namespace portcullis::testing {

struct C2paTestCredential {
  std::shared_ptr<evp_pkey_st> key;  // EC P-256
  std::string certificate_der;
  std::string certificate_pem;
};

// A self-signed EC P-256 certificate for claim signing (not a CA; keyUsage digitalSignature)
// valid from `not_before` to `not_after`, with subject CN=`common_name`. `time_stamping`: for a
// time-stamping authority instead (extendedKeyUsage critical timeStamping).
C2paTestCredential MakeC2paTestCredential(const std::string& common_name, absl::Time not_before,
                                          absl::Time not_after, bool time_stamping = false);

struct C2paTestManifest {
  std::string claim_generator = "portcullis-test-signer/1";
  // Empty: no c2pa.actions assertion.
  std::string digital_source_type;
  // Set: an RFC 3161 time-stamp (sigTst2) by this authority, dated `timestamp_time`.
  const C2paTestCredential* timestamp_authority = nullptr;
  absl::Time timestamp_time;
};

// `plain` (a JPEG or PNG without a manifest) with a signed manifest inserted: JPEG right after
// SOI, in as many APP11 segments as it needs; PNG right after IHDR.
std::string SignC2paTestAsset(absl::string_view plain, verifier::c2pa::MediaType type,
                              const C2paTestCredential& credential,
                              const C2paTestManifest& manifest);

// A small valid JPEG (one gray pixel); `padding_bytes` more in COM segments before the image
// data, for size.
std::string PlainTestJpeg(size_t padding_bytes = 0);
// A 1x1 gray PNG.
std::string PlainTestPng();
// The offset of the JPEG's image data (its SOS marker): bytes past it are "pixels".
size_t JpegScanOffset(absl::string_view jpeg);

}  // namespace portcullis::testing
