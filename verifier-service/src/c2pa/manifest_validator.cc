#include "verifier-service/src/c2pa/manifest_validator.h"

#include <cbor.h>
#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "verifier-service/src/c2pa/cbor_reader.h"
#include "verifier-service/src/c2pa/cose_sign1.h"
#include "verifier-service/src/c2pa/jumbf.h"
#include "verifier-service/src/c2pa/openssl_handles.h"
#include "verifier-service/src/c2pa/status_codes.h"

namespace portcullis::verifier::c2pa {
namespace {

constexpr absl::string_view kJumbfUriPrefix = "self#jumbf=";
constexpr absl::string_view kAssertionStoreLabel = "c2pa.assertions";


// The digest C2PA names "sha256" / "sha384" / "sha512"; nullptr for anything else.
const EVP_MD* DigestByName(absl::string_view name) {
  if (name == "sha256") {
    return EVP_sha256();
  }
  if (name == "sha384") {
    return EVP_sha384();
  }
  if (name == "sha512") {
    return EVP_sha512();
  }
  return nullptr;
}

// The digest of the concatenation of `parts`.
std::string Digest(const EVP_MD* md, const std::vector<absl::string_view>& parts) {
  const EvpMdCtxPtr context(EVP_MD_CTX_new());
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (context == nullptr || EVP_DigestInit_ex(context.get(), md, nullptr) != 1) {
    return "";
  }
  for (const absl::string_view part : parts) {
    if (EVP_DigestUpdate(context.get(), part.data(), part.size()) != 1) {
      return "";
    }
  }
  if (EVP_DigestFinal_ex(context.get(), out, &length) != 1) {
    return "";
  }
  return std::string(reinterpret_cast<char*>(out), length);
}

// "c2pa.hash.data__2" -> "c2pa.hash.data": C2PA numbers repeated assertions with "__N".
absl::string_view BaseLabel(absl::string_view label) {
  const size_t separator = label.find("__");
  return separator == absl::string_view::npos ? label : label.substr(0, separator);
}

class Validation {
 public:
  Validation(absl::string_view asset, MediaType type, const TrustAnchors& anchors, absl::Time now,
             const C2paLimits& limits)
      : asset_(asset), anchors_(anchors), now_(now), limits_(limits) {
    result_.media_type = type;
  }

  ValidationResult Run() && {
    absl::StatusOr<std::optional<std::string>> store =
        ExtractManifestStore(asset_, result_.media_type, limits_);
    if (!store.ok()) {
      return Malformed(codes::kGeneralError, "", store.status().message());
    }
    if (!store->has_value()) {
      result_.verdict = Verdict::kNoManifest;
      return std::move(result_);
    }
    store_bytes_ = std::move(**store);
    absl::StatusOr<JumbfBox> parsed = ParseJumbfSuperbox(store_bytes_, limits_);
    if (!parsed.ok()) {
      return Malformed(codes::kGeneralError, "", parsed.status().message());
    }
    root_ = *std::move(parsed);
    if (root_.uuid != C2paUuid("c2pa")) {
      return Malformed(codes::kGeneralError, "", "the JUMBF box is not a C2PA manifest store");
    }
    std::vector<const JumbfBox*> manifests;
    for (const JumbfBox& child : root_.children) {
      if (child.is_superbox() &&
          (child.uuid == C2paUuid("c2ma") || child.uuid == C2paUuid("c2um"))) {
        manifests.push_back(&child);
      }
    }
    if (manifests.empty()) {
      return Fail(codes::kClaimMissing, "", "the manifest store holds no manifest");
    }
    if (manifests.size() > limits_.max_manifests) {
      return Malformed(codes::kGeneralError, "",
                       absl::StrCat("more than ", limits_.max_manifests, " manifests"));
    }
    manifest_ = manifests.back();
    result_.manifest_label = manifest_->label;
    return std::move(*this).ValidateManifest();
  }

