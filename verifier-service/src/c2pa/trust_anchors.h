#pragma once

// The certificates a C2PA signer's chain must lead to: the operator's list
// (--c2pa_trust_anchors) and, per publisher, an optional list of its own. An anchor may be a
// root or an intermediate (OpenSSL's partial-chain mode): trusting an intermediate trusts only
// what it issued.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

struct x509_st;  // OpenSSL's X509.

namespace portcullis::verifier::c2pa {

enum class CredentialCheck {
  kTrusted,
  kUntrusted,  // no path to an anchor (or no anchors at all)
  kExpired,    // a path exists, but a certificate on it is not valid at the time checked
  kInvalid,    // a certificate cannot be read, or the chain is otherwise unusable
};

class TrustAnchors {
 public:
  // No anchors: every signer is untrusted.
  TrustAnchors() = default;

  // Every certificate in `pem` (one or more "BEGIN CERTIFICATE" blocks). kInvalidArgument when
  // it holds none or one does not parse.
  static absl::StatusOr<TrustAnchors> FromPem(absl::string_view pem);

  // The anchors of both.
  static TrustAnchors Union(const TrustAnchors& a, const TrustAnchors& b);

  size_t size() const { return anchors_.size(); }

  // Whether `chain` (DER, the signer's certificate first, then intermediates in any order) leads
  // to an anchor with every certificate valid at `at`. The signer's certificate must allow
  // digital signatures and must not be a CA.
  CredentialCheck Check(const std::vector<std::string>& chain, absl::Time at) const;

  // The time of an RFC 3161 time-stamp (`der`: a TimeStampResp granting one, or a bare
  // TimeStampToken) when it is signed by a time-stamping authority that chains to an anchor
  // (valid at `now`, with the timeStamping purpose) and its message imprint is the hash of
  // `timestamped`; nullopt for anything else.
  std::optional<absl::Time> VerifyTimestamp(absl::string_view der, absl::string_view timestamped,
                                            absl::Time now) const;

 private:
  std::vector<std::shared_ptr<x509_st>> anchors_;
};

// The subject of a DER certificate as an RFC 2253 string ("CN=Test Signer,O=Example"); empty
// when it does not parse.
std::string CertificateSubject(absl::string_view der);

}  // namespace portcullis::verifier::c2pa
