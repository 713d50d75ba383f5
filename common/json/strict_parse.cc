#include "common/json/strict_parse.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "boost/json/basic_parser_impl.hpp"
#include "boost/json/error.hpp"
#include "common/json/jcs.h"
#include "common/encoding/hex.h"

namespace portcullis::json {
namespace {

constexpr absl::string_view kKindPayload = "portcullis.json/parse_error_kind";
constexpr absl::string_view kPathPayload = "portcullis.json/path";

// Pointers quoted in messages are cut here; the payload keeps the whole pointer.
constexpr size_t kMaxPathInMessage = 200;

constexpr ParseErrorKind kAllKinds[] = {
    ParseErrorKind::kSyntax,       ParseErrorKind::kInvalidUnicode,
    ParseErrorKind::kDuplicateKey, ParseErrorKind::kNumberOutOfRange,
    ParseErrorKind::kNegativeZero, ParseErrorKind::kNoncharacter,
    ParseErrorKind::kTooDeep,      ParseErrorKind::kTooLarge,
};

std::string QuotedPath(absl::string_view path) {
  if (path.empty()) {
    return "the document root";
  }
  if (path.size() > kMaxPathInMessage) {
    return absl::StrCat("\"", path.substr(0, kMaxPathInMessage), "...\"");
  }
  return absl::StrCat("\"", path, "\"");
}

absl::Status MakeError(ParseErrorKind kind, std::string message,
                       std::optional<std::string> path = std::nullopt) {
  absl::Status status = kind == ParseErrorKind::kTooLarge
                            ? absl::ResourceExhaustedError(std::move(message))
                            : absl::InvalidArgumentError(std::move(message));
  status.SetPayload(kKindPayload, absl::Cord(ParseErrorKindName(kind)));
  if (path.has_value()) {
    status.SetPayload(kPathPayload, absl::Cord(*path));
  }
  return status;
}

// RFC 6901: "~" -> "~0", "/" -> "~1".
void AppendPointerSegment(absl::string_view segment, std::string& out) {
  out.push_back('/');
  for (char c : segment) {
    if (c == '~') {
      out.append("~0");
    } else if (c == '/') {
      out.append("~1");
    } else {
      out.push_back(c);
    }
  }
}

// The code unit of a "\uXXXX" escape starting at text[pos] (the backslash), or -1 when the bytes
// there are not such an escape.
int32_t EscapedCodeUnit(absl::string_view text, size_t pos) {
  if (pos + 6 > text.size() || text[pos] != '\\' || text[pos + 1] != 'u') {
    return -1;
  }
  int32_t unit = 0;
  for (size_t i = pos + 2; i < pos + 6; ++i) {
    const int digit = encoding::HexDigitValue(text[i]);
    if (digit < 0) {
      return -1;
    }
    unit = unit * 16 + digit;
  }
  return unit;
}

// Length of the well-formed UTF-8 sequence at text[pos], or 0 when it is ill-formed (Unicode
// Table 3-7: no overlong forms, no encoded surrogates, nothing above U+10FFFF).
size_t Utf8SequenceLength(absl::string_view text, size_t pos) {
  const auto byte = [&](size_t i) -> uint8_t {
    return i < text.size() ? static_cast<uint8_t>(text[i]) : 0;
  };
  const auto in = [](uint8_t b, uint8_t lo, uint8_t hi) { return b >= lo && b <= hi; };
  const uint8_t b0 = byte(pos);
  if (b0 < 0x80) {
    return 1;
  }
  const uint8_t b1 = byte(pos + 1);
  if (in(b0, 0xC2, 0xDF)) {
    return in(b1, 0x80, 0xBF) ? 2 : 0;
  }
  const uint8_t b2 = byte(pos + 2);
  if (in(b0, 0xE0, 0xEF)) {
    const uint8_t lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const uint8_t hi = b0 == 0xED ? 0x9F : 0xBF;
    return in(b1, lo, hi) && in(b2, 0x80, 0xBF) ? 3 : 0;
  }
  const uint8_t b3 = byte(pos + 3);
  if (in(b0, 0xF0, 0xF4)) {
    const uint8_t lo = b0 == 0xF0 ? 0x90 : 0x80;
    const uint8_t hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return in(b1, lo, hi) && in(b2, 0x80, 0xBF) && in(b3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// Refuses ill-formed UTF-8 anywhere in `text` and unpaired surrogates written as \u escapes inside
// strings. Everything else about the grammar is left to Boost.JSON.
absl::Status CheckUnicode(absl::string_view text) {
  bool in_string = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (static_cast<uint8_t>(c) >= 0x80) {
      const size_t length = Utf8SequenceLength(text, pos);
      if (length == 0) {
        return MakeError(ParseErrorKind::kInvalidUnicode,
                         absl::StrCat("invalid UTF-8 at byte ", pos));
      }
      pos += length;
      continue;
    }
    if (!in_string) {
      in_string = c == '"';
      ++pos;
      continue;
    }
    if (c == '"') {
      in_string = false;
      ++pos;
      continue;
    }
    if (c != '\\') {
      ++pos;
      continue;
    }
    const int32_t unit = EscapedCodeUnit(text, pos);
    if (unit < 0) {
      pos += 2;  // Any other escape; malformed ones are Boost's to report.
      continue;
    }
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      const int32_t next = EscapedCodeUnit(text, pos + 6);
      if (next < 0xDC00 || next > 0xDFFF) {
        return MakeError(ParseErrorKind::kInvalidUnicode,
                         absl::StrCat("unpaired surrogate escape at byte ", pos));
      }
      pos += 12;
      continue;
    }
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return MakeError(ParseErrorKind::kInvalidUnicode,
                       absl::StrCat("unpaired surrogate escape at byte ", pos));
    }
    pos += 6;
  }
  return absl::OkStatus();
}

// The first noncharacter in well-formed UTF-8 `s`, or 0.
uint32_t FirstNoncharacter(absl::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    const uint8_t b0 = static_cast<uint8_t>(s[pos]);
    if (b0 < 0xE0) {  // ASCII and two-byte forms hold no noncharacter.
      pos += b0 < 0x80 ? 1 : 2;
      continue;
    }
    uint32_t cp = 0;
    size_t length = 0;
    if (b0 < 0xF0) {
      cp = b0 & 0x0Fu;
      length = 3;
    } else {
      cp = b0 & 0x07u;
      length = 4;
    }
    for (size_t i = 1; i < length && pos + i < s.size(); ++i) {
      cp = (cp << 6) | (static_cast<uint8_t>(s[pos + i]) & 0x3Fu);
    }
    if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFEu) == 0xFFFEu) {
      return cp;
    }
    pos += length;
  }
  return 0;
}

