#include "common/url/url.h"

#include <unicode/uidna.h>
#include <unicode/utypes.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/encoding/hex.h"
#include "common/encoding/percent.h"
#include "common/status/status_macros.h"

namespace portcullis::url {

// Builds a Url field by field; only the parser below uses it.
class UrlBuilder {
 public:
  static std::string& scheme(Url& url) { return url.scheme_; }
  static std::string& username(Url& url) { return url.username_; }
  static std::string& password(Url& url) { return url.password_; }
  static std::string& host(Url& url) { return url.host_; }
  static Url::HostKind& host_kind(Url& url) { return url.host_kind_; }
  static std::optional<uint32_t>& ipv4(Url& url) { return url.ipv4_; }
  static std::optional<std::array<uint16_t, 8>>& ipv6(Url& url) { return url.ipv6_; }
  static std::optional<uint16_t>& port(Url& url) { return url.port_; }
  static std::string& path(Url& url) { return url.path_; }
  static std::optional<std::string>& query(Url& url) { return url.query_; }
  static std::optional<std::string>& fragment(Url& url) { return url.fragment_; }
};

namespace {

constexpr int kEof = -1;

absl::Status Invalid(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("invalid URL: ", why));
}

// ---------------------------------------------------------------------------------------------
// Code point classes and percent-encoding (URL Standard §1.3, §4.1).

bool IsAsciiDigit(int c) { return c >= '0' && c <= '9'; }
bool IsAsciiHexDigit(int c) { return encoding::HexDigitValue(c) >= 0; }
bool IsAsciiAlpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiAlphanumeric(int c) { return IsAsciiAlpha(c) || IsAsciiDigit(c); }

enum class EncodeSet { kC0Control, kFragment, kQuery, kSpecialQuery, kPath, kUserinfo };

// Whether byte `c` of UTF-8 text is percent-encoded in `set`. Bytes >= 0x80 belong to code points
// above U+007E, which every set contains.
constexpr bool InEncodeSet(unsigned char c, EncodeSet set) {
  if (c < 0x20 || c > 0x7E) {
    return true;
  }
  switch (set) {
    case EncodeSet::kC0Control:
      return false;
    case EncodeSet::kFragment:
      return c == ' ' || c == '"' || c == '<' || c == '>' || c == '`';
    case EncodeSet::kQuery:
      return c == ' ' || c == '"' || c == '#' || c == '<' || c == '>';
    case EncodeSet::kSpecialQuery:
      return InEncodeSet(c, EncodeSet::kQuery) || c == '\'';
    case EncodeSet::kPath:
      return InEncodeSet(c, EncodeSet::kQuery) || c == '?' || c == '^' || c == '`' || c == '{' ||
             c == '}';
    case EncodeSet::kUserinfo:
      return InEncodeSet(c, EncodeSet::kPath) || c == '/' || c == ':' || c == ';' || c == '=' ||
             c == '@' || (c >= '[' && c <= '^') || c == '|';
  }
  return true;
}

// InEncodeSet for every byte and set, computed once at compile time: the parser asks per byte.
struct EncodeSetTable {
  // bits[set][c]: whether byte c is in set.
  bool bits[6][256];
};

constexpr EncodeSetTable MakeEncodeSetTable() {
  EncodeSetTable table{};
  for (int set = 0; set < 6; ++set) {
    for (int c = 0; c < 256; ++c) {
      table.bits[set][c] = InEncodeSet(static_cast<unsigned char>(c), static_cast<EncodeSet>(set));
    }
  }
  return table;
}

constexpr EncodeSetTable kEncodeSets = MakeEncodeSetTable();

void AppendPercentEncoded(unsigned char c, EncodeSet set, std::string& out) {
  if (!kEncodeSets.bits[static_cast<int>(set)][c]) {
    out.push_back(static_cast<char>(c));
    return;
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  out.push_back('%');
  out.push_back(kHex[c >> 4]);
  out.push_back(kHex[c & 0xF]);
}

// Replaces every ill-formed UTF-8 subsequence with U+FFFD, one per maximal subpart (the WHATWG
// Encoding Standard's UTF-8 decoder), so that the parser only ever sees scalar values.
std::string SanitizeUtf8(std::string input) {
  if (std::all_of(input.begin(), input.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return input;  // ASCII is always well-formed
  }
  static constexpr absl::string_view kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(input.size());
  size_t i = 0;
  while (i < input.size()) {
    const auto lead = static_cast<unsigned char>(input[i]);
    if (lead < 0x80) {
      out.push_back(static_cast<char>(lead));
      ++i;
      continue;
    }
    int needed = 0;
    unsigned char lower = 0x80;
    unsigned char upper = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      needed = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      needed = 2;
      if (lead == 0xE0) {
        lower = 0xA0;
      } else if (lead == 0xED) {
        upper = 0x9F;
      }
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      needed = 3;
      if (lead == 0xF0) {
        lower = 0x90;
      } else if (lead == 0xF4) {
        upper = 0x8F;
      }
    } else {
      absl::StrAppend(&out, kReplacement);
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool ok = true;
    for (int k = 0; k < needed; ++k, ++j) {
      if (j >= input.size()) {
        ok = false;
        break;
      }
      const auto c = static_cast<unsigned char>(input[j]);
      if (c < lower || c > upper) {
        ok = false;
        break;
      }
      lower = 0x80;
      upper = 0xBF;
    }
    if (ok) {
      out.append(input, i, j - i);
    } else {
      absl::StrAppend(&out, kReplacement);
    }
    i = j;
  }
  return out;
}


bool IsSupportedScheme(absl::string_view scheme) { return scheme == "http" || scheme == "https"; }

uint16_t DefaultPort(absl::string_view scheme) { return scheme == "https" ? 443 : 80; }

// ---------------------------------------------------------------------------------------------
// Hosts (URL Standard §3).

// IPv4 number parser: decimal, "0x"/"0X" hex or leading-zero octal. Values saturate at 2^40 (any
// value that large already makes the address invalid).
std::optional<uint64_t> ParseIpv4Number(absl::string_view input) {
  if (input.empty()) {
    return std::nullopt;
  }
  int radix = 10;
  if (input.size() >= 2 && input[0] == '0' && (input[1] == 'x' || input[1] == 'X')) {
    input.remove_prefix(2);
    radix = 16;
  } else if (input.size() >= 2 && input[0] == '0') {
    input.remove_prefix(1);
    radix = 8;
  }
  if (input.empty()) {
    return 0;
  }
  constexpr uint64_t kSaturated = uint64_t{1} << 40;
  uint64_t value = 0;
  for (const char c : input) {
    int digit = -1;
    if (radix == 16 && IsAsciiHexDigit(c)) {
      digit = encoding::HexDigitValue(c);
    } else if (radix == 10 && IsAsciiDigit(c)) {
      digit = c - '0';
    } else if (radix == 8 && c >= '0' && c <= '7') {
      digit = c - '0';
    }
    if (digit < 0) {
      return std::nullopt;
    }
    value = std::min(kSaturated, value * radix + digit);
  }
  return value;
}

// The "ends in a number" checker: whether the last label (ignoring one trailing dot) is all digits
// or parses as an IPv4 number.
bool EndsInANumber(absl::string_view domain) {
  // The last label, or the one before it when the domain ends in a dot.
  absl::string_view rest = domain;
  if (!rest.empty() && rest.back() == '.') {
    if (rest.size() == 1) {
      return false;
    }
    rest.remove_suffix(1);
  }
  const size_t dot = rest.rfind('.');
  const absl::string_view last = dot == absl::string_view::npos ? rest : rest.substr(dot + 1);
  if (!last.empty() &&
      std::all_of(last.begin(), last.end(), [](char c) { return IsAsciiDigit(c); })) {
    return true;
  }
  return ParseIpv4Number(last).has_value();
}

absl::StatusOr<uint32_t> ParseIpv4(absl::string_view input) {
  std::vector<absl::string_view> parts = absl::StrSplit(input, '.');
  if (parts.back().empty() && parts.size() > 1) {
    parts.pop_back();
  }
  if (parts.size() > 4) {
    return Invalid("IPv4 address with more than four parts");
  }
  std::vector<uint64_t> numbers;
  for (const absl::string_view part : parts) {
    const std::optional<uint64_t> number = ParseIpv4Number(part);
    if (!number) {
      return Invalid("host ends in a number but is not an IPv4 address");
    }
    numbers.push_back(*number);
  }
  for (size_t i = 0; i + 1 < numbers.size(); ++i) {
    if (numbers[i] > 255) {
      return Invalid("IPv4 address part out of range");
    }
  }
  if (numbers.back() >= (uint64_t{1} << (8 * (5 - numbers.size())))) {
    return Invalid("IPv4 address out of range");
  }
  uint64_t address = numbers.back();
  for (size_t i = 0; i + 1 < numbers.size(); ++i) {
    address += numbers[i] << (8 * (3 - i));
  }
  return static_cast<uint32_t>(address);
}

using Ipv6Address = std::array<uint16_t, 8>;

absl::StatusOr<Ipv6Address> ParseIpv6(absl::string_view input) {
  std::array<uint16_t, 8> address{};
  int piece_index = 0;
  std::optional<int> compress;
  size_t pointer = 0;
  const auto at = [&](size_t i) -> int {
    return i < input.size() ? static_cast<unsigned char>(input[i]) : kEof;
  };
  const auto bad_address = [] { return Invalid("bad IPv6 address"); };
  if (at(pointer) == ':') {
    if (at(pointer + 1) != ':') {
      return bad_address();
    }
    pointer += 2;
    ++piece_index;
    compress = piece_index;
  }
  while (at(pointer) != kEof) {
    if (piece_index == 8) {
      return bad_address();
    }
    if (at(pointer) == ':') {
      if (compress) {
        return bad_address();
      }
      ++pointer;
      ++piece_index;
      compress = piece_index;
      continue;
    }
    uint32_t value = 0;
    size_t length = 0;
    while (length < 4 && IsAsciiHexDigit(at(pointer))) {
      value = value * 0x10 + encoding::HexDigitValue(at(pointer));
      ++pointer;
      ++length;
    }
    if (at(pointer) == '.') {
      if (length == 0) {
        return bad_address();
      }
      pointer -= length;
      if (piece_index > 6) {
        return bad_address();
      }
      int numbers_seen = 0;
      while (at(pointer) != kEof) {
        std::optional<uint32_t> ipv4_piece;
        if (numbers_seen > 0) {
          if (at(pointer) == '.' && numbers_seen < 4) {
            ++pointer;
          } else {
            return bad_address();
          }
        }
        if (!IsAsciiDigit(at(pointer))) {
          return bad_address();
        }
        while (IsAsciiDigit(at(pointer))) {
          const uint32_t number = at(pointer) - '0';
          if (!ipv4_piece) {
            ipv4_piece = number;
          } else if (*ipv4_piece == 0) {
            return bad_address();
          } else {
            ipv4_piece = *ipv4_piece * 10 + number;
          }
          if (*ipv4_piece > 255) {
            return bad_address();
          }
          ++pointer;
        }
        address[piece_index] = static_cast<uint16_t>(address[piece_index] * 0x100 + *ipv4_piece);
        ++numbers_seen;
        if (numbers_seen == 2 || numbers_seen == 4) {
          ++piece_index;
        }
      }
      if (numbers_seen != 4) {
        return bad_address();
      }
      break;
    }
    if (at(pointer) == ':') {
      ++pointer;
      if (at(pointer) == kEof) {
        return bad_address();
      }
    } else if (at(pointer) != kEof) {
      return bad_address();
    }
    address[piece_index] = static_cast<uint16_t>(value);
    ++piece_index;
  }
  if (compress) {
    int swaps = piece_index - *compress;
    piece_index = 7;
    while (piece_index != 0 && swaps > 0) {
      std::swap(address[piece_index], address[*compress + swaps - 1]);
      --piece_index;
      --swaps;
    }
  } else if (piece_index != 8) {
    return bad_address();
  }
  return address;
}

// ICU's UTS #46 object. uidna_close is its only legitimate release.
struct UidnaCloser {
  void operator()(UIDNA* uidna) const { uidna_close(uidna); }
};
using UidnaPtr = std::unique_ptr<UIDNA, UidnaCloser>;

// The one UTS #46 processor, configured as the URL Standard's "domain to ASCII" requires
// (CheckBidi, CheckJoiners, nontransitional, UseSTD3ASCIIRules=false). ICU documents a UIDNA as
// safe for concurrent use once created. Deliberately never destroyed (no exit-time races with
// threads still parsing); null when ICU could not create it.
const UIDNA* SharedUts46() {
  static const UidnaPtr* const uts46 = [] {
    UErrorCode status = U_ZERO_ERROR;
    UidnaPtr uidna(uidna_openUTS46(UIDNA_CHECK_BIDI | UIDNA_CHECK_CONTEXTJ |
                                       UIDNA_NONTRANSITIONAL_TO_ASCII |
                                       UIDNA_NONTRANSITIONAL_TO_UNICODE,
                                   &status));
    if (U_FAILURE(status)) {
      uidna.reset();
    }
    return new UidnaPtr(std::move(uidna));
  }();
  return uts46->get();
}

// UTS #46 errors the URL Standard does not treat as failures: CheckHyphens=false and
// VerifyDnsLength=false.
constexpr uint32_t kIgnoredIdnaErrors =
    UIDNA_ERROR_EMPTY_LABEL | UIDNA_ERROR_LABEL_TOO_LONG | UIDNA_ERROR_DOMAIN_NAME_TOO_LONG |
    UIDNA_ERROR_LEADING_HYPHEN | UIDNA_ERROR_TRAILING_HYPHEN | UIDNA_ERROR_HYPHEN_3_4;

// Forbidden domain code points: the forbidden host code points (NUL, tab, LF, CR, space and
// # / : < > ? @ [ \ ] ^ |), the other C0 controls, '%' and U+007F.
bool IsForbiddenDomainCodePoint(unsigned char c) {
  if (c < 0x20 || c == 0x7F) {
    return true;
  }
  switch (c) {
    case ' ':
    case '#':
    case '/':
    case ':':
    case '<':
    case '>':
    case '?':
    case '@':
    case '[':
    case '\\':
    case ']':
    case '^':
    case '|':
    case '%':
      return true;
    default:
      return false;
  }
}

// The URL Standard's "domain to ASCII" with beStrict = false. An ASCII domain is only lowercased:
// UTS #46 failures on ASCII input (such as an "xn--" label with invalid Punycode) are validation
// errors, not failures, for web compatibility (whatwg/url#914, web-platform-tests#60476, 2026).
// Non-ASCII domains go through ICU.
absl::StatusOr<std::string> DomainToAscii(absl::string_view domain) {
  const bool is_ascii =
      std::all_of(domain.begin(), domain.end(), [](char c) { return absl::ascii_isascii(c); });
  std::string result;
  if (is_ascii) {
    result = absl::AsciiStrToLower(domain);
  } else {
    const UIDNA* uts46 = SharedUts46();
    if (uts46 == nullptr) {
      return absl::InternalError("ICU UTS #46 processor unavailable");
    }
    if (domain.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max() / 4)) {
      return Invalid("host too long");
    }
    result.resize(std::max<size_t>(domain.size() * 2 + 16, 64));
    for (int attempt = 0; attempt < 2; ++attempt) {
      UIDNAInfo info = UIDNA_INFO_INITIALIZER;
      UErrorCode status = U_ZERO_ERROR;
      const int32_t length = uidna_nameToASCII_UTF8(
          uts46, domain.data(), static_cast<int32_t>(domain.size()), result.data(),
          static_cast<int32_t>(result.size()), &info, &status);
      if (status == U_BUFFER_OVERFLOW_ERROR && attempt == 0) {
        result.resize(static_cast<size_t>(length));
        continue;
      }
      if (U_FAILURE(status)) {
        return Invalid(absl::StrCat("IDNA processing failed: ", u_errorName(status)));
      }
      if ((info.errors & ~kIgnoredIdnaErrors) != 0) {
        return Invalid(absl::StrCat("IDNA error 0x", absl::Hex(info.errors & ~kIgnoredIdnaErrors),
                                    " in host"));
      }
      result.resize(static_cast<size_t>(length));
      break;
    }
  }
  if (result.empty()) {
    return Invalid("empty host");
  }
  for (const char c : result) {
    if (IsForbiddenDomainCodePoint(static_cast<unsigned char>(c))) {
      return Invalid("forbidden code point in host");
    }
  }
  return result;
}

// The host parser for special schemes; sets host, host_kind, ipv4, ipv6 of `url`.
absl::Status ParseHost(absl::string_view input, Url& url) {
  if (absl::StartsWith(input, "[")) {
    if (!absl::EndsWith(input, "]")) {
      return Invalid("unterminated IPv6 address");
    }
    ASSIGN_OR_RETURN(const Ipv6Address address, ParseIpv6(input.substr(1, input.size() - 2)));
    UrlBuilder::host(url) = absl::StrCat("[", SerializeIpv6(address), "]");
    UrlBuilder::host_kind(url) = Url::HostKind::kIpv6;
    UrlBuilder::ipv6(url) = address;
    UrlBuilder::ipv4(url).reset();
    return absl::OkStatus();
  }
  const std::string domain = input.find('%') == absl::string_view::npos
                                 ? std::string(input)
                                 : encoding::PercentDecode(input);
  ASSIGN_OR_RETURN(std::string ascii_domain, DomainToAscii(domain));
  UrlBuilder::ipv6(url).reset();
  if (EndsInANumber(ascii_domain)) {
    ASSIGN_OR_RETURN(const uint32_t address, ParseIpv4(ascii_domain));
    UrlBuilder::host(url) = SerializeIpv4(address);
    UrlBuilder::host_kind(url) = Url::HostKind::kIpv4;
    UrlBuilder::ipv4(url) = address;
    return absl::OkStatus();
  }
  UrlBuilder::host(url) = std::move(ascii_domain);
  UrlBuilder::host_kind(url) = Url::HostKind::kDomain;
  UrlBuilder::ipv4(url).reset();
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// The basic URL parser (URL Standard §4.4), specialised to special schemes without a state
// override: every URL it produces is http or https, so "url is special" always holds once the
// scheme is known, and no file-scheme or opaque-path states are needed.

bool IsSingleDotSegment(absl::string_view s) {
  return s == "." || absl::EqualsIgnoreCase(s, "%2e");
}

bool IsDoubleDotSegment(absl::string_view s) {
  return s == ".." || absl::EqualsIgnoreCase(s, ".%2e") || absl::EqualsIgnoreCase(s, "%2e.") ||
         absl::EqualsIgnoreCase(s, "%2e%2e");
}

std::vector<std::string> SplitPath(absl::string_view path) {
  // A special URL's serialized path is "/" followed by its segments joined by "/"; a segment never
  // contains a literal "/", so splitting is exact.
  if (!path.empty() && path[0] == '/') {
    path.remove_prefix(1);
  }
  return absl::StrSplit(path, '/');
}

enum class State {
  kSchemeStart,
  kScheme,
  kNoScheme,
  kSpecialRelativeOrAuthority,
  kRelative,
  kRelativeSlash,
  kSpecialAuthoritySlashes,
  kSpecialAuthorityIgnoreSlashes,
  kAuthority,
  kHost,
  kPort,
  kPathStart,
  kPath,
  kQuery,
  kFragment,
};

class Parser {
 public:
  Parser(std::string input, const Url* base) : input_(std::move(input)), base_(base) {
    buffer_.reserve(input_.size());
    path_.reserve(8);
  }

  absl::StatusOr<Url> Run() {
    State state = State::kSchemeStart;
    for (pointer_ = 0; pointer_ <= static_cast<int64_t>(input_.size()); ++pointer_) {
      const int c = pointer_ < static_cast<int64_t>(input_.size())
                        ? static_cast<unsigned char>(input_[pointer_])
                        : kEof;
      ASSIGN_OR_RETURN(state, Step(state, c));
    }
    std::string& path = UrlBuilder::path(url_);
    size_t length = path_.size() + 1;
    for (const std::string& segment : path_) {
      length += segment.size();
    }
    path.clear();
    path.reserve(length);
    path.push_back('/');
    for (size_t i = 0; i < path_.size(); ++i) {
      if (i != 0) {
        path.push_back('/');
      }
      path.append(path_[i]);
    }
    return std::move(url_);
  }

 private:
  // The code points after the current one start with `s`.
  bool RemainingStartsWith(absl::string_view s) const {
    return absl::string_view(input_).substr(pointer_ + 1).substr(0, s.size()) == s;
  }

  static bool IsSlash(int c) { return c == '/' || c == '\\'; }

  absl::StatusOr<State> Step(State state, int c) {
    switch (state) {
      case State::kSchemeStart:
        if (IsAsciiAlpha(c)) {
          buffer_.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
          return State::kScheme;
        }
        --pointer_;
        return State::kNoScheme;

      case State::kScheme:
        if (IsAsciiAlphanumeric(c) || c == '+' || c == '-' || c == '.') {
          buffer_.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
          return State::kScheme;
        }
        if (c == ':') {
          if (!IsSupportedScheme(buffer_)) {
            return absl::UnimplementedError(absl::StrCat("scheme not supported: ", buffer_));
          }
          UrlBuilder::scheme(url_) = std::move(buffer_);
          buffer_.clear();
          if (base_ != nullptr && base_->scheme() == url_.scheme()) {
            return State::kSpecialRelativeOrAuthority;
          }
          return State::kSpecialAuthoritySlashes;
        }
        buffer_.clear();
        pointer_ = -1;
        return State::kNoScheme;

      case State::kNoScheme:
        if (base_ == nullptr) {
          return Invalid("relative URL without a base");
        }
        --pointer_;
        return State::kRelative;

      case State::kSpecialRelativeOrAuthority:
        if (c == '/' && RemainingStartsWith("/")) {
          ++pointer_;
          return State::kSpecialAuthorityIgnoreSlashes;
        }
        --pointer_;
        return State::kRelative;

      case State::kRelative:
        UrlBuilder::scheme(url_) = base_->scheme();
        if (IsSlash(c)) {
          return State::kRelativeSlash;
        }
        CopyAuthorityFromBase();
        path_ = SplitPath(base_->path());
        UrlBuilder::query(url_) = base_->query();
        if (c == '?') {
          StartQuery();
          return State::kQuery;
        }
        if (c == '#') {
          StartFragment();
          return State::kFragment;
        }
        if (c != kEof) {
          UrlBuilder::query(url_).reset();
          ShortenPath();
          --pointer_;
          return State::kPath;
        }
        return State::kRelative;

      case State::kRelativeSlash:
        if (IsSlash(c)) {
          return State::kSpecialAuthorityIgnoreSlashes;
        }
        CopyAuthorityFromBase();
        --pointer_;
        return State::kPath;

      case State::kSpecialAuthoritySlashes:
        if (c == '/' && RemainingStartsWith("/")) {
          ++pointer_;
        } else {
          --pointer_;
        }
        return State::kSpecialAuthorityIgnoreSlashes;

      case State::kSpecialAuthorityIgnoreSlashes:
        if (!IsSlash(c)) {
          authority_start_ = pointer_;
          --pointer_;
          return State::kAuthority;
        }
        return State::kSpecialAuthorityIgnoreSlashes;

      case State::kAuthority: {
        // The standard's buffer is the input from authority_start_ up to the pointer; it is read
        // in place rather than copied code point by code point.
        const auto buffered = [&] {
          return absl::string_view(input_).substr(static_cast<size_t>(authority_start_),
                                                  static_cast<size_t>(pointer_ - authority_start_));
        };
        if (c == '@') {
          const auto append_userinfo = [&](absl::string_view text) {
            for (const char b : text) {
              if (b == ':' && !password_token_seen_) {
                password_token_seen_ = true;
                continue;
              }
              AppendPercentEncoded(
                  static_cast<unsigned char>(b), EncodeSet::kUserinfo,
                  password_token_seen_ ? UrlBuilder::password(url_) : UrlBuilder::username(url_));
            }
          };
          if (at_sign_seen_) {
            append_userinfo("%40");
          }
          at_sign_seen_ = true;
          append_userinfo(buffered());
          authority_start_ = pointer_ + 1;
          return State::kAuthority;
        }
        if (c == kEof || IsSlash(c) || c == '?' || c == '#') {
          const int64_t length = pointer_ - authority_start_;
          if (at_sign_seen_ && length == 0) {
            return Invalid("credentials without a host");
          }
          pointer_ -= length + 1;
          host_start_ = pointer_ + 1;
          return State::kHost;
        }
        return State::kAuthority;
      }

      case State::kHost: {
        // The standard's buffer: the input from host_start_ up to the pointer, read in place.
        const absl::string_view buffered = absl::string_view(input_).substr(
            static_cast<size_t>(host_start_), static_cast<size_t>(pointer_ - host_start_));
        if (c == ':' && !inside_brackets_) {
          if (buffered.empty()) {
            return Invalid("empty host");
          }
          RETURN_IF_ERROR(ParseHost(buffered, url_));
          return State::kPort;
        }
        if (c == kEof || IsSlash(c) || c == '?' || c == '#') {
          --pointer_;
          if (buffered.empty()) {
            return Invalid("empty host");
          }
          RETURN_IF_ERROR(ParseHost(buffered, url_));
          return State::kPathStart;
        }
        if (c == '[') {
          inside_brackets_ = true;
        } else if (c == ']') {
          inside_brackets_ = false;
        }
        return State::kHost;
      }

      case State::kPort:
        if (IsAsciiDigit(c)) {
          buffer_.push_back(static_cast<char>(c));
          return State::kPort;
        }
        if (c == kEof || IsSlash(c) || c == '?' || c == '#') {
          if (!buffer_.empty()) {
            uint32_t port = 0;
            for (const char digit : buffer_) {
              port = port * 10 + static_cast<uint32_t>(digit - '0');
              if (port > 65535) {
                return Invalid("port out of range");
              }
            }
            if (port == DefaultPort(url_.scheme())) {
              UrlBuilder::port(url_).reset();
            } else {
              UrlBuilder::port(url_) = static_cast<uint16_t>(port);
            }
            buffer_.clear();
          }
          --pointer_;
          return State::kPathStart;
        }
        return Invalid("bad port");

      case State::kPathStart:
        if (!IsSlash(c)) {
          --pointer_;
        }
        return State::kPath;

      case State::kPath:
        if (c == kEof || IsSlash(c) || c == '?' || c == '#') {
          if (IsDoubleDotSegment(buffer_)) {
            ShortenPath();
            if (!IsSlash(c)) {
              path_.emplace_back();
            }
          } else if (IsSingleDotSegment(buffer_) && !IsSlash(c)) {
            path_.emplace_back();
          } else if (!IsSingleDotSegment(buffer_)) {
            path_.push_back(std::move(buffer_));
          }
          buffer_.clear();
          if (c == '?') {
            StartQuery();
            return State::kQuery;
          }
          if (c == '#') {
            StartFragment();
            return State::kFragment;
          }
          return State::kPath;
        }
        AppendPercentEncoded(static_cast<unsigned char>(c), EncodeSet::kPath, buffer_);
        return State::kPath;

      case State::kQuery:
        if (c == '#') {
          StartFragment();
          return State::kFragment;
        }
        if (c != kEof) {
          AppendPercentEncoded(static_cast<unsigned char>(c), EncodeSet::kSpecialQuery,
                               *UrlBuilder::query(url_));
        }
        return State::kQuery;

      case State::kFragment:
        if (c != kEof) {
          AppendPercentEncoded(static_cast<unsigned char>(c), EncodeSet::kFragment,
                               *UrlBuilder::fragment(url_));
        }
        return State::kFragment;
    }
    return absl::InternalError("URL parser reached an unknown state");
  }

  void CopyAuthorityFromBase() {
    UrlBuilder::username(url_) = base_->username();
    UrlBuilder::password(url_) = base_->password();
    UrlBuilder::host(url_) = base_->host();
    UrlBuilder::host_kind(url_) = base_->host_kind();
    UrlBuilder::ipv4(url_) = base_->ipv4();
    UrlBuilder::ipv6(url_) = base_->ipv6();
    UrlBuilder::port(url_) = base_->port();
  }

  // query / fragment become "" with room for the rest of the input.
  void StartQuery() {
    std::string& query = UrlBuilder::query(url_).emplace();
    query.reserve(input_.size() - static_cast<size_t>(pointer_));
  }
  void StartFragment() {
    std::string& fragment = UrlBuilder::fragment(url_).emplace();
    fragment.reserve(input_.size() - static_cast<size_t>(pointer_));
  }

  void ShortenPath() {
    if (!path_.empty()) {
      path_.pop_back();
    }
  }

  const std::string input_;
  const Url* const base_;
  int64_t pointer_ = 0;
  // Where the authority state's buffer starts in input_.
  int64_t authority_start_ = 0;
  // Where the host state's buffer starts in input_.
  int64_t host_start_ = 0;
  std::string buffer_;
  bool at_sign_seen_ = false;
  bool password_token_seen_ = false;
  bool inside_brackets_ = false;
  std::vector<std::string> path_;
  Url url_;
};

}  // namespace

std::string PreprocessInput(absl::string_view input) {
  size_t begin = 0;
  size_t end = input.size();
  while (begin < end && static_cast<unsigned char>(input[begin]) <= 0x20) {
    ++begin;
  }
  while (end > begin && static_cast<unsigned char>(input[end - 1]) <= 0x20) {
    --end;
  }
  const absl::string_view trimmed = input.substr(begin, end - begin);
  std::string stripped;
  if (std::none_of(trimmed.begin(), trimmed.end(),
                   [](char c) { return c == '\t' || c == '\n' || c == '\r'; })) {
    stripped.assign(trimmed.data(), trimmed.size());
  } else {
    stripped.reserve(trimmed.size());
    for (const char c : trimmed) {
      if (c != '\t' && c != '\n' && c != '\r') {
        stripped.push_back(c);
      }
    }
  }
  return SanitizeUtf8(std::move(stripped));
}

uint16_t Url::effective_port() const { return port_.value_or(DefaultPort(scheme_)); }

std::string Url::href() const {
  std::string out = absl::StrCat(scheme_, "://");
  if (has_credentials()) {
    absl::StrAppend(&out, username_);
    if (!password_.empty()) {
      absl::StrAppend(&out, ":", password_);
    }
    out.push_back('@');
  }
  absl::StrAppend(&out, host_);
  if (port_) {
    absl::StrAppend(&out, ":", *port_);
  }
  absl::StrAppend(&out, path_);
  if (query_) {
    absl::StrAppend(&out, "?", *query_);
  }
  if (fragment_) {
    absl::StrAppend(&out, "#", *fragment_);
  }
  return out;
}

std::string Url::origin() const {
  std::string out = absl::StrCat(scheme_, "://", host_);
  if (port_) {
    absl::StrAppend(&out, ":", *port_);
  }
  return out;
}

absl::StatusOr<Url> ParseUrl(absl::string_view input, const Url* base) {
  return Parser(PreprocessInput(input), base).Run();
}

std::string SchemeOf(absl::string_view input) {
  const std::string text = PreprocessInput(input);
  if (text.empty() || !IsAsciiAlpha(text[0])) {
    return "";
  }
  for (size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ':') {
      return absl::AsciiStrToLower(absl::string_view(text).substr(0, i));
    }
    if (!IsAsciiAlphanumeric(c) && c != '+' && c != '-' && c != '.') {
      return "";
    }
  }
  return "";
}

std::string SerializeIpv4(uint32_t address) {
  return absl::StrCat(address >> 24, ".", (address >> 16) & 0xFF, ".", (address >> 8) & 0xFF, ".",
                      address & 0xFF);
}

std::string SerializeIpv6(const std::array<uint16_t, 8>& address) {
  // Compress the first longest run of two or more zero pieces.
  int compress = -1;
  int longest = 1;
  for (int i = 0; i < 8;) {
    if (address[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && address[j] == 0) {
      ++j;
    }
    if (j - i > longest) {
      longest = j - i;
      compress = i;
    }
    i = j;
  }
  std::string out;
  bool ignore0 = false;
  for (int i = 0; i < 8; ++i) {
    if (ignore0 && address[i] == 0) {
      continue;
    }
    ignore0 = false;
    if (compress == i) {
      out.append(i == 0 ? "::" : ":");
      ignore0 = true;
      continue;
    }
    absl::StrAppend(&out, absl::Hex(address[i]));
    if (i != 7) {
      out.push_back(':');
    }
  }
  return out;
}

}  // namespace portcullis::url
