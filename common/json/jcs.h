#pragma once

// RFC 8785 JSON Canonicalization Scheme (JCS): the one byte form of a JSON document that the
// ingest idempotency key hashes, so that the same item sent with other whitespace, member order or
// number spelling ("4.50", "45e-1") is recognised as the same item.
//
// Canonical form: no whitespace; object members sorted by the UTF-16 code units of their names;
// strings as UTF-8 with only the escapes JCS requires (\" \\ \b \f \n \r \t, other controls as
// lowercase \u00xx); numbers as ECMAScript's Number.prototype.toString writes the double.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "boost/json/value.hpp"
#include "common/crypto/sha256.h"
#include "common/json/strict_parse.h"

namespace portcullis::json {

// ECMAScript Number::toString(value) (ECMA-262 §6.1.6.1.20): the shortest decimal that reads back
// as `value`, in plain notation for 1e-7 < |value| < 1e21 and as "de+x" / "d.ddde-x" otherwise.
// -0 is written "0". NaN and infinities are not JSON numbers: kInvalidArgument.
absl::StatusOr<std::string> FormatNumber(double value);

// The canonical form of `value`. Documents from ParseStrict always succeed. Values built by hand
// are refused (kInvalidArgument) when a string is not valid UTF-8, a number is not finite, or an
// int64/uint64 is not exactly a double. Recurses once per nesting level.
absl::StatusOr<std::string> Canonicalize(const boost::json::value& value);

// ParseStrict(text, options) then Canonicalize: the errors are ParseStrict's (see
// ParseErrorKindOf).
absl::StatusOr<std::string> CanonicalizeText(absl::string_view text,
                                             const ParseOptions& options = ParseOptions());

// The content hash of an ingest item: SHA-256 of its canonical bytes.
crypto::Sha256Digest ContentHash(absl::string_view canonical);

}  // namespace portcullis::json