 private:
  ValidationResult ValidateManifest() && {
    const JumbfBox* claim_box = manifest_->FindChild("c2pa.claim.v2");
    const JumbfBox* claim_v1 = manifest_->FindChild("c2pa.claim");
    if (claim_box != nullptr && claim_v1 != nullptr) {
      return Fail(codes::kClaimMultiple, "", "the manifest holds two claims");
    }
    const bool v2 = claim_box != nullptr;
    if (claim_box == nullptr) {
      claim_box = claim_v1;
    }
    const JumbfBox* claim_cbor = claim_box == nullptr ? nullptr : claim_box->FindContent("cbor");
    if (claim_cbor == nullptr) {
      return Fail(codes::kClaimMissing, "", "the active manifest has no claim");
    }
    absl::StatusOr<CborItemPtr> claim = DecodeCbor(claim_cbor->payload, limits_);
    if (!claim.ok() || !cbor_isa_map(claim->get())) {
      return Malformed(codes::kClaimCborInvalid, "", "the claim is not a CBOR map");
    }
    ReadClaimGenerator(claim->get(), v2);

    // The claim signature.
    const std::optional<absl::string_view> signature_uri =
        CborText(CborMapGet(claim->get(), "signature"));
    const JumbfBox* signature_box = signature_uri.has_value() ? Resolve(*signature_uri) : nullptr;
    const JumbfBox* signature_cbor =
        signature_box == nullptr ? nullptr : signature_box->FindContent("cbor");
    if (signature_cbor == nullptr) {
      return Fail(codes::kClaimSignatureMissing, std::string(signature_uri.value_or("")),
                  "the claim's signature is not in the manifest");
    }
    const std::string signature_url = std::string(*signature_uri);
    absl::StatusOr<CoseSign1> sign1 = ParseCoseSign1(signature_cbor->payload, limits_);
    if (!sign1.ok()) {
      return Malformed(codes::kClaimSignatureMismatch, signature_url, sign1.status().message());
    }
    result_.signer_subject = CertificateSubject(sign1->x5chain[0]);
    switch (VerifyCoseSign1(*sign1, claim_cbor->payload)) {
      case SignatureCheck::kValid:
        Pass(codes::kClaimSignatureValidated, signature_url);
        break;
      case SignatureCheck::kMismatch:
        Record(codes::kClaimSignatureMismatch, signature_url,
               "the claim signature does not verify");
        break;
      case SignatureCheck::kUnsupportedAlgorithm:
        Record(codes::kAlgorithmUnsupported, signature_url,
               absl::StrCat("COSE algorithm ", sign1->algorithm, " with this key"));
        break;
      case SignatureCheck::kBadCertificate:
        Record(codes::kSigningCredentialInvalid, signature_url,
               "the signer's certificate does not parse");
        break;
    }
    // The time the chain is judged at: a time-stamp's, when one verifies, otherwise now.
    std::optional<absl::Time> signed_at;
    for (const CoseTimestamp& timestamp : sign1->timestamps) {
      signed_at = anchors_.VerifyTimestamp(
          timestamp.der, CoseTimestampedBytes(*sign1, timestamp.version, claim_cbor->payload),
          now_);
      if (signed_at.has_value()) {
        result_.statuses.push_back(ValidationStatus{
            std::string(codes::kTimeStampTrusted), signature_url,
            absl::StrCat("signed at ",
                         absl::FormatTime(absl::RFC3339_sec, *signed_at, absl::UTCTimeZone())),
            true});
        break;
      }
    }
    if (!signed_at.has_value() && !sign1->timestamps.empty()) {
      result_.statuses.push_back(ValidationStatus{
          std::string(codes::kTimeStampUntrusted), signature_url,
          "no time-stamp verifies against the trust anchors; the chain is checked now", false});
    }
    switch (anchors_.Check(sign1->x5chain, signed_at.value_or(now_))) {
      case CredentialCheck::kTrusted:
        Pass(codes::kSigningCredentialTrusted, signature_url);
        break;
      case CredentialCheck::kUntrusted:
        Record(codes::kSigningCredentialUntrusted, signature_url,
               "the signer does not chain to a trust anchor");
        break;
      case CredentialCheck::kExpired:
        Record(codes::kSigningCredentialExpired, signature_url,
               "a certificate of the signer's chain is outside its validity");
        break;
      case CredentialCheck::kInvalid:
        Record(codes::kSigningCredentialInvalid, signature_url,
               "the signer's certificate chain is not usable for signing");
        break;
    }

    // The referenced assertions.
    std::optional<absl::string_view> claim_algorithm = CborText(CborMapGet(claim->get(), "alg"));
    std::vector<const cbor_item_t*> references;
    for (const char* field :
         v2 ? std::vector<const char*>{"created_assertions", "gathered_assertions"}
            : std::vector<const char*>{"assertions"}) {
      const cbor_item_t* list = CborMapGet(claim->get(), field);
      const std::optional<size_t> size = CborArraySize(list);
      if (list != nullptr && !size.has_value()) {
        return Malformed(codes::kClaimCborInvalid, "", absl::StrCat(field, " is not a list"));
      }
      for (size_t i = 0; size.has_value() && i < *size; ++i) {
        references.push_back(CborArrayAt(list, i));
      }
    }
    if (references.size() > limits_.max_assertions) {
      return Malformed(codes::kClaimCborInvalid, "",
                       absl::StrCat("more than ", limits_.max_assertions, " assertions"));
    }
    std::vector<const JumbfBox*> hard_bindings;
    std::vector<const JumbfBox*> actions;
    for (const cbor_item_t* reference : references) {
      const JumbfBox* assertion = CheckHashedUri(reference, claim_algorithm.value_or("sha256"));
      if (assertion == nullptr) {
        continue;
      }
      const absl::string_view base = BaseLabel(assertion->label);
      if (base == "c2pa.hash.data") {
        hard_bindings.push_back(assertion);
      } else if (base == "c2pa.actions" || base == "c2pa.actions.v2") {
        actions.push_back(assertion);
      }
    }
    for (const JumbfBox* assertion : actions) {
      ReadActions(*assertion);
    }

    // The hard binding.
    if (hard_bindings.empty()) {
      Record(codes::kClaimHardBindingsMissing, "", "no c2pa.hash.data assertion is referenced");
    } else if (hard_bindings.size() > 1) {
      Record(codes::kAssertionMultipleHardBindings, "", "more than one c2pa.hash.data");
    } else {
      CheckDataHash(*hard_bindings[0], claim_algorithm.value_or("sha256"));
    }
    result_.verdict = result_.failure_code.empty() ? Verdict::kValid : Verdict::kInvalid;
    return std::move(result_);
  }

