#include "verifier-service/src/html/encoding_sniffer.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "common/encoding/utf8.h"
#include "unicode/ucnv.h"
#include "unicode/ucnv_cb.h"
#include "unicode/ustring.h"

namespace portcullis::verifier::html {
namespace {

struct Label {
  absl::string_view label;
  absl::string_view encoding;
};

// The WHATWG Encoding Standard's labels (https://encoding.spec.whatwg.org/#names-and-labels),
// sorted by label for a binary search.
constexpr Label kLabels[] = {
    {"866", "IBM866"},
    {"ansi_x3.4-1968", "windows-1252"},
    {"arabic", "ISO-8859-6"},
    {"ascii", "windows-1252"},
    {"asmo-708", "ISO-8859-6"},
    {"big5", "Big5"},
    {"big5-hkscs", "Big5"},
    {"chinese", "GBK"},
    {"cn-big5", "Big5"},
    {"cp1250", "windows-1250"},
    {"cp1251", "windows-1251"},
    {"cp1252", "windows-1252"},
    {"cp1253", "windows-1253"},
    {"cp1254", "windows-1254"},
    {"cp1255", "windows-1255"},
    {"cp1256", "windows-1256"},
    {"cp1257", "windows-1257"},
    {"cp1258", "windows-1258"},
    {"cp819", "windows-1252"},
    {"cp866", "IBM866"},
    {"csbig5", "Big5"},
    {"cseuckr", "EUC-KR"},
    {"cseucpkdfmtjapanese", "EUC-JP"},
    {"csgb2312", "GBK"},
    {"csibm866", "IBM866"},
    {"csiso2022jp", "ISO-2022-JP"},
    {"csiso2022kr", "replacement"},
    {"csiso58gb231280", "GBK"},
    {"csiso88596e", "ISO-8859-6"},
    {"csiso88596i", "ISO-8859-6"},
    {"csiso88598e", "ISO-8859-8"},
    {"csiso88598i", "ISO-8859-8-I"},
    {"csisolatin1", "windows-1252"},
    {"csisolatin2", "ISO-8859-2"},
    {"csisolatin3", "ISO-8859-3"},
    {"csisolatin4", "ISO-8859-4"},
    {"csisolatin5", "windows-1254"},
    {"csisolatin6", "ISO-8859-10"},
    {"csisolatin9", "ISO-8859-15"},
    {"csisolatinarabic", "ISO-8859-6"},
    {"csisolatincyrillic", "ISO-8859-5"},
    {"csisolatingreek", "ISO-8859-7"},
    {"csisolatinhebrew", "ISO-8859-8"},
    {"cskoi8r", "KOI8-R"},
    {"csksc56011987", "EUC-KR"},
    {"csmacintosh", "macintosh"},
    {"csshiftjis", "Shift_JIS"},
    {"csunicode", "UTF-16LE"},
    {"cyrillic", "ISO-8859-5"},
    {"dos-874", "windows-874"},
    {"ecma-114", "ISO-8859-6"},
    {"ecma-118", "ISO-8859-7"},
    {"elot_928", "ISO-8859-7"},
    {"euc-jp", "EUC-JP"},
    {"euc-kr", "EUC-KR"},
    {"gb18030", "gb18030"},
    {"gb2312", "GBK"},
    {"gb_2312", "GBK"},
    {"gb_2312-80", "GBK"},
    {"gbk", "GBK"},
    {"greek", "ISO-8859-7"},
    {"greek8", "ISO-8859-7"},
    {"hebrew", "ISO-8859-8"},
    {"hz-gb-2312", "replacement"},
    {"ibm819", "windows-1252"},
    {"ibm866", "IBM866"},
    {"iso-10646-ucs-2", "UTF-16LE"},
    {"iso-2022-cn", "replacement"},
    {"iso-2022-cn-ext", "replacement"},
    {"iso-2022-jp", "ISO-2022-JP"},
    {"iso-2022-kr", "replacement"},
    {"iso-8859-1", "windows-1252"},
    {"iso-8859-10", "ISO-8859-10"},
    {"iso-8859-11", "windows-874"},
    {"iso-8859-13", "ISO-8859-13"},
    {"iso-8859-14", "ISO-8859-14"},
    {"iso-8859-15", "ISO-8859-15"},
    {"iso-8859-16", "ISO-8859-16"},
    {"iso-8859-2", "ISO-8859-2"},
    {"iso-8859-3", "ISO-8859-3"},
    {"iso-8859-4", "ISO-8859-4"},
    {"iso-8859-5", "ISO-8859-5"},
    {"iso-8859-6", "ISO-8859-6"},
    {"iso-8859-6-e", "ISO-8859-6"},
    {"iso-8859-6-i", "ISO-8859-6"},
    {"iso-8859-7", "ISO-8859-7"},
    {"iso-8859-8", "ISO-8859-8"},
    {"iso-8859-8-e", "ISO-8859-8"},
    {"iso-8859-8-i", "ISO-8859-8-I"},
    {"iso-8859-9", "windows-1254"},
    {"iso-ir-100", "windows-1252"},
    {"iso-ir-101", "ISO-8859-2"},
    {"iso-ir-109", "ISO-8859-3"},
    {"iso-ir-110", "ISO-8859-4"},
    {"iso-ir-126", "ISO-8859-7"},
    {"iso-ir-127", "ISO-8859-6"},
    {"iso-ir-138", "ISO-8859-8"},
    {"iso-ir-144", "ISO-8859-5"},
    {"iso-ir-148", "windows-1254"},
    {"iso-ir-149", "EUC-KR"},
    {"iso-ir-157", "ISO-8859-10"},
    {"iso-ir-58", "GBK"},
    {"iso8859-1", "windows-1252"},
    {"iso8859-10", "ISO-8859-10"},
    {"iso8859-11", "windows-874"},
    {"iso8859-13", "ISO-8859-13"},
    {"iso8859-14", "ISO-8859-14"},
    {"iso8859-15", "ISO-8859-15"},
    {"iso8859-2", "ISO-8859-2"},
    {"iso8859-3", "ISO-8859-3"},
    {"iso8859-4", "ISO-8859-4"},
    {"iso8859-5", "ISO-8859-5"},
    {"iso8859-6", "ISO-8859-6"},
    {"iso8859-7", "ISO-8859-7"},
    {"iso8859-8", "ISO-8859-8"},
    {"iso8859-9", "windows-1254"},
    {"iso88591", "windows-1252"},
    {"iso885910", "ISO-8859-10"},
    {"iso885911", "windows-874"},
    {"iso885913", "ISO-8859-13"},
    {"iso885914", "ISO-8859-14"},
    {"iso885915", "ISO-8859-15"},
    {"iso88592", "ISO-8859-2"},
    {"iso88593", "ISO-8859-3"},
    {"iso88594", "ISO-8859-4"},
    {"iso88595", "ISO-8859-5"},
    {"iso88596", "ISO-8859-6"},
    {"iso88597", "ISO-8859-7"},
    {"iso88598", "ISO-8859-8"},
    {"iso88599", "windows-1254"},
    {"iso_8859-1", "windows-1252"},
    {"iso_8859-15", "ISO-8859-15"},
    {"iso_8859-1:1987", "windows-1252"},
    {"iso_8859-2", "ISO-8859-2"},
    {"iso_8859-2:1987", "ISO-8859-2"},
    {"iso_8859-3", "ISO-8859-3"},
    {"iso_8859-3:1988", "ISO-8859-3"},
    {"iso_8859-4", "ISO-8859-4"},
    {"iso_8859-4:1988", "ISO-8859-4"},
    {"iso_8859-5", "ISO-8859-5"},
    {"iso_8859-5:1988", "ISO-8859-5"},
    {"iso_8859-6", "ISO-8859-6"},
    {"iso_8859-6:1987", "ISO-8859-6"},
    {"iso_8859-7", "ISO-8859-7"},
    {"iso_8859-7:1987", "ISO-8859-7"},
    {"iso_8859-8", "ISO-8859-8"},
    {"iso_8859-8:1988", "ISO-8859-8"},
    {"iso_8859-9", "windows-1254"},
    {"iso_8859-9:1989", "windows-1254"},
    {"koi", "KOI8-R"},
    {"koi8", "KOI8-R"},
    {"koi8-r", "KOI8-R"},
    {"koi8-ru", "KOI8-U"},
    {"koi8-u", "KOI8-U"},
    {"koi8_r", "KOI8-R"},
    {"korean", "EUC-KR"},
    {"ks_c_5601-1987", "EUC-KR"},
    {"ks_c_5601-1989", "EUC-KR"},
    {"ksc5601", "EUC-KR"},
    {"ksc_5601", "EUC-KR"},
    {"l1", "windows-1252"},
    {"l2", "ISO-8859-2"},
    {"l3", "ISO-8859-3"},
    {"l4", "ISO-8859-4"},
    {"l5", "windows-1254"},
    {"l6", "ISO-8859-10"},
    {"l9", "ISO-8859-15"},
    {"latin1", "windows-1252"},
    {"latin2", "ISO-8859-2"},
    {"latin3", "ISO-8859-3"},
    {"latin4", "ISO-8859-4"},
    {"latin5", "windows-1254"},
    {"latin6", "ISO-8859-10"},
    {"logical", "ISO-8859-8-I"},
    {"mac", "macintosh"},
    {"macintosh", "macintosh"},
    {"ms932", "Shift_JIS"},
    {"ms_kanji", "Shift_JIS"},
    {"replacement", "replacement"},
    {"shift-jis", "Shift_JIS"},
    {"shift_jis", "Shift_JIS"},
    {"sjis", "Shift_JIS"},
    {"sun_eu_greek", "ISO-8859-7"},
    {"tis-620", "windows-874"},
    {"ucs-2", "UTF-16LE"},
    {"unicode", "UTF-16LE"},
    {"unicode-1-1-utf-8", "UTF-8"},
    {"unicode11utf8", "UTF-8"},
    {"unicode20utf8", "UTF-8"},
    {"unicodefeff", "UTF-16LE"},
    {"unicodefffe", "UTF-16BE"},
    {"us-ascii", "windows-1252"},
    {"utf-16", "UTF-16LE"},
    {"utf-16be", "UTF-16BE"},
    {"utf-16le", "UTF-16LE"},
    {"utf-8", "UTF-8"},
    {"utf8", "UTF-8"},
    {"visual", "ISO-8859-8"},
    {"windows-1250", "windows-1250"},
    {"windows-1251", "windows-1251"},
    {"windows-1252", "windows-1252"},
    {"windows-1253", "windows-1253"},
    {"windows-1254", "windows-1254"},
    {"windows-1255", "windows-1255"},
    {"windows-1256", "windows-1256"},
    {"windows-1257", "windows-1257"},
    {"windows-1258", "windows-1258"},
    {"windows-31j", "Shift_JIS"},
    {"windows-874", "windows-874"},
    {"windows-949", "EUC-KR"},
    {"x-cp1250", "windows-1250"},
    {"x-cp1251", "windows-1251"},
    {"x-cp1252", "windows-1252"},
    {"x-cp1253", "windows-1253"},
    {"x-cp1254", "windows-1254"},
    {"x-cp1255", "windows-1255"},
    {"x-cp1256", "windows-1256"},
    {"x-cp1257", "windows-1257"},
    {"x-cp1258", "windows-1258"},
    {"x-euc-jp", "EUC-JP"},
    {"x-gbk", "GBK"},
    {"x-mac-cyrillic", "x-mac-cyrillic"},
    {"x-mac-roman", "macintosh"},
    {"x-mac-ukrainian", "x-mac-cyrillic"},
    {"x-sjis", "Shift_JIS"},
    {"x-unicode20utf8", "UTF-8"},
    {"x-user-defined", "x-user-defined"},
    {"x-x-big5", "Big5"},
};

// ICU converters whose name is not the encoding's (ICU knows the others by their WHATWG names;
// "replacement" and "x-user-defined" are decoded by hand).
struct IcuName {
  absl::string_view encoding;
  const char* converter;
};
constexpr IcuName kIcuNames[] = {
    {"ISO-8859-8-I", "ISO-8859-8"},  // the same bytes; only the display direction differs
    {"ISO-8859-16", "iso-8859_16-2001"},
    {"GBK", "windows-936-2000"},
    {"Big5", "Big5-HKSCS"},          // WHATWG Big5 includes the HKSCS extensions
    {"Shift_JIS", "windows-31j"},    // WHATWG Shift_JIS is Microsoft's code page 932
    {"EUC-KR", "windows-949-2000"},  // WHATWG EUC-KR is Microsoft's code page 949 (ICU's EUC-KR
                                     // is the narrower ibm-970)
};

constexpr absl::string_view kDefaultEncoding = "windows-1252";

bool IsAsciiWhitespace(char c) {
  return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' ';
}

char Lower(char c) { return absl::ascii_tolower(static_cast<unsigned char>(c)); }

// An ill-formed or unmapped sequence becomes U+FFFD. In a single-byte encoding an unmapped byte
// in 0x80–0x9F is the C1 control of the same value, as the WHATWG single-byte indexes map it.
void ReplaceInvalid(const void* context, UConverterToUnicodeArgs* args, const char* units,
                    int32_t length, UConverterCallbackReason reason, UErrorCode* error) {
  if (reason != UCNV_UNASSIGNED && reason != UCNV_ILLEGAL && reason != UCNV_IRREGULAR) {
    return;
  }
  const bool single_byte = context != nullptr;
  UChar replacement = 0xFFFD;
  if (single_byte && length == 1) {
    const unsigned char byte = static_cast<unsigned char>(units[0]);
    if (byte >= 0x80 && byte <= 0x9F) {
      replacement = byte;
    }
  }
  *error = U_ZERO_ERROR;
  ucnv_cbToUWriteUChars(args, &replacement, 1, 0, error);
}

struct ConverterCloser {
  void operator()(UConverter* converter) const { ucnv_close(converter); }
};

// UTF-16 (ICU's UChar) to UTF-8; a lone surrogate becomes U+FFFD.
std::string ToUtf8(const std::vector<UChar>& text, int32_t length) {
  std::string utf8(static_cast<size_t>(length) * 3, '\0');
  int32_t written = 0;
  UErrorCode error = U_ZERO_ERROR;
  u_strToUTF8WithSub(utf8.data(), static_cast<int32_t>(utf8.size()), &written, text.data(), length,
                     0xFFFD, nullptr, &error);
  utf8.resize(U_SUCCESS(error) ? static_cast<size_t>(written) : 0);
  return utf8;
}

// Where ICU's table gives a character for a byte the WHATWG decoder treats as an error: ICU's
// Microsoft tables map the lone bytes 0x80 and 0xFF of code page 949, and 0xFF of 936, to a
// character (U+0080, private use), which WHATWG EUC-KR and GBK decode as U+FFFD.
struct Fixup {
  absl::string_view encoding;
  UChar from;
};
constexpr Fixup kFixups[] = {{"EUC-KR", 0x0080}, {"EUC-KR", 0xF8F7}, {"GBK", 0xF8F5}};

void ApplyFixups(absl::string_view encoding, UChar* text, UChar* end) {
  for (const Fixup& fixup : kFixups) {
    if (fixup.encoding == encoding) {
      std::replace(text, end, fixup.from, static_cast<UChar>(0xFFFD));
    }
  }
}

std::string DecodeThroughIcu(absl::string_view bytes, const char* converter_name,
                             absl::string_view encoding) {
  UErrorCode error = U_ZERO_ERROR;
  std::unique_ptr<UConverter, ConverterCloser> converter(ucnv_open(converter_name, &error));
  if (U_FAILURE(error) || converter == nullptr) {
    return "";
  }
  const UConverterType type = ucnv_getType(converter.get());
  const bool single_byte = type == UCNV_SBCS || type == UCNV_LATIN_1;
  static const int kSingleByte = 1;
  ucnv_setToUCallBack(converter.get(), ReplaceInvalid, single_byte ? &kSingleByte : nullptr,
                      nullptr, nullptr, &error);
  if (U_FAILURE(error)) {
    return "";
  }
  // No encoding turns a byte into more than two UTF-16 units.
  std::vector<UChar> text(bytes.size() * 2 + 16);
  UChar* target = text.data();
  const char* source = bytes.data();
  ucnv_toUnicode(converter.get(), &target, text.data() + text.size(), &source,
                 bytes.data() + bytes.size(), nullptr, /*flush=*/true, &error);
  if (U_FAILURE(error)) {
    return "";
  }
  ApplyFixups(encoding, text.data(), target);
  return ToUtf8(text, static_cast<int32_t>(target - text.data()));
}

std::string DecodeUserDefined(absl::string_view bytes) {
  std::string utf8;
  utf8.reserve(bytes.size());
  for (const char c : bytes) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (byte < 0x80) {
      utf8.push_back(c);
      continue;
    }
    const uint32_t code_point = 0xF780 + byte - 0x80;  // three UTF-8 bytes
    utf8.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    utf8.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    utf8.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
  return utf8;
}

// True when `bytes` are well-formed UTF-8 (a sequence cut off by the end, as a capped body may
// be, still counts) with at least one non-ASCII character.
bool LooksLikeUtf8(absl::string_view bytes) {
  bool non_ascii = false;
  size_t i = 0;
  while (i < bytes.size()) {
    const unsigned char lead = static_cast<unsigned char>(bytes[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    non_ascii = true;
    size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      low = lead == 0xE0 ? 0xA0 : 0x80;
      high = lead == 0xED ? 0x9F : 0xBF;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      low = lead == 0xF0 ? 0x90 : 0x80;
      high = lead == 0xF4 ? 0x8F : 0xBF;
    } else {
      return false;
    }
    for (size_t k = 1; k < length; ++k) {
      if (i + k >= bytes.size()) {
        return true;  // cut off at the end
      }
      const unsigned char next = static_cast<unsigned char>(bytes[i + k]);
      if (next < (k == 1 ? low : 0x80) || next > (k == 1 ? high : 0xBF)) {
        return false;
      }
    }
    i += length;
  }
  return non_ascii;
}

// ---- The prescan (HTML Standard §13.2.3.2, "prescan a byte stream") ----------------------------

class Prescan {
 public:
  explicit Prescan(absl::string_view bytes) : s_(bytes) {}

  std::optional<std::string> Run() {
    while (p_ < s_.size()) {
      if (At("<!--")) {
        const size_t end = s_.find("-->", p_ + 2);
        if (end == absl::string_view::npos) {
          return std::nullopt;
        }
        p_ = end + 3;
        continue;
      }
      if (AtIgnoreCase("<meta") && p_ + 5 < s_.size() &&
          (IsAsciiWhitespace(s_[p_ + 5]) || s_[p_ + 5] == '/')) {
        p_ += 5;
        if (std::optional<std::string> found = Meta(); found.has_value()) {
          return found;
        }
        if (aborted_) {
          return std::nullopt;
        }
        continue;
      }
      if ((At("<") && p_ + 1 < s_.size() && absl::ascii_isalpha(s_[p_ + 1])) ||
          (At("</") && p_ + 2 < s_.size() && absl::ascii_isalpha(s_[p_ + 2]))) {
        while (p_ < s_.size() && !IsAsciiWhitespace(s_[p_]) && s_[p_] != '>') {
          ++p_;
        }
        std::string name;
        std::string value;
        while (Attribute(name, value)) {
        }
        if (aborted_) {
          return std::nullopt;
        }
        ++p_;
        continue;
      }
      if (At("<!") || At("</") || At("<?")) {
        const size_t end = s_.find('>', p_ + 2);
        if (end == absl::string_view::npos) {
          return std::nullopt;
        }
        p_ = end + 1;
        continue;
      }
      ++p_;
    }
    return std::nullopt;
  }

 private:
  bool At(absl::string_view text) const { return absl::StartsWith(s_.substr(p_), text); }
  bool AtIgnoreCase(absl::string_view text) const {
    return absl::StartsWithIgnoreCase(s_.substr(p_), text);
  }

  // At the byte after "<meta": its attributes, and the encoding they declare, if any.
  std::optional<std::string> Meta() {
    std::vector<std::string> seen;
    bool got_pragma = false;
    std::optional<bool> need_pragma;
    std::optional<std::string> charset;
    std::string name;
    std::string value;
    while (Attribute(name, value)) {
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
        continue;
      }
      seen.push_back(name);
      if (name == "http-equiv") {
        got_pragma = got_pragma || value == "content-type";
      } else if (name == "content") {
        std::optional<std::string> from_content = CharsetFromMetaContent(value);
        if (from_content.has_value()) {
          from_content = EncodingForLabel(*from_content);
        }
        if (from_content.has_value() && !charset.has_value()) {
          charset = std::move(from_content);
          need_pragma = true;
        }
      } else if (name == "charset") {
        charset = EncodingForLabel(value).value_or("");  // "" for failure: no encoding
        need_pragma = false;
      }
    }
    if (aborted_ || !need_pragma.has_value() || (*need_pragma && !got_pragma) ||
        !charset.has_value() || charset->empty()) {
      if (!aborted_) {
        ++p_;  // the ">" that ended the attributes
      }
      return std::nullopt;
    }
    if (*charset == "UTF-16BE" || *charset == "UTF-16LE") {
      return "UTF-8";
    }
    if (*charset == "x-user-defined") {
      return std::string(kDefaultEncoding);
    }
    return charset;
  }

  // "Get an attribute": false at the ">" that ends the tag (p_ left on it), or at the end of the
  // bytes (aborted_).
  bool Attribute(std::string& name, std::string& value) {
    name.clear();
    value.clear();
    while (p_ < s_.size() && (IsAsciiWhitespace(s_[p_]) || s_[p_] == '/')) {
      ++p_;
    }
    if (p_ >= s_.size()) {
      aborted_ = true;
      return false;
    }
    if (s_[p_] == '>') {
      return false;
    }
    for (;; ++p_) {
      if (p_ >= s_.size()) {
        aborted_ = true;
        return false;
      }
      const char c = s_[p_];
      if (c == '=' && !name.empty()) {
        ++p_;
        break;
      }
      if (IsAsciiWhitespace(c)) {
        while (p_ < s_.size() && IsAsciiWhitespace(s_[p_])) {
          ++p_;
        }
        if (p_ >= s_.size()) {
          aborted_ = true;
          return false;
        }
        if (s_[p_] != '=') {
          return true;  // a name without a value
        }
        ++p_;
        break;
      }
      if (c == '/' || c == '>') {
        return true;
      }
      name.push_back(Lower(c));
    }
    while (p_ < s_.size() && IsAsciiWhitespace(s_[p_])) {
      ++p_;
    }
    if (p_ >= s_.size()) {
      aborted_ = true;
      return false;
    }
    if (s_[p_] == '"' || s_[p_] == '\'') {
      const char quote = s_[p_];
      for (++p_; p_ < s_.size(); ++p_) {
        if (s_[p_] == quote) {
          ++p_;
          return true;
        }
        value.push_back(Lower(s_[p_]));
      }
      aborted_ = true;
      return false;
    }
    if (s_[p_] == '>') {
      return true;
    }
    for (; p_ < s_.size(); ++p_) {
      if (IsAsciiWhitespace(s_[p_]) || s_[p_] == '>') {
        return true;
      }
      value.push_back(Lower(s_[p_]));
    }
    aborted_ = true;
    return false;
  }

  // "Extracting a character encoding from a meta element" (the content attribute's charset=).
  static std::optional<std::string> CharsetFromMetaContent(absl::string_view content) {
    size_t p = 0;
    for (;;) {
      const size_t found = absl::AsciiStrToLower(content).find("charset", p);
      if (found == std::string::npos) {
        return std::nullopt;
      }
      p = found + 7;
      while (p < content.size() && IsAsciiWhitespace(content[p])) {
        ++p;
      }
      if (p < content.size() && content[p] == '=') {
        ++p;
        break;
      }
    }
    while (p < content.size() && IsAsciiWhitespace(content[p])) {
      ++p;
    }
    if (p >= content.size()) {
      return std::nullopt;
    }
    if (content[p] == '"' || content[p] == '\'') {
      const size_t end = content.find(content[p], p + 1);
      if (end == absl::string_view::npos) {
        return std::nullopt;
      }
      return std::string(content.substr(p + 1, end - p - 1));
    }
    size_t end = p;
    while (end < content.size() && !IsAsciiWhitespace(content[end]) && content[end] != ';') {
      ++end;
    }
    return std::string(content.substr(p, end - p));
  }

  absl::string_view s_;
  size_t p_ = 0;
  bool aborted_ = false;
};

}  // namespace

std::optional<std::string> EncodingForLabel(absl::string_view label) {
  const std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(label));
  const Label* const end = std::end(kLabels);
  const Label* const it = std::lower_bound(
      std::begin(kLabels), end, key, [](const Label& a, const std::string& b) { return a.label < b; });
  if (it == end || it->label != key) {
    return std::nullopt;
  }
  return std::string(it->encoding);
}

