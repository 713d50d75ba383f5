// The Standard Webhooks signature header parser and delivery check
// (verifier-service/src/ingest/standard_webhooks) on arbitrary bytes. The input is split on its
// first three newlines into message id, timestamp, signature header and body.
// Invariants: the header parser returns at most max_tokens tokens, well-formed ones with the
// signature length of their version; every refusal names a SignatureFailure; whenever the
// metadata passes (the result is OK or "no matching signature"), the same delivery signed with our
// key verifies under that key.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fuzz/fuzz_check.h"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace {

namespace ingest = portcullis::verifier::ingest;

constexpr int64_t kNow = 1614265330;

const std::vector<ingest::VerificationKey>& Keys() {
  static const auto* keys = [] {
    auto* list = new std::vector<ingest::VerificationKey>;
    list->push_back(
        *ingest::ParseVerificationKey("hmac", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
    const auto signing = portcullis::crypto::Ed25519PrivateKey::FromSeed(std::string(32, 'k'));
    list->push_back(
        *ingest::ParseVerificationKey("ed25519", ingest::SerializePublicKey(signing->PublicKey())));
    return list;
  }();
  return *keys;
}

absl::string_view NextLine(absl::string_view* rest) {
  const size_t newline = rest->find('\n');
  if (newline == absl::string_view::npos) {
    const absl::string_view line = *rest;
    *rest = absl::string_view();
    return line;
  }
  const absl::string_view line = rest->substr(0, newline);
  rest->remove_prefix(newline + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  (void)ingest::ParseVerificationKey("fuzz", input);
  (void)ingest::ParseSigningKey(input);

  const ingest::SignatureLimits limits;
  const auto tokens = ingest::ParseSignatureHeader(input, limits);
  FUZZ_CHECK(tokens.size() <= limits.max_tokens, std::to_string(tokens.size()));
  for (const auto& token : tokens) {
    if (token.kind == ingest::SignatureToken::Kind::kV1) {
      FUZZ_CHECK(token.signature.size() == 32, "v1 signature length");
    } else if (token.kind == ingest::SignatureToken::Kind::kV1a) {
      FUZZ_CHECK(token.signature.size() == 64, "v1a signature length");
    }
  }

  absl::string_view rest = input;
  ingest::SignedDelivery delivery;
  delivery.msg_id = NextLine(&rest);
  delivery.timestamp = NextLine(&rest);
  delivery.signature_header = NextLine(&rest);
  delivery.body = rest;
  const absl::Time now = absl::FromUnixSeconds(kNow);
  const auto verified = ingest::VerifyDelivery(delivery, Keys(), now, limits);
  if (verified.ok()) {
    FUZZ_CHECK(verified->key_id == "hmac" || verified->key_id == "ed25519", verified->key_id);
  } else {
    FUZZ_CHECK(ingest::SignatureFailureOf(verified.status()).has_value(),
               verified.status().ToString());
  }
  const bool metadata_ok =
      verified.ok() ||
      ingest::SignatureFailureOf(verified.status()) == ingest::SignatureFailure::kNoMatchingSignature;
  if (metadata_ok) {
    int64_t timestamp = 0;
    FUZZ_CHECK(absl::SimpleAtoi(delivery.timestamp, &timestamp), std::string(delivery.timestamp));
    const std::string content = ingest::SignedContent(delivery.msg_id, timestamp, delivery.body);
    ingest::SignedDelivery signed_delivery = delivery;
    const std::string v1 = ingest::SignV1(Keys()[0].material, content);
    signed_delivery.signature_header = v1;
    const auto by_hmac = ingest::VerifyDelivery(signed_delivery, Keys(), now, limits);
    FUZZ_CHECK(by_hmac.ok() && by_hmac->key_id == "hmac", by_hmac.status().ToString());
    const auto signing = portcullis::crypto::Ed25519PrivateKey::FromSeed(std::string(32, 'k'));
    const std::string v1a = ingest::SignV1a(*signing, content);
    signed_delivery.signature_header = v1a;
    const auto by_ed25519 = ingest::VerifyDelivery(signed_delivery, Keys(), now, limits);
    FUZZ_CHECK(by_ed25519.ok() && by_ed25519->key_id == "ed25519",
               by_ed25519.status().ToString());
  }
  return 0;
}
