#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// application/x-www-form-urlencoded, as the WHATWG URL standard defines it, but strict: a
// malformed percent escape or a value that is not UTF-8 is an error, not something to repair.
namespace portcullis::gateway {

struct FormField {
  std::string name;
  std::string value;
};

// All fields of a form body in order (repeated names kept). Empty pieces ("a=1&&b=2") are
// skipped; a piece without '=' is a name with an empty value.
// Errors (InvalidArgument): '%' not followed by two hex digits; a name or value that is not
// valid UTF-8 after decoding.
absl::StatusOr<std::vector<FormField>> DecodeForm(absl::string_view body);

// The fields named `name`.
std::vector<absl::string_view> FieldValues(const std::vector<FormField>& fields,
                                           absl::string_view name);

}  // namespace portcullis::gateway
