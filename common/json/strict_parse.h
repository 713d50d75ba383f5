#pragma once

// A strict JSON reader for content pushed by strangers: RFC 8259 grammar plus the I-JSON
// (RFC 7493) restrictions that matter for a canonical hash, so that two different texts can never
// canonicalize (RFC 8785) to the same bytes by accident of parsing.
//
// Refused, and how the refusal is classified (ParseErrorKindOf):
//   malformed (the gateway's 400 "malformed_json"):
//     kSyntax          not JSON: grammar errors, trailing data, empty input, comments, trailing
//                      commas, control characters inside strings
//     kInvalidUnicode  invalid UTF-8 bytes (overlong forms, encoded surrogates, > U+10FFFF,
//                      truncated sequences) or a lone surrogate in a \u escape ("\ud800")
//   schema violations (the gateway's 422 "schema_violation", with ParseErrorPathOf as the field):
//     kDuplicateKey      the same member name twice in one object, compared after unescaping
//                        ("a" and "\u0061" are the same name), at any depth
//     kNumberOutOfRange  a number whose magnitude overflows a double (1e400) or that is non-zero
//                        but rounds to zero (1e-400); an integer literal (no fraction, no
//                        exponent) beyond 2^53 that a double does not hold exactly
//                        (9007199254740993, read as ...992): I-JSON asks for such values to
//                        travel as strings, and silently rounding them would give two different
//                        ids the same content hash. An integer literal that is the canonical
//                        (ECMAScript) spelling of its double, such as 295147905179352830000 for
//                        2^68, is accepted, so canonical output always parses again.
//     kNegativeZero      -0 in any spelling (-0, -0.0, -0e5): RFC 8785 errata 7920 asks a JCS
//                        parser to stop on it, since it canonicalizes to 0
//     kNoncharacter      a Unicode noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF), which I-JSON
//                        forbids, escaped or not
//     kTooDeep           arrays and objects nested deeper than ParseOptions::max_depth
//   kTooLarge: the text is longer than ParseOptions::max_bytes (kResourceExhausted).
//
// Every refusal is an absl::Status (kInvalidArgument, or kResourceExhausted for kTooLarge) whose
// message names the problem and, for schema violations, the JSON Pointer (RFC 6901) of the member.
// Non-integer numbers are rounded to the nearest double, as RFC 8785 specifies (so 4.50 and 4.5
// are the same number); every number in the result is a double.
//
// Cost: one pass over the input, memory proportional to the document. Callers cap the body first
// (the gateway's 1 MiB limit); max_bytes is a second fence for other callers.

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "boost/json/value.hpp"

namespace portcullis::json {

enum class ParseErrorKind {
  kSyntax,
  kInvalidUnicode,
  kDuplicateKey,
  kNumberOutOfRange,
  kNegativeZero,
  kNoncharacter,
  kTooDeep,
  kTooLarge,
};

// "syntax", "invalid_unicode", "duplicate_key", ... (stable; usable in logs and metrics labels).
absl::string_view ParseErrorKindName(ParseErrorKind kind);

// True for kSyntax and kInvalidUnicode: the input is not (UTF-8) JSON at all.
bool IsMalformed(ParseErrorKind kind);

struct ParseOptions {
  // Nesting of arrays and objects; a scalar at top level has depth 0, "[]" depth 1.
  size_t max_depth = 64;
  // Longest accepted text, in bytes.
  size_t max_bytes = size_t{16} << 20;
};

// Parses `text` (UTF-8, no BOM) strictly, as described above. The result uses only null, bool,
// double, string, array and object; object members keep their input order.
absl::StatusOr<boost::json::value> ParseStrict(absl::string_view text,
                                               const ParseOptions& options = ParseOptions());

// The kind of a status returned by ParseStrict; nullopt for OK or for any other status.
std::optional<ParseErrorKind> ParseErrorKindOf(const absl::Status& status);

// The JSON Pointer (RFC 6901) of the offending member or value for a ParseStrict error ("" is the
// whole document, "/items/0/id" a member); nullopt when the error has no location (syntax errors
// carry a byte offset in the message instead).
std::optional<std::string> ParseErrorPathOf(const absl::Status& status);

}  // namespace portcullis::json