  void ReadClaimGenerator(const cbor_item_t* claim, bool v2) {
    if (!v2) {
      if (const std::optional<absl::string_view> generator =
              CborText(CborMapGet(claim, "claim_generator"))) {
        result_.claim_generator = std::string(*generator);
        return;
      }
    }
    const cbor_item_t* info = CborMapGet(claim, "claim_generator_info");
    if (CborArraySize(info).value_or(0) > 0) {
      info = CborArrayAt(info, 0);
    }
    const std::optional<absl::string_view> name = CborText(CborMapGet(info, "name"));
    const std::optional<absl::string_view> version = CborText(CborMapGet(info, "version"));
    if (name.has_value()) {
      result_.claim_generator =
          version.has_value() ? absl::StrCat(*name, "/", *version) : std::string(*name);
    }
  }

  // Resolves a JUMBF URI of this manifest ("self#jumbf=c2pa.assertions/X" or
  // "self#jumbf=/c2pa/LABEL/c2pa.assertions/X"); nullptr when it names nothing in it.
  const JumbfBox* Resolve(absl::string_view uri) const {
    if (!absl::ConsumePrefix(&uri, kJumbfUriPrefix)) {
      return nullptr;
    }
    if (absl::ConsumePrefix(&uri, "/")) {
      const std::string prefix = absl::StrCat(root_.label, "/", manifest_->label, "/");
      if (!absl::ConsumePrefix(&uri, prefix)) {
        return nullptr;  // Another manifest's box: not part of this claim's own checks.
      }
    }
    const JumbfBox* box = manifest_;
    for (const absl::string_view segment : absl::StrSplit(uri, '/')) {
      box = box->FindChild(segment);
      if (box == nullptr) {
        return nullptr;
      }
    }
    return box;
  }

