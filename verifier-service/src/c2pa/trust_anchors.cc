#include "verifier-service/src/c2pa/trust_anchors.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/ts.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "absl/strings/str_cat.h"
#include "verifier-service/src/c2pa/openssl_handles.h"

namespace portcullis::verifier::c2pa {
namespace {


X509Ptr FromDer(absl::string_view der) {
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  X509Ptr certificate(d2i_X509(nullptr, &cursor, static_cast<long>(der.size())));
  if (certificate != nullptr &&
      cursor != reinterpret_cast<const unsigned char*>(der.data()) + der.size()) {
    return nullptr;  // Trailing bytes: not one certificate.
  }
  return certificate;
}


}  // namespace

absl::StatusOr<TrustAnchors> TrustAnchors::FromPem(absl::string_view pem) {
  const BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) {
    return absl::ResourceExhaustedError("cannot allocate a BIO");
  }
  TrustAnchors result;
  while (true) {
    X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (certificate == nullptr) {
      const unsigned long error = ERR_peek_last_error();
      ERR_clear_error();
      // The end of the input reads as "no start line"; anything else is a broken block.
      if (ERR_GET_REASON(error) != PEM_R_NO_START_LINE) {
        return absl::InvalidArgumentError(absl::StrCat(
            "trust anchors: certificate ", result.anchors_.size() + 1, " does not parse"));
      }
      break;
    }
    result.anchors_.emplace_back(certificate, X509_free);
  }
  if (result.anchors_.empty()) {
    return absl::InvalidArgumentError("trust anchors: no PEM certificate");
  }
  return result;
}

TrustAnchors TrustAnchors::Union(const TrustAnchors& a, const TrustAnchors& b) {
  TrustAnchors result = a;
  result.anchors_.insert(result.anchors_.end(), b.anchors_.begin(), b.anchors_.end());
  return result;
}

CredentialCheck TrustAnchors::Check(const std::vector<std::string>& chain, absl::Time at) const {
  if (chain.empty()) {
    return CredentialCheck::kInvalid;
  }
  const X509Ptr leaf = FromDer(chain[0]);
  if (leaf == nullptr) {
    return CredentialCheck::kInvalid;
  }
  // The signer's certificate signs claims: digitalSignature, and not a CA.
  const uint32_t key_usage = X509_get_key_usage(leaf.get());
  if ((key_usage & KU_DIGITAL_SIGNATURE) == 0 || X509_check_ca(leaf.get()) != 0) {
    return CredentialCheck::kInvalid;
  }
  const StackPtr intermediates(sk_X509_new_null());
  if (intermediates == nullptr) {
    return CredentialCheck::kInvalid;
  }
  for (size_t i = 1; i < chain.size(); ++i) {
    X509Ptr certificate = FromDer(chain[i]);
    if (certificate == nullptr || sk_X509_push(intermediates.get(), certificate.get()) == 0) {
      return CredentialCheck::kInvalid;
    }
    certificate.release();  // Owned by the stack.
  }
  if (anchors_.empty()) {
    return CredentialCheck::kUntrusted;
  }
  const StorePtr store(X509_STORE_new());
  const StoreCtxPtr context(X509_STORE_CTX_new());
  if (store == nullptr || context == nullptr) {
    return CredentialCheck::kInvalid;
  }
  for (const std::shared_ptr<X509>& anchor : anchors_) {
    if (X509_STORE_add_cert(store.get(), anchor.get()) != 1) {
      ERR_clear_error();  // A duplicate anchor.
    }
  }
  if (X509_STORE_CTX_init(context.get(), store.get(), leaf.get(), intermediates.get()) != 1) {
    return CredentialCheck::kInvalid;
  }
  X509_VERIFY_PARAM* parameters = X509_STORE_CTX_get0_param(context.get());
  X509_VERIFY_PARAM_set_flags(parameters, X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_X509_STRICT);
  X509_VERIFY_PARAM_set_time(parameters, absl::ToTimeT(at));
  const int verified = X509_verify_cert(context.get());
  ERR_clear_error();
  if (verified == 1) {
    return CredentialCheck::kTrusted;
  }
  switch (X509_STORE_CTX_get_error(context.get())) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return CredentialCheck::kExpired;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return CredentialCheck::kUntrusted;
    default:
      return CredentialCheck::kInvalid;
  }
}

std::optional<absl::Time> TrustAnchors::VerifyTimestamp(absl::string_view der,
                                                        absl::string_view timestamped,
                                                        absl::Time now) const {
  if (anchors_.empty() || der.empty()) {
    return std::nullopt;
  }
  // A TimeStampResp (status + token) or the token alone.
  Pkcs7Ptr token;
  const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
  TsRespPtr response(
      d2i_TS_RESP(nullptr, &cursor, static_cast<long>(der.size())));
  if (response != nullptr) {
    const PKCS7* inner = TS_RESP_get_token(response.get());
    if (inner == nullptr) {
      ERR_clear_error();
      return std::nullopt;  // Not granted.
    }
    token.reset(PKCS7_dup(const_cast<PKCS7*>(inner)));
  } else {
    ERR_clear_error();
    cursor = reinterpret_cast<const unsigned char*>(der.data());
    token.reset(d2i_PKCS7(nullptr, &cursor, static_cast<long>(der.size())));
  }
  if (token == nullptr) {
    ERR_clear_error();
    return std::nullopt;
  }
  const TsTstInfoPtr info(PKCS7_to_TS_TST_INFO(token.get()));
  X509_STORE* store = X509_STORE_new();
  const TsVerifyCtxPtr context(TS_VERIFY_CTX_new());
  BIO* data = BIO_new_mem_buf(timestamped.data(), static_cast<int>(timestamped.size()));
  if (info == nullptr || store == nullptr || context == nullptr || data == nullptr) {
    X509_STORE_free(store);
    BIO_free(data);
    ERR_clear_error();
    return std::nullopt;
  }
  for (const std::shared_ptr<X509>& anchor : anchors_) {
    X509_STORE_add_cert(store, anchor.get());
  }
  X509_VERIFY_PARAM* parameters = X509_STORE_get0_param(store);
  X509_VERIFY_PARAM_set_flags(parameters, X509_V_FLAG_PARTIAL_CHAIN);
  X509_VERIFY_PARAM_set_time(parameters, absl::ToTimeT(now));
  // The context owns the store and the data from here on.
  TS_VERIFY_CTX_set_store(context.get(), store);
  TS_VERIFY_CTX_set_data(context.get(), data);
  TS_VERIFY_CTX_set_flags(context.get(), TS_VFY_VERSION | TS_VFY_SIGNATURE | TS_VFY_DATA);
  const int verified = TS_RESP_verify_token(context.get(), token.get());
  ERR_clear_error();
  if (verified != 1) {
    return std::nullopt;
  }
  const ASN1_GENERALIZEDTIME* time = TS_TST_INFO_get_time(info.get());
  struct tm parsed {};
  if (time == nullptr || ASN1_TIME_to_tm(time, &parsed) != 1) {
    return std::nullopt;
  }
  return absl::FromTM(parsed, absl::UTCTimeZone());
}

std::string CertificateSubject(absl::string_view der) {
  const X509Ptr certificate = FromDer(der);
  if (certificate == nullptr) {
    return "";
  }
  const BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || X509_NAME_print_ex(bio.get(), X509_get_subject_name(certificate.get()), 0,
                                           XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) < 0) {
    return "";
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return length > 0 ? std::string(data, static_cast<size_t>(length)) : "";
}

}  // namespace portcullis::verifier::c2pa
