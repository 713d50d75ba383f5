#include "common/encoding/percent.h"

#include "common/encoding/hex.h"
#include "common/encoding/utf8.h"

namespace portcullis::encoding {

std::string PercentDecode(absl::string_view input, PlusIs plus) {
  std::string out;
  out.reserve(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    const char c = input[i];
    if (c == '+' && plus == PlusIs::kSpace) {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < input.size() && HexDigitValue(input[i + 1]) >= 0 &&
               HexDigitValue(input[i + 2]) >= 0) {
      out.push_back(
          static_cast<char>(HexDigitValue(input[i + 1]) * 16 + HexDigitValue(input[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<std::string> DecodeFormComponentStrictly(absl::string_view input) {
  std::string out;
  out.reserve(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    const char c = input[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= input.size()) {
        return absl::InvalidArgumentError("truncated percent escape");
      }
      const int high = HexDigitValue(input[i + 1]);
      const int low = HexDigitValue(input[i + 2]);
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

}  // namespace portcullis::encoding
