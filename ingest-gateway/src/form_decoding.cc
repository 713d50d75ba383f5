#include "ingest-gateway/src/form_decoding.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/encoding/percent.h"

namespace portcullis::gateway {

absl::StatusOr<std::vector<FormField>> DecodeForm(absl::string_view body) {
  std::vector<FormField> fields;
  for (absl::string_view piece : absl::StrSplit(body, '&', absl::SkipEmpty())) {
    const size_t equals = piece.find('=');
    const absl::string_view raw_name = piece.substr(0, equals);
    const absl::string_view raw_value =
        equals == absl::string_view::npos ? absl::string_view() : piece.substr(equals + 1);
    absl::StatusOr<std::string> name = encoding::DecodeFormComponentStrictly(raw_name);
    if (!name.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("form field name: ", name.status().message()));
    }
    absl::StatusOr<std::string> value = encoding::DecodeFormComponentStrictly(raw_value);
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("form field '", *name, "': ", value.status().message()));
    }
    fields.push_back(FormField{*std::move(name), *std::move(value)});
  }
  return fields;
}

std::vector<absl::string_view> FieldValues(const std::vector<FormField>& fields,
                                           absl::string_view name) {
  std::vector<absl::string_view> values;
  for (const FormField& field : fields) {
    if (field.name == name) {
      values.push_back(field.value);
    }
  }
  return values;
}

}  // namespace portcullis::gateway