std::optional<std::string> ContentTypeEncoding(absl::string_view content_type) {
  // Parameters after the first ";": name=value or name="quoted value"; the first charset counts.
  size_t p = content_type.find(';');
  while (p != absl::string_view::npos && p < content_type.size()) {
    ++p;
    while (p < content_type.size() && IsAsciiWhitespace(content_type[p])) {
      ++p;
    }
    const size_t name_end = content_type.find_first_of(";=", p);
    if (name_end == absl::string_view::npos) {
      return std::nullopt;
    }
    const std::string name = absl::AsciiStrToLower(content_type.substr(p, name_end - p));
    if (content_type[name_end] == ';') {
      p = name_end;
      continue;
    }
    p = name_end + 1;
    std::string value;
    if (p < content_type.size() && content_type[p] == '"') {
      for (++p; p < content_type.size() && content_type[p] != '"'; ++p) {
        if (content_type[p] == '\\' && p + 1 < content_type.size()) {
          ++p;
        }
        value.push_back(content_type[p]);
      }
      p = content_type.find(';', p);
    } else {
      const size_t end = content_type.find(';', p);
      value = std::string(absl::StripTrailingAsciiWhitespace(
          content_type.substr(p, end == absl::string_view::npos ? absl::string_view::npos
                                                                 : end - p)));
      p = end;
    }
    if (name == "charset") {
      return EncodingForLabel(value);
    }
  }
  return std::nullopt;
}

