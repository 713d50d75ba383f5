// application/x-www-form-urlencoded decoding (ingest-gateway/src/form_decoding) on arbitrary
// bytes. Invariant: decoded fields, percent-encoded byte by byte and decoded again, come back
// unchanged (names, values and order), and every decoded name and value is what FieldValues finds.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "fuzz/fuzz_check.h"
#include "ingest-gateway/src/form_decoding.h"

namespace {

std::string EncodeEveryByte(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view body(reinterpret_cast<const char*>(data), size);
  const auto fields = portcullis::gateway::DecodeForm(body);
  if (!fields.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(fields.status()), fields.status().ToString());
    return 0;
  }
  std::string encoded;
  for (const auto& field : *fields) {
    if (!encoded.empty()) {
      encoded += '&';
    }
    encoded += EncodeEveryByte(field.name);
    encoded += '=';
    encoded += EncodeEveryByte(field.value);
  }
  const auto again = portcullis::gateway::DecodeForm(encoded);
  FUZZ_CHECK(again.ok(), again.status().ToString());
  // An empty name with an empty value encodes to "=", which is a field again; nothing else is
  // dropped or added.
  FUZZ_CHECK(again->size() == fields->size(), encoded);
  for (size_t i = 0; i < fields->size(); ++i) {
    FUZZ_CHECK((*again)[i].name == (*fields)[i].name, encoded);
    FUZZ_CHECK((*again)[i].value == (*fields)[i].value, encoded);
  }
  if (!fields->empty()) {
    const auto values = portcullis::gateway::FieldValues(*fields, fields->front().name);
    FUZZ_CHECK(!values.empty() && values.front() == fields->front().value, encoded);
  }
  return 0;
}