  // Checks one hashed URI of the claim; the assertion when it is present and matches.
  const JumbfBox* CheckHashedUri(const cbor_item_t* reference, absl::string_view default_alg) {
    const std::optional<absl::string_view> url = CborText(CborMapGet(reference, "url"));
    const std::optional<absl::string_view> hash = CborBytes(CborMapGet(reference, "hash"));
    if (!url.has_value() || !hash.has_value()) {
      Record(codes::kAssertionMissing, "", "a claim reference without url or hash");
      return nullptr;
    }
    const std::string where(*url);
    const JumbfBox* assertion = Resolve(*url);
    if (assertion == nullptr) {
      Record(codes::kAssertionMissing, where, "the referenced assertion is not in the manifest");
      return nullptr;
    }
    const absl::string_view algorithm =
        CborText(CborMapGet(reference, "alg")).value_or(default_alg);
    const EVP_MD* md = DigestByName(algorithm);
    if (md == nullptr) {
      Record(codes::kAlgorithmUnsupported, where, absl::StrCat("hash algorithm ", algorithm));
      return nullptr;
    }
    // The hash covers the assertion's superbox without its own header.
    if (Digest(md, {assertion->payload}) != *hash) {
      Record(codes::kAssertionHashedUriMismatch, where,
             "the assertion's hash differs from the claim's");
      return nullptr;
    }
    Pass(codes::kAssertionHashedUriMatch, where);
    return assertion;
  }

  void ReadActions(const JumbfBox& assertion) {
    const JumbfBox* content = assertion.FindContent("cbor");
    absl::StatusOr<CborItemPtr> value = content == nullptr
                                            ? absl::InvalidArgumentError("no CBOR content")
                                            : DecodeCbor(content->payload, limits_);
    const std::string where =
        absl::StrCat(kJumbfUriPrefix, kAssertionStoreLabel, "/", assertion.label);
    if (!value.ok()) {
      Record(codes::kAssertionCborInvalid, where, "c2pa.actions is not CBOR");
      return;
    }
    const cbor_item_t* list = CborMapGet(value->get(), "actions");
    const std::optional<size_t> size = CborArraySize(list);
    if (!size.has_value() || *size > limits_.max_actions) {
      Record(codes::kAssertionActionMalformed, where, "c2pa.actions has no usable action list");
      return;
    }
    for (size_t i = 0; i < *size; ++i) {
      const std::optional<absl::string_view> type =
          CborText(CborMapGet(CborArrayAt(list, i), "digitalSourceType"));
      if (!type.has_value() || type->empty()) {
        continue;
      }
      if (result_.digital_source_type.empty() ||
          (IsAiDigitalSourceType(*type) && !IsAiDigitalSourceType(result_.digital_source_type))) {
        result_.digital_source_type = std::string(*type);
      }
    }
  }

