#include "common/json/jcs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/encoding/utf8.h"
#include "common/status/status_macros.h"

namespace portcullis::json {
namespace {

bool IsAscii(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<uint8_t>(c) < 0x80; });
}

// Appends the UTF-16 code units of UTF-8 `s` to `out`; false when `s` is not valid UTF-8.
bool AppendUtf16(absl::string_view s, std::u16string& out) {
  size_t pos = 0;
  while (pos < s.size()) {
    const encoding::DecodedCodePoint decoded = encoding::DecodeUtf8At(s, pos);
    if (decoded.length == 0) {
      return false;
    }
    uint32_t cp = decoded.code_point;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
    pos += decoded.length;
  }
  return true;
}

// Runs of characters that need no escape are copied whole.
absl::Status AppendString(absl::string_view s, std::string& out) {
  if (!encoding::IsValidUtf8(s)) {
    return absl::InvalidArgumentError("string is not valid UTF-8");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t run = 0;  // The first character not yet appended.
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (static_cast<uint8_t>(c) >= 0x20 && c != '"' && c != '\\') {
      continue;
    }
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        out.append("\\u00");
        out.push_back(kHex[static_cast<uint8_t>(c) >> 4]);
        out.push_back(kHex[static_cast<uint8_t>(c) & 0xF]);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
  return absl::OkStatus();
}

template <typename Integer>
absl::StatusOr<double> ExactDouble(Integer value) {
  const double d = static_cast<double>(value);
  // Every integer up to 2^63 that converts to a double below 2^63/2^64 converts back; the top of
  // the range converts to exactly 2^63 / 2^64, which does not.
  constexpr double kLimit = static_cast<double>(std::numeric_limits<Integer>::max());
  if (d >= kLimit || static_cast<Integer>(d) != value) {
    return absl::InvalidArgumentError(
        absl::StrCat("integer ", value, " cannot be held exactly by an IEEE-754 double"));
  }
  return d;
}

absl::Status AppendCanonical(const boost::json::value& value, std::string& out) {
  switch (value.kind()) {
    case boost::json::kind::null:
      out.append("null");
      return absl::OkStatus();
    case boost::json::kind::bool_:
      out.append(value.get_bool() ? "true" : "false");
      return absl::OkStatus();
    case boost::json::kind::int64: {
      ASSIGN_OR_RETURN(const double d, ExactDouble(value.get_int64()));
      ASSIGN_OR_RETURN(const std::string text, FormatNumber(d));
      out.append(text);
      return absl::OkStatus();
    }
    case boost::json::kind::uint64: {
      ASSIGN_OR_RETURN(const double d, ExactDouble(value.get_uint64()));
      ASSIGN_OR_RETURN(const std::string text, FormatNumber(d));
      out.append(text);
      return absl::OkStatus();
    }
    case boost::json::kind::double_: {
      ASSIGN_OR_RETURN(const std::string text, FormatNumber(value.get_double()));
      out.append(text);
      return absl::OkStatus();
    }
    case boost::json::kind::string: {
      const boost::json::string& s = value.get_string();
      return AppendString(absl::string_view(s.data(), s.size()), out);
    }
    case boost::json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const boost::json::value& element : value.get_array()) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        RETURN_IF_ERROR(AppendCanonical(element, out));
      }
      out.push_back(']');
      return absl::OkStatus();
    }
    case boost::json::kind::object: {
      // RFC 8785 §3.2.3: members sorted by the UTF-16 code units of their names. When every name
      // is ASCII (nearly always) that is the order of their bytes, and no UTF-16 copy is made.
      struct Member {
        absl::string_view name;
        std::u16string sort_key;  // Only when some name is not ASCII.
        const boost::json::key_value_pair* member;
      };
      std::vector<Member> members;
      members.reserve(value.get_object().size());
      bool ascii_names = true;
      for (const boost::json::key_value_pair& member : value.get_object()) {
        const boost::json::string_view key = member.key();
        members.push_back({absl::string_view(key.data(), key.size()), {}, &member});
        ascii_names = ascii_names && IsAscii(members.back().name);
      }
      if (ascii_names) {
        std::sort(members.begin(), members.end(),
                  [](const Member& a, const Member& b) { return a.name < b.name; });
      } else {
        for (Member& entry : members) {
          if (!AppendUtf16(entry.name, entry.sort_key)) {
            return absl::InvalidArgumentError("member name is not valid UTF-8");
          }
        }
        std::sort(members.begin(), members.end(),
                  [](const Member& a, const Member& b) { return a.sort_key < b.sort_key; });
      }
      out.push_back('{');
      bool first = true;
      for (const Member& entry : members) {
        if (!first) {
          out.push_back(',');
        }
        first = false;
        const boost::json::string_view key = entry.member->key();
        RETURN_IF_ERROR(AppendString(absl::string_view(key.data(), key.size()), out));
        out.push_back(':');
        RETURN_IF_ERROR(AppendCanonical(entry.member->value(), out));
      }
      out.push_back('}');
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown JSON value kind");
}

}  // namespace

absl::StatusOr<std::string> FormatNumber(double value) {
  if (!std::isfinite(value)) {
    return absl::InvalidArgumentError("NaN and Infinity are not JSON numbers");
  }
  if (value == 0) {
    return std::string("0");  // Also -0 (ECMA-262: "If x is -0, return "0"").
  }
  std::string out;
  if (value < 0) {
    out.push_back('-');
    value = -value;
  }
  // Shortest round-trip digits, closest to the value, ties to even: the same digits ECMA-262
  // asks for (Number::toString step 5). Written as d[.ddd]e±x.
  char buffer[64];
  const auto [end, error] =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  if (error != std::errc()) {
    return absl::InternalError("to_chars failed on a finite double");
  }
  const absl::string_view scientific(buffer, end - buffer);
  const size_t e_pos = scientific.find('e');
  std::string digits;
  for (const char c : scientific.substr(0, e_pos)) {
    if (c != '.') {
      digits.push_back(c);
    }
  }
  int exponent = 0;
  const absl::string_view exponent_text = scientific.substr(e_pos + 1);
  const char* exponent_begin = exponent_text.data() + (exponent_text.front() == '+' ? 1 : 0);
  std::from_chars(exponent_begin, exponent_text.data() + exponent_text.size(), exponent);

  // ECMA-262 names: k digits, value = digits × 10^(n−k).
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (k <= n && n <= 21) {
    out.append(digits);
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<size_t>(n));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(n), std::string::npos);
  } else if (-6 < n && n <= 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-n), '0');
    out.append(digits);
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    out.push_back('e');
    out.push_back(n - 1 >= 0 ? '+' : '-');
    out.append(std::to_string(std::abs(n - 1)));
  }
  return out;
}

absl::StatusOr<std::string> Canonicalize(const boost::json::value& value) {
  std::string out;
  RETURN_IF_ERROR(AppendCanonical(value, out));
  return out;
}

absl::StatusOr<std::string> CanonicalizeText(absl::string_view text, const ParseOptions& options) {
  ASSIGN_OR_RETURN(const boost::json::value document, ParseStrict(text, options));
  return Canonicalize(document);
}

crypto::Sha256Digest ContentHash(absl::string_view canonical) { return crypto::Sha256(canonical); }

}  // namespace portcullis::json
