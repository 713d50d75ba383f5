#include "common/json/jcs_vectors.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/json/parse.hpp"
#include "common/crypto/sha256.h"
#include "common/json/jcs.h"

namespace portcullis::json {
namespace {

std::string Str(const boost::json::value& value) {
  return std::string(value.as_string().data(), value.as_string().size());
}

std::string Hex(absl::string_view bytes) { return absl::BytesToHexString(bytes); }

void RunVectors(const boost::json::value& vectors, const VectorCheck& check, std::ostream& notes) {
  // canonicalization_files: byte-exact output and its SHA-256.
  for (const boost::json::value& file : vectors.at("canonicalization_files").as_array()) {
    const std::string name = Str(file.at("name"));
    std::string input;
    if (!absl::Base64Unescape(Str(file.at("input_base64")), &input)) {
      check(false, absl::StrCat(name, ": input_base64 is not base64"));
      continue;
    }
    const std::string expected = absl::HexStringToBytes(Str(file.at("expected_output_hex")));
    const absl::StatusOr<std::string> canonical = CanonicalizeText(input);
    if (!canonical.ok()) {
      check(false, absl::StrCat(name, ": refused: ", canonical.status().ToString()));
      continue;
    }
    check(*canonical == expected,
          absl::StrCat(name, ": got ", Hex(*canonical), " want ", Hex(expected)));
    check(crypto::ToHex(ContentHash(*canonical)) == Str(file.at("expected_output_sha256_hex")),
          absl::StrCat(name, ": content hash"));
  }

  // number_serialization: every group with vectors; null = must be refused.
  for (const auto& group : vectors.at("number_serialization").as_object()) {
    if (!group.value().is_object() || !group.value().as_object().contains("vectors")) {
      continue;
    }
    for (const boost::json::value& vector : group.value().at("vectors").as_array()) {
      const std::string hex = Str(vector.at("ieee_hex"));
      const std::string what = absl::StrCat(std::string(group.key()), " ", hex);
      uint64_t bits = 0;
      if (!absl::SimpleHexAtoi(hex, &bits)) {
        check(false, absl::StrCat(what, ": not a hex bit pattern"));
        continue;
      }
      double value = 0;
      std::memcpy(&value, &bits, sizeof(value));
      const absl::StatusOr<std::string> formatted = FormatNumber(value);
      if (vector.at("expected").is_null()) {
        check(!formatted.ok(), absl::StrCat(what, ": accepted a non-finite number"));
        continue;
      }
      const std::string expected = Str(vector.at("expected"));
      if (!formatted.ok()) {
        check(false, absl::StrCat(what, ": refused: ", formatted.status().ToString()));
        continue;
      }
      check(*formatted == expected, absl::StrCat(what, ": got ", *formatted, " want ", expected));
      // The same number read from its canonical text canonicalizes to itself (except -0, which
      // the parser refuses by errata 7920).
      if (!std::signbit(value) || value != 0) {
        const absl::StatusOr<std::string> round_trip = CanonicalizeText(expected);
        check(round_trip.ok() && *round_trip == expected,
              absl::StrCat(what, ": round trip of ", expected));
      }
    }
  }

  // errata: each one's refusal, checked by the case it describes.
  for (const boost::json::value& erratum : vectors.at("errata").as_array()) {
    const std::string id = Str(erratum.at("id"));
    if (id.find("7920") != std::string::npos) {
      // "-0 ... SHOULD generate an error condition".
      for (const char* input : {"-0", "[-0]", "{\"a\":-0.0}", "-0e10", "-0E-5"}) {
        const absl::StatusOr<std::string> canonical = CanonicalizeText(input);
        check(!canonical.ok() &&
                  ParseErrorKindOf(canonical.status()) == ParseErrorKind::kNegativeZero,
              absl::StrCat(id, ": accepted ", input));
      }
    } else {
      // Editorial (a section reference); nothing to refuse.
      notes << "[ jcs ] erratum without an input case: " << id << "\n";
    }
  }
}

}  // namespace

absl::Status RunJcsVectors(absl::string_view vectors_json, const VectorCheck& check,
                           std::ostream& notes) {
  try {
    const boost::json::value vectors =
        boost::json::parse(boost::json::string_view(vectors_json.data(), vectors_json.size()));
    RunVectors(vectors, check, notes);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a JCS vectors file (../shared/testdata/jcs format): ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace portcullis::json