  void CheckDataHash(const JumbfBox& assertion, absl::string_view default_alg) {
    const std::string where =
        absl::StrCat(kJumbfUriPrefix, kAssertionStoreLabel, "/", assertion.label);
    const JumbfBox* content = assertion.FindContent("cbor");
    absl::StatusOr<CborItemPtr> value = content == nullptr
                                            ? absl::InvalidArgumentError("no CBOR content")
                                            : DecodeCbor(content->payload, limits_);
    if (!value.ok()) {
      Record(codes::kAssertionDataHashMalformed, where, "c2pa.hash.data is not CBOR");
      return;
    }
    const std::optional<absl::string_view> expected = CborBytes(CborMapGet(value->get(), "hash"));
    const absl::string_view algorithm =
        CborText(CborMapGet(value->get(), "alg")).value_or(default_alg);
    const EVP_MD* md = DigestByName(algorithm);
    if (!expected.has_value()) {
      Record(codes::kAssertionDataHashMalformed, where, "c2pa.hash.data has no hash");
      return;
    }
    if (md == nullptr) {
      Record(codes::kAlgorithmUnsupported, where, absl::StrCat("hash algorithm ", algorithm));
      return;
    }
    std::vector<std::pair<uint64_t, uint64_t>> exclusions;
    const cbor_item_t* list = CborMapGet(value->get(), "exclusions");
    const size_t count = CborArraySize(list).value_or(0);
    if (count > limits_.max_exclusions) {
      Record(codes::kAssertionDataHashMalformed, where,
             absl::StrCat("more than ", limits_.max_exclusions, " exclusions"));
      return;
    }
    for (size_t i = 0; i < count; ++i) {
      const cbor_item_t* range = CborArrayAt(list, i);
      const std::optional<int64_t> start = CborInt(CborMapGet(range, "start"));
      const std::optional<int64_t> length = CborInt(CborMapGet(range, "length"));
      if (!start.has_value() || !length.has_value() || *start < 0 || *length < 0) {
        Record(codes::kAssertionDataHashMalformed, where, "an exclusion without start or length");
        return;
      }
      exclusions.emplace_back(static_cast<uint64_t>(*start), static_cast<uint64_t>(*length));
    }
    std::sort(exclusions.begin(), exclusions.end());
    std::vector<absl::string_view> parts;
    uint64_t position = 0;
    for (const auto& [start, length] : exclusions) {
      if (start < position || start > asset_.size() || length > asset_.size() - start) {
        Record(codes::kAssertionDataHashMalformed, where,
               "exclusions overlap or run past the end of the file");
        return;
      }
      parts.push_back(asset_.substr(position, start - position));
      position = start + length;
    }
    parts.push_back(asset_.substr(position));
    if (Digest(md, parts) != *expected) {
      Record(codes::kAssertionDataHashMismatch, where,
             "the file's bytes differ from what was signed");
      return;
    }
    Pass(codes::kAssertionDataHashMatch, where);
  }

  void Pass(absl::string_view code, std::string url) {
    result_.statuses.push_back(ValidationStatus{std::string(code), std::move(url), "", true});
  }

  void Record(absl::string_view code, std::string url, absl::string_view explanation) {
    if (result_.failure_code.empty()) {
      result_.failure_code = std::string(code);
    }
    result_.statuses.push_back(
        ValidationStatus{std::string(code), std::move(url), std::string(explanation), false});
  }

  ValidationResult Fail(absl::string_view code, std::string url, absl::string_view explanation) {
    Record(code, std::move(url), explanation);
    result_.verdict = Verdict::kInvalid;
    return std::move(result_);
  }

  ValidationResult Malformed(absl::string_view code, std::string url,
                             absl::string_view explanation) {
    Record(code, std::move(url), explanation);
    result_.verdict = Verdict::kMalformed;
    return std::move(result_);
  }

  absl::string_view asset_;
  const TrustAnchors& anchors_;
  absl::Time now_;
  const C2paLimits& limits_;
  ValidationResult result_;
  std::string store_bytes_;
  JumbfBox root_;
  const JumbfBox* manifest_ = nullptr;
};

}  // namespace

absl::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kNoManifest:
      return "no_manifest";
    case Verdict::kMalformed:
      return "malformed";
    case Verdict::kInvalid:
      return "invalid";
    case Verdict::kValid:
      return "valid";
  }
  return "";
}

bool IsAiDigitalSourceType(absl::string_view digital_source_type) {
  const size_t slash = digital_source_type.rfind('/');
  const absl::string_view term = slash == absl::string_view::npos
                                     ? digital_source_type
                                     : digital_source_type.substr(slash + 1);
  return term == "trainedAlgorithmicMedia" || term == "compositeWithTrainedAlgorithmicMedia";
}

ValidationResult ValidateAsset(absl::string_view asset, MediaType type, const TrustAnchors& anchors,
                               absl::Time now, const C2paLimits& limits) {
  return Validation(asset, type, anchors, now, limits).Run();
}

}  // namespace portcullis::verifier::c2pa
