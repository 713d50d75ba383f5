#include "verifier-service/src/ingest/standard_webhooks.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/crypto/base64.h"
#include "common/crypto/hmac.h"

namespace portcullis::verifier::ingest {
namespace {

constexpr absl::string_view kFailurePayload = "portcullis.verifier.ingest/signature_failure";

constexpr absl::string_view kHmacSecretPrefix = "whsec_";
constexpr absl::string_view kPublicKeyPrefix = "whpk_";
constexpr absl::string_view kSigningKeyPrefix = "whsk_";

constexpr SignatureFailure kAllFailures[] = {
    SignatureFailure::kNoSignature,
    SignatureFailure::kHeaderTooLarge,
    SignatureFailure::kMissingId,
    SignatureFailure::kMalformedId,
    SignatureFailure::kMissingTimestamp,
    SignatureFailure::kMalformedTimestamp,
    SignatureFailure::kTimestampTooOld,
    SignatureFailure::kTimestampTooNew,
    SignatureFailure::kMalformedSignature,
    SignatureFailure::kNoMatchingSignature,
    SignatureFailure::kNoKeys,
};

absl::Status Failure(SignatureFailure failure, absl::string_view message) {
  absl::Status status;
  switch (failure) {
    case SignatureFailure::kNoSignature:
    case SignatureFailure::kTimestampTooOld:
    case SignatureFailure::kTimestampTooNew:
    case SignatureFailure::kNoMatchingSignature:
      status = absl::UnauthenticatedError(message);
      break;
    case SignatureFailure::kNoKeys:
      status = absl::FailedPreconditionError(message);
      break;
    default:
      status = absl::InvalidArgumentError(message);
  }
  status.SetPayload(kFailurePayload, absl::Cord(SignatureFailureName(failure)));
  return status;
}

std::string EncodeBase64(absl::string_view bytes) {
  std::string encoded;
  absl::Base64Escape(bytes, &encoded);
  return encoded;
}

absl::string_view AsBytes(const crypto::HmacSha256Digest& digest) {
  return absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size());
}

// Timestamps are decimal seconds since the epoch, digits only.
std::optional<int64_t> ParseTimestamp(absl::string_view text) {
  if (text.empty() || text.size() > 19) {
    return std::nullopt;
  }
  for (const char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return std::nullopt;
    }
  }
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(text, &seconds)) {
    return std::nullopt;
  }
  return seconds;
}

bool HasControlCharacters(absl::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return true;
    }
  }
  return false;
}

SignatureToken ReadToken(absl::string_view token) {
  SignatureToken result;
  const size_t comma = token.find(',');
  if (comma == absl::string_view::npos) {
    result.problem = "token without a comma";
    return result;
  }
  const absl::string_view version = token.substr(0, comma);
  const absl::string_view encoded = token.substr(comma + 1);
  size_t expected_size = 0;
  if (version == "v1") {
    result.kind = SignatureToken::Kind::kV1;
    expected_size = sizeof(crypto::HmacSha256Digest);
  } else if (version == "v1a") {
    result.kind = SignatureToken::Kind::kV1a;
    expected_size = crypto::kEd25519SignatureSize;
  } else {
    result.kind = SignatureToken::Kind::kUnknown;
    return result;
  }
  absl::StatusOr<std::string> signature = crypto::DecodeBase64Strict(encoded);
  if (!signature.ok()) {
    result.kind = SignatureToken::Kind::kMalformed;
    result.problem = absl::StrCat(version, " signature is not strict base64");
    return result;
  }
  if (signature->size() != expected_size) {
    result.kind = SignatureToken::Kind::kMalformed;
    result.problem =
        absl::StrCat(version, " signature is ", signature->size(), " bytes, not ", expected_size);
    return result;
  }
  result.signature = std::move(*signature);
  return result;
}

}  // namespace

absl::string_view SignatureVersionName(SignatureVersion version) {
  return version == SignatureVersion::kV1 ? "v1" : "v1a";
}

absl::string_view SignatureFailureName(SignatureFailure failure) {
  switch (failure) {
    case SignatureFailure::kNoSignature:
      return "no_signature";
    case SignatureFailure::kHeaderTooLarge:
      return "signature_header_too_large";
    case SignatureFailure::kMissingId:
      return "missing_webhook_id";
    case SignatureFailure::kMalformedId:
      return "malformed_webhook_id";
    case SignatureFailure::kMissingTimestamp:
      return "missing_webhook_timestamp";
    case SignatureFailure::kMalformedTimestamp:
      return "malformed_webhook_timestamp";
    case SignatureFailure::kTimestampTooOld:
      return "timestamp_too_old";
    case SignatureFailure::kTimestampTooNew:
      return "timestamp_too_new";
    case SignatureFailure::kMalformedSignature:
      return "malformed_signature";
    case SignatureFailure::kNoMatchingSignature:
      return "no_matching_signature";
    case SignatureFailure::kNoKeys:
      return "no_keys";
  }
  return "unknown";
}