// Boost.JSON's push parser calls these; they build the document and apply the I-JSON rules,
// keeping track of where in the document they are so that errors name a member.
class DocumentBuilder {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  explicit DocumentBuilder(size_t max_depth) : max_depth_(max_depth) {}

  const absl::Status& failure() const { return failure_; }
  boost::json::value TakeRoot() { return std::move(root_); }

  bool on_document_begin(boost::json::error_code&) { return true; }
  bool on_document_end(boost::json::error_code&) { return true; }

  bool on_array_begin(boost::json::error_code& ec) {
    return Open(boost::json::value(boost::json::array()), ec);
  }
  bool on_array_end(std::size_t, boost::json::error_code& ec) { return Close(ec); }
  bool on_object_begin(boost::json::error_code& ec) {
    return Open(boost::json::value(boost::json::object()), ec);
  }
  bool on_object_end(std::size_t, boost::json::error_code& ec) { return Close(ec); }

  bool on_string_part(boost::json::string_view s, std::size_t, boost::json::error_code&) {
    buffer_.append(s.data(), s.size());
    return true;
  }
  bool on_string(boost::json::string_view s, std::size_t, boost::json::error_code& ec) {
    buffer_.append(s.data(), s.size());
    if (!CheckCharacters(buffer_, ec)) {
      return false;
    }
    boost::json::value value(boost::json::string(buffer_.data(), buffer_.size()));
    buffer_.clear();
    return Add(std::move(value), ec);
  }
  bool on_key_part(boost::json::string_view s, std::size_t, boost::json::error_code&) {
    buffer_.append(s.data(), s.size());
    return true;
  }
  bool on_key(boost::json::string_view s, std::size_t, boost::json::error_code& ec) {
    buffer_.append(s.data(), s.size());
    Frame& frame = frames_.back();
    frame.key = std::move(buffer_);
    buffer_.clear();
    if (!CheckCharacters(frame.key, ec)) {
      return false;
    }
    if (frame.container.get_object().contains(frame.key)) {
      const std::string path = CurrentPath();
      return Fail(MakeError(ParseErrorKind::kDuplicateKey,
                            absl::StrCat("duplicate key at ", QuotedPath(path)), path),
                  ec);
    }
    return true;
  }