std::optional<std::string> PrescanMetaEncoding(absl::string_view bytes) {
  return Prescan(bytes.substr(0, kEncodingPrescanBytes)).Run();
}

std::string DecodeAs(absl::string_view bytes, absl::string_view encoding) {
  if (encoding == "replacement") {
    return bytes.empty() ? "" : "\xEF\xBF\xBD";
  }
  if (encoding == "x-user-defined") {
    return DecodeUserDefined(bytes);
  }
  // Most pages: well-formed UTF-8 decodes to itself (the decoder only replaces ill-formed
  // sequences), so one validating pass instead of a round trip through UTF-16.
  if (encoding == "UTF-8" && encoding::IsValidUtf8(bytes)) {
    return std::string(bytes);
  }
  std::string converter(encoding);
  for (const IcuName& name : kIcuNames) {
    if (name.encoding == encoding) {
      converter = name.converter;
      break;
    }
  }
  UErrorCode error = U_ZERO_ERROR;
  std::unique_ptr<UConverter, ConverterCloser> probe(ucnv_open(converter.c_str(), &error));
  if (U_SUCCESS(error) && probe != nullptr) {
    return DecodeThroughIcu(bytes, converter.c_str(), encoding);
  }
  // An encoding this ICU does not carry (ISO-8859-16 on some builds): the default.
  return DecodeThroughIcu(bytes, "windows-1252", kDefaultEncoding);
}

