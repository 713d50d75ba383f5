#include "ingest-gateway/src/form_decoding.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace portcullis::gateway {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint32_t code_point = 0;
    uint32_t minimum = 0;
    if ((byte & 0xE0) == 0xC0) {
      length = 2;
      code_point = byte & 0x1F;
      minimum = 0x80;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
      code_point = byte & 0x0F;
      minimum = 0x800;
    } else if ((byte & 0xF8) == 0xF0) {
      length = 4;
      code_point = byte & 0x07;
      minimum = 0x10000;
    } else {
      return false;
    }
    if (i + length > text.size()) {
      return false;
    }
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) {
        return false;
      }
      code_point = (code_point << 6) | (next & 0x3F);
    }
    if (code_point < minimum || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

absl::StatusOr<std::string> DecodeFormComponent(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= text.size()) {
        return absl::InvalidArgumentError("truncated percent escape");
      }
      const int high = HexValue(text[i + 1]);
      const int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) {
        return absl::InvalidArgumentError("malformed percent escape");
      }
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  if (!IsValidUtf8(out)) {
    return absl::InvalidArgumentError("not valid UTF-8");
  }
  return out;
}

absl::StatusOr<std::vector<FormField>> DecodeForm(absl::string_view body) {
  std::vector<FormField> fields;
  for (absl::string_view piece : absl::StrSplit(body, '&', absl::SkipEmpty())) {
    const size_t equals = piece.find('=');
    const absl::string_view raw_name = piece.substr(0, equals);
    const absl::string_view raw_value =
        equals == absl::string_view::npos ? absl::string_view() : piece.substr(equals + 1);
    absl::StatusOr<std::string> name = DecodeFormComponent(raw_name);
    if (!name.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("form field name: ", name.status().message()));
    }
    absl::StatusOr<std::string> value = DecodeFormComponent(raw_value);
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