bool IsMalformedSignatureMetadata(SignatureFailure failure) {
  switch (failure) {
    case SignatureFailure::kHeaderTooLarge:
    case SignatureFailure::kMissingId:
    case SignatureFailure::kMalformedId:
    case SignatureFailure::kMissingTimestamp:
    case SignatureFailure::kMalformedTimestamp:
    case SignatureFailure::kMalformedSignature:
      return true;
    default:
      return false;
  }
}

std::optional<SignatureFailure> SignatureFailureOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kFailurePayload);
  if (!payload.has_value()) {
    return std::nullopt;
  }
  for (const SignatureFailure failure : kAllFailures) {
    if (*payload == SignatureFailureName(failure)) {
      return failure;
    }
  }
  return std::nullopt;
}

absl::StatusOr<VerificationKey> ParseVerificationKey(absl::string_view id,
                                                     absl::string_view serialized) {
  if (absl::StartsWith(serialized, kSigningKeyPrefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("key ", id, " is a signing key (whsk_); a trust list holds whpk_ keys"));
  }
  VerificationKey key;
  key.id = std::string(id);
  absl::string_view encoded = serialized;
  if (absl::ConsumePrefix(&encoded, kPublicKeyPrefix)) {
    key.version = SignatureVersion::kV1a;
  } else {
    absl::ConsumePrefix(&encoded, kHmacSecretPrefix);
    key.version = SignatureVersion::kV1;
  }
  if (encoded.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("key ", id, " is empty"));
  }
  absl::StatusOr<std::string> material = crypto::DecodeBase64Strict(encoded);
  if (!material.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("key ", id, " is not strict (padded) base64: ", material.status().message()));
  }
  if (key.version == SignatureVersion::kV1a) {
    if (material->size() != crypto::kEd25519PublicKeySize) {
      return absl::InvalidArgumentError(absl::StrCat("key ", id, ": an Ed25519 public key is ",
                                                     crypto::kEd25519PublicKeySize, " bytes, not ",
                                                     material->size()));
    }
  } else if (material->size() < kMinHmacSecretBytes || material->size() > kMaxHmacSecretBytes) {
    return absl::InvalidArgumentError(absl::StrCat("key ", id, ": an HMAC secret is ",
                                                   kMinHmacSecretBytes, " to ", kMaxHmacSecretBytes,
                                                   " bytes, not ", material->size()));
  }
  key.material = std::move(*material);
  return key;
}

void PrepareVerificationKey(VerificationKey& key) {
  if (key.version != SignatureVersion::kV1a) {
    return;
  }
  absl::StatusOr<crypto::Ed25519Verifier> verifier = crypto::Ed25519Verifier::FromRaw(key.material);
  if (verifier.ok()) {
    key.ed25519 = *std::move(verifier);
  }
}

absl::StatusOr<crypto::Ed25519PrivateKey> ParseSigningKey(absl::string_view serialized) {
  absl::string_view encoded = serialized;
  if (!absl::ConsumePrefix(&encoded, kSigningKeyPrefix)) {
    return absl::InvalidArgumentError("a signing key starts with whsk_");
  }
  absl::StatusOr<std::string> seed = crypto::DecodeBase64Strict(encoded);
  if (!seed.ok()) {
    return absl::InvalidArgumentError("signing key is not strict (padded) base64");
  }
  return crypto::Ed25519PrivateKey::FromSeed(*seed);
}

std::string SerializePublicKey(const crypto::Ed25519PublicKey& key) {
  return absl::StrCat(kPublicKeyPrefix, EncodeBase64(key.raw()));
}

std::string SerializeSigningKey(const crypto::Ed25519PrivateKey& key) {
  return absl::StrCat(kSigningKeyPrefix, EncodeBase64(key.seed()));
}

std::vector<SignatureToken> ParseSignatureHeader(absl::string_view header,
                                                 const SignatureLimits& limits) {
  std::vector<SignatureToken> tokens;
  size_t pos = 0;
  while (pos < header.size() && tokens.size() < limits.max_tokens) {
    if (header[pos] == ' ' || header[pos] == '\t') {
      ++pos;
      continue;
    }
    size_t end = header.find_first_of(" \t", pos);
    if (end == absl::string_view::npos) {
      end = header.size();
    }
    tokens.push_back(ReadToken(header.substr(pos, end - pos)));
    pos = end;
  }
  return tokens;
}