DecodedPage DecodeToUtf8(absl::string_view bytes, absl::string_view content_type) {
  DecodedPage page;
  if (absl::StartsWith(bytes, "\xEF\xBB\xBF")) {
    page.encoding = "UTF-8";
    bytes.remove_prefix(3);
    page.source = "bom";
  } else if (absl::StartsWith(bytes, "\xFE\xFF")) {
    page.encoding = "UTF-16BE";
    bytes.remove_prefix(2);
    page.source = "bom";
  } else if (absl::StartsWith(bytes, "\xFF\xFE")) {
    page.encoding = "UTF-16LE";
    bytes.remove_prefix(2);
    page.source = "bom";
  } else if (std::optional<std::string> declared = ContentTypeEncoding(content_type);
             declared.has_value()) {
    page.encoding = *std::move(declared);
    page.source = "content-type";
  } else if (std::optional<std::string> meta = PrescanMetaEncoding(bytes); meta.has_value()) {
    page.encoding = *std::move(meta);
    page.source = "meta";
  } else if (LooksLikeUtf8(bytes)) {
    page.encoding = "UTF-8";
    page.source = "detected";
  } else {
    page.encoding = std::string(kDefaultEncoding);
    page.source = "default";
  }
  page.utf8 = DecodeAs(bytes, page.encoding);
  return page;
}

}  // namespace portcullis::verifier::html
