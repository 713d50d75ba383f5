#include "verifier-service/src/c2pa/cose_sign1.h"

#include <cbor.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/c2pa/cbor_reader.h"
#include "verifier-service/src/c2pa/openssl_handles.h"

namespace portcullis::verifier::c2pa {
namespace {

constexpr uint8_t kCoseSign1Tag = 18;
constexpr int64_t kHeaderAlgorithm = 1;
constexpr int64_t kHeaderX5chain = 33;


const unsigned char* Bytes(absl::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

// CBOR head of a byte or text string of `length`.
void AppendHead(std::string& out, uint8_t major, uint64_t length) {
  const uint8_t type = static_cast<uint8_t>(major << 5);
  if (length < 24) {
    out.push_back(static_cast<char>(type | length));
    return;
  }
  int width = 8;
  uint8_t info = 27;
  if (length <= 0xFF) {
    width = 1;
    info = 24;
  } else if (length <= 0xFFFF) {
    width = 2;
    info = 25;
  } else if (length <= 0xFFFFFFFFu) {
    width = 4;
    info = 26;
  }
  out.push_back(static_cast<char>(type | info));
  for (int i = width - 1; i >= 0; --i) {
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xFF));
  }
}

absl::Status ReadChain(const cbor_item_t* value, const C2paLimits& limits,
                       std::vector<std::string>& chain) {
  if (const std::optional<absl::string_view> one = CborBytes(value)) {
    chain.emplace_back(*one);
    return absl::OkStatus();
  }
  const std::optional<size_t> size = CborArraySize(value);
  if (!size.has_value() || *size == 0) {
    return absl::InvalidArgumentError("COSE: x5chain is neither a certificate nor a list");
  }
  if (*size > limits.max_chain_certificates) {
    return absl::InvalidArgumentError(absl::StrCat("COSE: x5chain has more than ",
                                                   limits.max_chain_certificates, " certificates"));
  }
  for (size_t i = 0; i < *size; ++i) {
    const std::optional<absl::string_view> certificate = CborBytes(CborArrayAt(value, i));
    if (!certificate.has_value()) {
      return absl::InvalidArgumentError("COSE: an x5chain entry is not a byte string");
    }
    chain.emplace_back(*certificate);
  }
  return absl::OkStatus();
}

const EVP_MD* DigestFor(int64_t algorithm) {
  switch (algorithm) {
    case kCoseEs256:
    case kCosePs256:
      return EVP_sha256();
    case kCoseEs384:
    case kCosePs384:
      return EVP_sha384();
    case kCoseEs512:
    case kCosePs512:
      return EVP_sha512();
    default:
      return nullptr;
  }
}

int CurveFor(int64_t algorithm) {
  switch (algorithm) {
    case kCoseEs256:
      return NID_X9_62_prime256v1;
    case kCoseEs384:
      return NID_secp384r1;
    case kCoseEs512:
      return NID_secp521r1;
    default:
      return NID_undef;
  }
}

// COSE's r||s as the DER ECDSA-Sig-Value OpenSSL verifies; a signature that already is DER (and
// re-encodes to the same bytes) is passed through. Empty when it is neither.
std::string EcdsaSignatureToDer(absl::string_view signature, size_t field_bytes) {
  EcdsaSigPtr parsed(ECDSA_SIG_new());
  if (parsed == nullptr) {
    return "";
  }
  if (signature.size() == 2 * field_bytes) {
    BnPtr r(BN_bin2bn(Bytes(signature), static_cast<int>(field_bytes), nullptr));
    BnPtr s(BN_bin2bn(Bytes(signature) + field_bytes, static_cast<int>(field_bytes), nullptr));
    if (r == nullptr || s == nullptr || ECDSA_SIG_set0(parsed.get(), r.get(), s.get()) != 1) {
      return "";
    }
    r.release();  // Owned by `parsed` now.
    s.release();
  } else {
    // A fresh object (not `parsed` reused): on failure d2i frees what it allocated itself.
    const unsigned char* cursor = Bytes(signature);
    parsed.reset(d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(signature.size())));
    if (parsed == nullptr || cursor != Bytes(signature) + signature.size()) {
      return "";
    }
  }
  unsigned char* der = nullptr;
  const int length = i2d_ECDSA_SIG(parsed.get(), &der);
  if (length <= 0) {
    return "";
  }
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(length));
  OPENSSL_free(der);
  if (signature.size() != 2 * field_bytes && out != signature) {
    return "";  // Not the canonical DER of itself: refuse rather than guess.
  }
  return out;
}

}  // namespace