  bool on_number_part(boost::json::string_view s, boost::json::error_code&) {
    buffer_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(int64_t, boost::json::string_view s, boost::json::error_code& ec) {
    return OnNumber(s, ec);
  }
  bool on_uint64(uint64_t, boost::json::string_view s, boost::json::error_code& ec) {
    return OnNumber(s, ec);
  }
  bool on_double(double, boost::json::string_view s, boost::json::error_code& ec) {
    return OnNumber(s, ec);
  }

  bool on_bool(bool b, boost::json::error_code& ec) { return Add(boost::json::value(b), ec); }
  bool on_null(boost::json::error_code& ec) { return Add(boost::json::value(nullptr), ec); }
  bool on_comment_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::json::error_code&) { return true; }

 private:
  struct Frame {
    boost::json::value container;  // An array or an object.
    std::string key;               // Objects: the member being read.
    size_t index = 0;              // Arrays: the element being read.
  };

  bool Fail(absl::Status status, boost::json::error_code& ec) {
    failure_ = std::move(status);
    ec = boost::json::error::syntax;  // Any error stops the parser; failure_ says which.
    return false;
  }

  // The JSON Pointer of the value being read now.
  std::string CurrentPath() const {
    std::string path;
    for (const Frame& frame : frames_) {
      if (frame.container.is_object()) {
        AppendPointerSegment(frame.key, path);
      } else {
        AppendPointerSegment(std::to_string(frame.index), path);
      }
    }
    return path;
  }

  bool Open(boost::json::value container, boost::json::error_code& ec) {
    if (frames_.size() >= max_depth_) {
      const std::string path = CurrentPath();
      return Fail(
          MakeError(ParseErrorKind::kTooDeep,
                    absl::StrCat("nesting deeper than ", max_depth_, " at ", QuotedPath(path)),
                    path),
          ec);
    }
    frames_.push_back(Frame{std::move(container), {}, 0});
    return true;
  }

  bool Close(boost::json::error_code& ec) {
    boost::json::value container = std::move(frames_.back().container);
    frames_.pop_back();
    return Add(std::move(container), ec);
  }

  bool Add(boost::json::value value, boost::json::error_code&) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return true;
    }
    Frame& frame = frames_.back();
    if (frame.container.is_array()) {
      frame.container.get_array().push_back(std::move(value));
      ++frame.index;
    } else {
      frame.container.get_object().emplace(frame.key, std::move(value));
    }
    return true;
  }

  bool CheckCharacters(absl::string_view s, boost::json::error_code& ec) {
    if (const uint32_t cp = FirstNoncharacter(s); cp != 0) {
      const std::string path = CurrentPath();
      return Fail(MakeError(ParseErrorKind::kNoncharacter,
                            absl::StrCat(
                                "noncharacter U+",
                                absl::AsciiStrToUpper(absl::StrCat(absl::Hex(cp, absl::kZeroPad4))),
                                " at ", QuotedPath(path)),
                            path),
                  ec);
    }
    return true;
  }

  bool OnNumber(boost::json::string_view last_part, boost::json::error_code& ec) {
    buffer_.append(last_part.data(), last_part.size());
    const std::string text = std::move(buffer_);
    buffer_.clear();
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc::result_out_of_range) {
      const std::string path = CurrentPath();
      return Fail(MakeError(ParseErrorKind::kNumberOutOfRange,
                            absl::StrCat("number at ", QuotedPath(path),
                                         " is outside the IEEE-754 double range"),
                            path),
                  ec);
    }
    if (error != std::errc() || end != text.data() + text.size()) {
      // Boost.JSON accepted the grammar, so this is a bug; refuse rather than guess.
      return Fail(MakeError(ParseErrorKind::kSyntax, "unreadable number"), ec);
    }
    if (value == 0 && std::signbit(value)) {
      const std::string path = CurrentPath();
      return Fail(
          MakeError(ParseErrorKind::kNegativeZero,
                    absl::StrCat("negative zero at ", QuotedPath(path), " (RFC 8785 errata 7920)"),
                    path),
          ec);
    }
    if (!IsFaithfulInteger(text, value)) {
      const std::string path = CurrentPath();
      return Fail(
          MakeError(ParseErrorKind::kNumberOutOfRange,
                    absl::StrCat("integer at ", QuotedPath(path),
                                 " is not exactly an IEEE-754 double (beyond 2^53, I-JSON); "
                                 "send it as a string"),
                    path),
          ec);
    }
    return Add(boost::json::value(value), ec);
  }

  // False only for an integer literal (no fraction, no exponent) that reads as a different
  // number than it spells: it is neither `value` exactly nor `value`'s canonical (ECMAScript)
  // spelling. So 9007199254740993 (read as ...992) is refused, while 295147905179352830000, the
  // canonical form of 2^68, reads back as itself and canonical output always parses again.
  static bool IsFaithfulInteger(absl::string_view text, double value) {
    if (text.find_first_of(".eE") != absl::string_view::npos) {
      return true;
    }
    constexpr double kTwoTo53 = 9007199254740992.0;
    if (std::fabs(value) < kTwoTo53) {
      return true;
    }
    if (!text.empty() && text.front() == '-') {
      text.remove_prefix(1);
    }
    // The exact decimal expansion of an integral double (at most 309 digits).
    char digits[400];
    const auto [end, error] = std::to_chars(digits, digits + sizeof(digits), std::fabs(value),
                                            std::chars_format::fixed, 0);
    if (error == std::errc() && absl::string_view(digits, end - digits) == text) {
      return true;
    }
    const absl::StatusOr<std::string> canonical = FormatNumber(std::fabs(value));
    return canonical.ok() && *canonical == text;
  }

  size_t max_depth_;
  std::vector<Frame> frames_;
  std::string buffer_;
  boost::json::value root_;
  absl::Status failure_;
};

}  // namespace

