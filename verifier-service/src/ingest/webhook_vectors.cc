#include "verifier-service/src/ingest/webhook_vectors.h"

#include <exception>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "boost/json/parse.hpp"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace portcullis::verifier::ingest {
namespace {

std::string Str(const boost::json::value& value) {
  return std::string(value.as_string().data(), value.as_string().size());
}

std::string Member(const boost::json::object& object, absl::string_view name) {
  const boost::json::value* value =
      object.if_contains(boost::json::string_view(name.data(), name.size()));
  return value == nullptr ? std::string() : Str(*value);
}

void RunVectors(const boost::json::value& vectors, const VectorCheck& check) {
  for (const boost::json::value& vector : vectors.at("sign_vectors").as_array()) {
    const std::string id = Str(vector.at("id"));
    const absl::StatusOr<VerificationKey> key = ParseVerificationKey("k", Str(vector.at("secret")));
    if (!key.ok()) {
      check(false, absl::StrCat(id, ": secret refused: ", key.status().ToString()));
      continue;
    }
    check(absl::BytesToHexString(key->material) == Str(vector.at("derived_key_bytes_hex")),
          absl::StrCat(id, ": key bytes"));
    const std::string content = SignedContent(
        Str(vector.at("msg_id")), vector.at("timestamp").as_int64(), Str(vector.at("payload")));
    check(content == Str(vector.at("derived_signed_content")), absl::StrCat(id, ": content"));
    check(SignV1(key->material, content) == Str(vector.at("expected_signature")),
          absl::StrCat(id, ": signature"));
  }

  for (const boost::json::value& vector : vectors.at("verify_vectors").as_array()) {
    const std::string id = Str(vector.at("id"));
    const boost::json::object& headers = vector.at("headers").as_object();
    const std::string msg_id = Member(headers, "webhook-id");
    const std::string timestamp = Member(headers, "webhook-timestamp");
    const std::string signature = Member(headers, "webhook-signature");
    const std::string payload = Str(vector.at("payload"));
    const absl::StatusOr<VerificationKey> key = ParseVerificationKey("k", Str(vector.at("secret")));
    if (!key.ok()) {
      check(false, absl::StrCat(id, ": secret refused"));
      continue;
    }
    SignatureLimits limits;
    limits.tolerance = absl::Seconds(vector.at("tolerance_seconds").as_int64());
    const absl::StatusOr<VerifiedSignature> verified =
        VerifyDelivery({msg_id, timestamp, signature, payload}, {*key},
                       absl::FromUnixSeconds(vector.at("now").as_int64()), limits);
    const std::string expect = Str(vector.at("expect"));
    if (expect == "valid") {
      check(verified.ok(), absl::StrCat(id, ": refused: ", verified.status().ToString()));
    } else {
      check(!verified.ok(), absl::StrCat(id, ": accepted"));
      if (expect.find("too old") != std::string::npos) {
        check(SignatureFailureOf(verified.status()) == SignatureFailure::kTimestampTooOld,
              absl::StrCat(id, ": reason ", verified.status().ToString()));
      } else if (expect.find("too new") != std::string::npos) {
        check(SignatureFailureOf(verified.status()) == SignatureFailure::kTimestampTooNew,
              absl::StrCat(id, ": reason ", verified.status().ToString()));
      }
    }
  }

  // Policy for the secret-parsing cases: strict padded base64 (the Go library's choice), the
  // whsec_ prefix optional.
  for (const boost::json::value& vector : vectors.at("secret_parsing_vectors").as_array()) {
    const std::string secret = Str(vector.at("secret"));
    const std::string expect = Str(vector.at("expect"));
    const absl::StatusOr<VerificationKey> key = ParseVerificationKey("k", secret);
    if (absl::StartsWith(expect, "reject")) {
      check(!key.ok(), absl::StrCat("secret '", secret, "': accepted"));
    } else if (absl::StartsWith(expect, "accept")) {
      check(key.ok() && absl::BytesToHexString(key->material) == Str(vector.at("key_bytes_hex")),
            absl::StrCat("secret '", secret, "': not the same key"));
      const absl::StatusOr<VerificationKey> prefixed =
          ParseVerificationKey("k", absl::StrCat("whsec_", secret));
      check(prefixed.ok() && key.ok() && prefixed->material == key->material,
            absl::StrCat("secret '", secret, "': prefix changes the key"));
    } else {
      // "Pick one policy": unpadded base64 is refused.
      check(!key.ok(), absl::StrCat("unpadded secret '", secret, "': accepted"));
    }
  }

  const boost::json::value& v1a = vectors.at("derived_v1a_vector");
  const absl::StatusOr<VerificationKey> public_key =
      ParseVerificationKey("ed", Str(v1a.at("whpk")));
  check(public_key.ok() && public_key->version == SignatureVersion::kV1a &&
            absl::BytesToHexString(public_key->material) == Str(v1a.at("ed25519_public_key_hex")),
        "v1a: whpk");
  const absl::StatusOr<crypto::Ed25519PrivateKey> signing_key =
      ParseSigningKey(Str(v1a.at("whsk_seed_form")));
  check(signing_key.ok() &&
            absl::BytesToHexString(signing_key->seed()) == Str(v1a.at("ed25519_seed_hex")),
        "v1a: whsk");
  if (signing_key.ok()) {
    check(SignV1a(*signing_key, Str(v1a.at("signed_content"))) == Str(v1a.at("expected_signature")),
          "v1a: signature");
  }
  if (public_key.ok()) {
    const absl::StatusOr<VerifiedSignature> verified =
        VerifyDelivery({"msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330",
                        Str(v1a.at("expected_signature")), "{\"test\": 2432232314}"},
                       {*public_key}, absl::FromUnixSeconds(1614265330));
    check(verified.ok() && verified->version == SignatureVersion::kV1a && verified->key_id == "ed",
          "v1a: verify");
  }
}

}  // namespace

absl::Status RunWebhookVectors(absl::string_view vectors_json, const VectorCheck& check) {
  try {
    const boost::json::value vectors =
        boost::json::parse(boost::json::string_view(vectors_json.data(), vectors_json.size()));
    RunVectors(vectors, check);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a Standard Webhooks vectors file (../shared/testdata/standard-webhooks format): ",
        e.what()));
  }
  return absl::OkStatus();
}

}  // namespace portcullis::verifier::ingest