absl::StatusOr<CoseSign1> ParseCoseSign1(absl::string_view bytes, const C2paLimits& limits) {
  // The COSE_Sign1 tag is taken off here: libcbor 0.8 refuses a tagged array of this shape.
  if (!bytes.empty() && (static_cast<uint8_t>(bytes[0]) >> 5) == 6) {
    if (static_cast<uint8_t>(bytes[0]) != (0xC0 | kCoseSign1Tag)) {
      return absl::InvalidArgumentError("COSE: a tag other than COSE_Sign1's");
    }
    bytes.remove_prefix(1);
  }
  ASSIGN_OR_RETURN(const CborItemPtr root, DecodeCbor(bytes, limits));
  const cbor_item_t* array = root.get();
  if (CborArraySize(array) != 4) {
    return absl::InvalidArgumentError("COSE: COSE_Sign1 is not an array of four");
  }
  const std::optional<absl::string_view> protected_bytes = CborBytes(CborArrayAt(array, 0));
  const cbor_item_t* unprotected = CborArrayAt(array, 1);
  const cbor_item_t* payload = CborArrayAt(array, 2);
  const std::optional<absl::string_view> signature = CborBytes(CborArrayAt(array, 3));
  if (!protected_bytes.has_value() || !cbor_isa_map(unprotected) || !signature.has_value()) {
    return absl::InvalidArgumentError("COSE: COSE_Sign1 fields of the wrong types");
  }
  if (!cbor_is_null(payload)) {
    return absl::InvalidArgumentError("COSE: C2PA signatures have a detached payload");
  }
  CoseSign1 sign1;
  sign1.protected_header = std::string(*protected_bytes);
  sign1.signature = std::string(*signature);

  CborItemPtr protected_map;
  if (!protected_bytes->empty()) {
    ASSIGN_OR_RETURN(protected_map, DecodeCbor(*protected_bytes, limits));
    if (!cbor_isa_map(protected_map.get())) {
      return absl::InvalidArgumentError("COSE: the protected header is not a map");
    }
  }
  const std::optional<int64_t> algorithm =
      CborInt(CborMapGet(protected_map.get(), kHeaderAlgorithm));
  if (!algorithm.has_value()) {
    return absl::InvalidArgumentError("COSE: no algorithm in the protected header");
  }
  sign1.algorithm = *algorithm;
  const cbor_item_t* chain = CborMapGet(protected_map.get(), kHeaderX5chain);
  if (chain == nullptr) {
    chain = CborMapGet(unprotected, kHeaderX5chain);
  }
  if (chain == nullptr) {
    return absl::InvalidArgumentError("COSE: no x5chain");
  }
  RETURN_IF_ERROR(ReadChain(chain, limits, sign1.x5chain));
  for (const auto& [label, version] : {std::pair<const char*, int>{"sigTst", 1}, {"sigTst2", 2}}) {
    const cbor_item_t* container = CborMapGet(protected_map.get(), label);
    if (container == nullptr) {
      container = CborMapGet(unprotected, label);
    }
    const cbor_item_t* tokens = CborMapGet(container, "tstTokens");
    const size_t count = CborArraySize(tokens).value_or(0);
    for (size_t i = 0; i < count && sign1.timestamps.size() < limits.max_timestamps; ++i) {
      if (const std::optional<absl::string_view> der =
              CborBytes(CborMapGet(CborArrayAt(tokens, i), "val"))) {
        sign1.timestamps.push_back(CoseTimestamp{version, std::string(*der)});
      }
    }
  }
  return sign1;
}

std::string CoseSigStructure(absl::string_view protected_header, absl::string_view payload) {
  constexpr absl::string_view kContext = "Signature1";
  std::string out;
  out.reserve(32 + protected_header.size() + payload.size());
  out.push_back(static_cast<char>(0x84));  // Array of four.
  AppendHead(out, 3, kContext.size());
  absl::StrAppend(&out, kContext);
  AppendHead(out, 2, protected_header.size());
  absl::StrAppend(&out, protected_header);
  AppendHead(out, 2, 0);  // external_aad: empty.
  AppendHead(out, 2, payload.size());
  absl::StrAppend(&out, payload);
  return out;
}