absl::string_view ParseErrorKindName(ParseErrorKind kind) {
  switch (kind) {
    case ParseErrorKind::kSyntax:
      return "syntax";
    case ParseErrorKind::kInvalidUnicode:
      return "invalid_unicode";
    case ParseErrorKind::kDuplicateKey:
      return "duplicate_key";
    case ParseErrorKind::kNumberOutOfRange:
      return "number_out_of_range";
    case ParseErrorKind::kNegativeZero:
      return "negative_zero";
    case ParseErrorKind::kNoncharacter:
      return "noncharacter";
    case ParseErrorKind::kTooDeep:
      return "too_deep";
    case ParseErrorKind::kTooLarge:
      return "too_large";
  }
  return "unknown";
}

bool IsMalformed(ParseErrorKind kind) {
  return kind == ParseErrorKind::kSyntax || kind == ParseErrorKind::kInvalidUnicode;
}

absl::StatusOr<boost::json::value> ParseStrict(absl::string_view text,
                                               const ParseOptions& options) {
  if (text.size() > options.max_bytes) {
    return MakeError(ParseErrorKind::kTooLarge,
                     absl::StrCat("JSON text of ", text.size(), " bytes is over the limit of ",
                                  options.max_bytes));
  }
  if (absl::Status unicode = CheckUnicode(text); !unicode.ok()) {
    return unicode;
  }
  boost::json::parse_options boost_options;
  boost_options.max_depth = options.max_depth + 1;  // The builder refuses first, with a path.
  boost_options.allow_comments = false;
  boost_options.allow_trailing_commas = false;
  boost_options.allow_invalid_utf8 = false;
  boost::json::basic_parser<DocumentBuilder> parser(boost_options, options.max_depth);
  boost::json::error_code ec;
  const size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (!parser.handler().failure().ok()) {
    return parser.handler().failure();
  }
  if (ec == boost::json::error::exponent_overflow) {
    return MakeError(ParseErrorKind::kNumberOutOfRange,
                     absl::StrCat("number exponent out of range at byte ", consumed));
  }
  if (ec) {
    return MakeError(ParseErrorKind::kSyntax,
                     absl::StrCat("malformed JSON at byte ", consumed, ": ", ec.message()));
  }
  if (consumed != text.size()) {
    return MakeError(ParseErrorKind::kSyntax,
                     absl::StrCat("malformed JSON: data after the document at byte ", consumed));
  }
  return parser.handler().TakeRoot();
}

std::optional<ParseErrorKind> ParseErrorKindOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kKindPayload);
  if (!payload.has_value()) {
    return std::nullopt;
  }
  for (ParseErrorKind kind : kAllKinds) {
    if (*payload == ParseErrorKindName(kind)) {
      return kind;
    }
  }
  return std::nullopt;
}

std::optional<std::string> ParseErrorPathOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload = status.GetPayload(kPathPayload);
  if (!payload.has_value()) {
    return std::nullopt;
  }
  return std::string(*payload);
}

}  // namespace portcullis::json
