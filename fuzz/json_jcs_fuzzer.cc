// The strict JSON reader and RFC 8785 canonicalization (common/json) on arbitrary bytes.
// Invariants: every refusal has a kind; a document that parses canonicalizes; the canonical form
// parses again and is a fixed point (canonicalizing it gives the same bytes); CanonicalizeText
// agrees with ParseStrict + Canonicalize.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/json/jcs.h"
#include "common/json/strict_parse.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace json = portcullis::json;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  json::ParseOptions options;
  options.max_depth = 64;
  options.max_bytes = 1 << 20;

  const auto value = json::ParseStrict(text, options);
  if (!value.ok()) {
    FUZZ_CHECK(json::ParseErrorKindOf(value.status()).has_value(), value.status().ToString());
    FUZZ_CHECK(!json::CanonicalizeText(text, options).ok(), "CanonicalizeText accepted it");
    return 0;
  }
  const auto canonical = json::Canonicalize(*value);
  FUZZ_CHECK(canonical.ok(), canonical.status().ToString());
  const auto via_text = json::CanonicalizeText(text, options);
  FUZZ_CHECK(via_text.ok() && *via_text == *canonical, "CanonicalizeText differs");

  const auto reparsed = json::ParseStrict(*canonical, options);
  FUZZ_CHECK(reparsed.ok(), *canonical + " -> " + reparsed.status().ToString());
  FUZZ_CHECK(*reparsed == *value, *canonical);
  const auto again = json::Canonicalize(*reparsed);
  FUZZ_CHECK(again.ok() && *again == *canonical, *canonical);
  (void)json::ContentHash(*canonical);
  return 0;
}