std::string CoseTimestampedBytes(const CoseSign1& sign1, int version, absl::string_view claim) {
  std::string payload;
  if (version == 1) {
    payload = std::string(claim);
  } else {
    AppendHead(payload, 2, sign1.signature.size());
    absl::StrAppend(&payload, sign1.signature);
  }
  constexpr absl::string_view kContext = "CounterSignature";
  std::string out;
  out.push_back(static_cast<char>(0x84));  // Array of four.
  AppendHead(out, 3, kContext.size());
  absl::StrAppend(&out, kContext);
  AppendHead(out, 2, sign1.protected_header.size());
  absl::StrAppend(&out, sign1.protected_header);
  AppendHead(out, 2, 0);  // external_aad: empty.
  AppendHead(out, 2, payload.size());
  absl::StrAppend(&out, payload);
  return out;
}

SignatureCheck VerifyCoseSign1(const CoseSign1& sign1, absl::string_view payload) {
  if (sign1.x5chain.empty()) {
    return SignatureCheck::kBadCertificate;
  }
  const unsigned char* cursor = Bytes(sign1.x5chain[0]);
  const X509Ptr certificate(d2i_X509(nullptr, &cursor, static_cast<long>(sign1.x5chain[0].size())));
  if (certificate == nullptr) {
    return SignatureCheck::kBadCertificate;
  }
  const EvpPkeyPtr key(X509_get_pubkey(certificate.get()));
  if (key == nullptr) {
    return SignatureCheck::kBadCertificate;
  }
  const std::string to_be_signed = CoseSigStructure(sign1.protected_header, payload);
  const EvpMdCtxPtr context(EVP_MD_CTX_new());
  if (context == nullptr) {
    return SignatureCheck::kMismatch;
  }
  EVP_PKEY_CTX* key_context = nullptr;
  std::string signature = sign1.signature;
  const int key_type = EVP_PKEY_get_base_id(key.get());
  switch (sign1.algorithm) {
    case kCoseEdDsa:
      if (key_type != EVP_PKEY_ED25519) {
        return SignatureCheck::kUnsupportedAlgorithm;
      }
      if (EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, key.get()) != 1) {
        return SignatureCheck::kMismatch;
      }
      break;
    case kCoseEs256:
    case kCoseEs384:
    case kCoseEs512: {
      if (key_type != EVP_PKEY_EC) {
        return SignatureCheck::kUnsupportedAlgorithm;
      }
      char group[64] = {0};
      size_t group_length = 0;
      if (EVP_PKEY_get_group_name(key.get(), group, sizeof(group), &group_length) != 1 ||
          OBJ_sn2nid(group) != CurveFor(sign1.algorithm)) {
        return SignatureCheck::kUnsupportedAlgorithm;
      }
      const size_t field_bytes = (static_cast<size_t>(EVP_PKEY_get_bits(key.get())) + 7) / 8;
      signature = EcdsaSignatureToDer(sign1.signature, field_bytes);
      if (signature.empty()) {
        return SignatureCheck::kMismatch;
      }
      if (EVP_DigestVerifyInit(context.get(), nullptr, DigestFor(sign1.algorithm), nullptr,
                               key.get()) != 1) {
        return SignatureCheck::kMismatch;
      }
      break;
    }
    case kCosePs256:
    case kCosePs384:
    case kCosePs512:
      if (key_type != EVP_PKEY_RSA && key_type != EVP_PKEY_RSA_PSS) {
        return SignatureCheck::kUnsupportedAlgorithm;
      }
      if (EVP_DigestVerifyInit(context.get(), &key_context, DigestFor(sign1.algorithm), nullptr,
                               key.get()) != 1 ||
          EVP_PKEY_CTX_set_rsa_padding(key_context, RSA_PKCS1_PSS_PADDING) != 1 ||
          EVP_PKEY_CTX_set_rsa_pss_saltlen(key_context, RSA_PSS_SALTLEN_DIGEST) != 1 ||
          EVP_PKEY_CTX_set_rsa_mgf1_md(key_context, DigestFor(sign1.algorithm)) != 1) {
        return SignatureCheck::kMismatch;
      }
      break;
    default:
      return SignatureCheck::kUnsupportedAlgorithm;
  }
  return EVP_DigestVerify(context.get(), Bytes(signature), signature.size(), Bytes(to_be_signed),
                          to_be_signed.size()) == 1
             ? SignatureCheck::kValid
             : SignatureCheck::kMismatch;
}

}  // namespace portcullis::verifier::c2pa