absl::StatusOr<VerifiedSignature> VerifyDelivery(const SignedDelivery& delivery,
                                                 absl::Span<const VerificationKey> keys,
                                                 absl::Time now, const SignatureLimits& limits) {
  const absl::string_view header = absl::StripAsciiWhitespace(delivery.signature_header);
  if (header.empty()) {
    return Failure(SignatureFailure::kNoSignature, "no signature");
  }
  if (delivery.signature_header.size() > limits.max_header_bytes) {
    return Failure(SignatureFailure::kHeaderTooLarge,
                   absl::StrCat("signature header of ", delivery.signature_header.size(),
                                " bytes is over the limit of ", limits.max_header_bytes));
  }
  if (delivery.msg_id.empty()) {
    return Failure(SignatureFailure::kMissingId, "signed delivery without a message id");
  }
  if (delivery.msg_id.size() > limits.max_id_bytes || HasControlCharacters(delivery.msg_id)) {
    return Failure(SignatureFailure::kMalformedId,
                   absl::StrCat("message id is over ", limits.max_id_bytes,
                                " bytes or holds control characters"));
  }
  if (delivery.timestamp.empty()) {
    return Failure(SignatureFailure::kMissingTimestamp, "signed delivery without a timestamp");
  }
  const std::optional<int64_t> timestamp = ParseTimestamp(delivery.timestamp);
  if (!timestamp.has_value()) {
    return Failure(SignatureFailure::kMalformedTimestamp,
                   "timestamp is not decimal seconds since the epoch");
  }
  const int64_t now_seconds = absl::ToUnixSeconds(now);
  const int64_t tolerance_seconds = absl::ToInt64Seconds(limits.tolerance);
  // The timestamp is >= 0; each difference is taken only in the direction where it cannot
  // overflow, whatever `now` is.
  if (*timestamp < now_seconds && now_seconds - *timestamp > tolerance_seconds) {
    return Failure(SignatureFailure::kTimestampTooOld,
                   absl::StrCat("timestamp is ", now_seconds - *timestamp, " s old; tolerance ",
                                tolerance_seconds, " s"));
  }
  if (*timestamp > now_seconds &&
      static_cast<uint64_t>(*timestamp) - static_cast<uint64_t>(now_seconds) >
          static_cast<uint64_t>(tolerance_seconds)) {
    return Failure(
        SignatureFailure::kTimestampTooNew,
        absl::StrCat("timestamp is ahead of now by more than ", tolerance_seconds, " s"));
  }
  if (keys.empty()) {
    return Failure(SignatureFailure::kNoKeys, "the publisher has no active key");
  }

  const std::string content = SignedContent(delivery.msg_id, *timestamp, delivery.body);
  // Each HMAC key's MAC is computed once, on first need.
  std::vector<std::optional<crypto::HmacSha256Digest>> macs(keys.size());
  bool any_malformed = false;
  std::string first_problem;
  for (const SignatureToken& token : ParseSignatureHeader(header, limits)) {
    if (token.kind == SignatureToken::Kind::kMalformed) {
      if (!any_malformed) {
        first_problem = token.problem;
      }
      any_malformed = true;
      continue;
    }
    if (token.kind == SignatureToken::Kind::kUnknown) {
      continue;
    }
    const SignatureVersion version =
        token.kind == SignatureToken::Kind::kV1 ? SignatureVersion::kV1 : SignatureVersion::kV1a;
    for (size_t i = 0; i < keys.size(); ++i) {
      const VerificationKey& key = keys[i];
      if (key.version != version) {
        continue;
      }
      bool verified = false;
      if (version == SignatureVersion::kV1) {
        if (!macs[i].has_value()) {
          macs[i] = crypto::HmacSha256(key.material, content);
        }
        verified = crypto::ConstantTimeEquals(AsBytes(*macs[i]), token.signature);
      } else {
        if (key.ed25519.has_value()) {
          verified = key.ed25519->Verify(content, token.signature);
        } else {
          const absl::StatusOr<crypto::Ed25519PublicKey> public_key =
              crypto::Ed25519PublicKey::FromRaw(key.material);
          verified = public_key.ok() && public_key->Verify(content, token.signature);
        }
      }
      if (verified) {
        return VerifiedSignature{key.id, version};
      }
    }
  }
  if (any_malformed) {
    return Failure(SignatureFailure::kMalformedSignature,
                   absl::StrCat("no signature verified; malformed token: ", first_problem));
  }
  return Failure(SignatureFailure::kNoMatchingSignature,
                 "no signature verified under the publisher's keys");
}

std::string SignedContent(absl::string_view msg_id, int64_t timestamp, absl::string_view body) {
  return absl::StrCat(msg_id, ".", timestamp, ".", body);
}

std::string SignV1(absl::string_view secret, absl::string_view content) {
  return absl::StrCat("v1,", EncodeBase64(AsBytes(crypto::HmacSha256(secret, content))));
}

std::string SignV1a(const crypto::Ed25519PrivateKey& key, absl::string_view content) {
  return absl::StrCat("v1a,", EncodeBase64(key.Sign(content)));
}

}  // namespace portcullis::verifier::ingest
