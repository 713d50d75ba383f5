// Issue 22: a page's character encoding decided as browsers decide it (BOM, Content-Type charset,
// the <meta> prescan of the first 1,024 bytes, then windows-1252), decoded through ICU, always to
// valid UTF-8.

#include "verifier-service/src/html/encoding_sniffer.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::html {
namespace {

// True when `text` is well-formed UTF-8.
bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2
                                  : lead >= 0xE0 && lead <= 0xEF   ? 3
                                  : lead >= 0xF0 && lead <= 0xF4   ? 4
                                                                   : 0;
    if (length == 0 || i + length > text.size()) {
      return false;
    }
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) {
        return false;
      }
    }
    const unsigned char second = length > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) ||
        (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F)) {
      return false;
    }
    i += length;
  }
  return true;
}

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

constexpr char kReplacement[] = "\xEF\xBF\xBD";

TEST(EncodingSnifferTest, Iso88591ByTheHeaderOnly) {
  const DecodedPage page =
      DecodeToUtf8("<p>Jos\xE9 M\xFCller, Gr\xFC\xDF" "e</p>", "text/html; charset=ISO-8859-1");
  EXPECT_EQ(page.utf8, "<p>José Müller, Grüße</p>");
  EXPECT_EQ(page.encoding, "windows-1252");  // WHATWG: iso-8859-1 is a label of windows-1252
  EXPECT_EQ(page.source, "content-type");
}

TEST(EncodingSnifferTest, Windows1252ByTheHeaderOnlyDecodes0x80To0x9F) {
  const DecodedPage page =
      DecodeToUtf8("\x80" "5 \x93quoted\x94 \x91single\x92 \x85", "text/html;charset=\"windows-1252\"");
  EXPECT_EQ(page.utf8, "€5 “quoted” ‘single’ …");
  EXPECT_EQ(page.source, "content-type");
  // iso-8859-1 means windows-1252 here too (as in browsers): 0x80 is the euro sign.
  EXPECT_EQ(DecodeToUtf8("\x80", "text/html; charset=latin1").utf8, "€");
}

TEST(EncodingSnifferTest, Iso88591ByMetaOnly) {
  const DecodedPage page = DecodeToUtf8(
      "<!doctype html><html><head><meta charset=\"ISO-8859-1\"><title>Jos\xE9</title>", "text/html");
  EXPECT_EQ(page.encoding, "windows-1252");
  EXPECT_EQ(page.source, "meta");
  EXPECT_TRUE(Contains(page.utf8, "<title>José</title>")) << page.utf8;
}

TEST(EncodingSnifferTest, Windows1252ByMetaHttpEquivOnly) {
  const DecodedPage page = DecodeToUtf8(
      "<head><META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=windows-1252'>"
      "<p>\x93" "caf\xE9\x94 \x80",
      "");
  EXPECT_EQ(page.encoding, "windows-1252");
  EXPECT_EQ(page.source, "meta");
  EXPECT_TRUE(Contains(page.utf8, "<p>“café” €")) << page.utf8;
}

TEST(EncodingSnifferTest, ShiftJisByMeta) {
  // 日本語 in Shift_JIS; "x-sjis" is one of its labels.
  const DecodedPage page =
      DecodeToUtf8("<meta charset=x-sjis><p>\x93\xFA\x96\x7B\x8C\xEA</p>", "text/html");
  EXPECT_EQ(page.encoding, "Shift_JIS");
  EXPECT_EQ(page.source, "meta");
  EXPECT_EQ(page.utf8, "<meta charset=x-sjis><p>日本語</p>");
}

TEST(EncodingSnifferTest, EucKrByMeta) {
  // 한국어 in EUC-KR.
  const DecodedPage page = DecodeToUtf8(
      "<meta http-equiv=content-type content=\"text/html;charset=euc-kr\"><p>\xC7\xD1\xB1\xB9\xBE\xEE",
      "text/html");
  EXPECT_EQ(page.encoding, "EUC-KR");
  EXPECT_TRUE(Contains(page.utf8, "<p>한국어")) << page.utf8;
}

TEST(EncodingSnifferTest, AUtf8BomOverridesAWrongHeader) {
  const DecodedPage page = DecodeToUtf8("\xEF\xBB\xBFJos\xC3\xA9", "text/html; charset=ISO-8859-1");
  EXPECT_EQ(page.utf8, "José");  // the BOM is not text
  EXPECT_EQ(page.encoding, "UTF-8");
  EXPECT_EQ(page.source, "bom");
}

TEST(EncodingSnifferTest, Utf16ByBom) {
  const std::string little("\xFF\xFEJ\0o\0s\0\xE9\0 \0\x3D\xD8\x00\xDE", 16);  // José 😀
  DecodedPage page = DecodeToUtf8(little, "text/html; charset=windows-1252");
  EXPECT_EQ(page.encoding, "UTF-16LE");
  EXPECT_EQ(page.utf8, "José 😀");
  const std::string big("\xFE\xFF\0J\0o\0s\0\xE9", 10);
  page = DecodeToUtf8(big, "text/html");
  EXPECT_EQ(page.encoding, "UTF-16BE");
  EXPECT_EQ(page.utf8, "José");
}

TEST(EncodingSnifferTest, WellFormedUtf8IsKeptByteForByte) {
  // Every sequence length, the last code point, a noncharacter, a NUL and a BOM-like character
  // in the middle: what the decoder gives back is the page itself.
  const std::string text("a\0\xC3\xA9\xE2\x82\xAC\xEF\xBF\xBF\xEF\xBB\xBF\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF z",
                         23);
  EXPECT_EQ(DecodeToUtf8(text, "text/html; charset=utf-8").utf8, text);
  EXPECT_EQ(DecodeAs(text, "UTF-8"), text);
}

TEST(EncodingSnifferTest, InvalidSequencesBecomeReplacementCharactersNeverACrash) {
  // Ill-formed UTF-8: a lone continuation, a truncated sequence, a surrogate, an overlong form.
  DecodedPage page = DecodeToUtf8("a\x80" "b\xC3" "c\xED\xA0\x80" "d\xC0\xAF" "e\xE2\x82",
                                  "text/html; charset=utf-8");
  EXPECT_TRUE(IsValidUtf8(page.utf8));
  EXPECT_TRUE(Contains(page.utf8, std::string("a") + kReplacement + "b")) << page.utf8;
  EXPECT_TRUE(absl::StartsWith(page.utf8, "a")) << page.utf8;
  EXPECT_TRUE(Contains(page.utf8, "e")) << page.utf8;
  // Shift_JIS with a lead byte and no trail, UTF-16 with a lone surrogate and an odd byte,
  // EUC-KR with an unmapped pair.
  for (const auto& [bytes, type] : std::vector<std::pair<std::string, std::string>>{
           {"\x93\xFA\x81", "text/html; charset=shift_jis"},
           {std::string("\xFF\xFE\x00\xD8x\0y", 7), ""},
           {"\xC7\xD1\xFF\xFF", "text/html; charset=euc-kr"},
           {"\xC7\xD1\x80", "text/html; charset=euc-kr"},
           {"a\xFF", "text/html; charset=gbk"},
           {"\xFF\xFE\xFF", ""},
       }) {
    page = DecodeToUtf8(bytes, type);
    EXPECT_TRUE(IsValidUtf8(page.utf8)) << page.encoding;
    EXPECT_TRUE(Contains(page.utf8, kReplacement)) << page.encoding << ": " << page.utf8;
  }
  // Every byte value through every encoding: valid UTF-8 out, whatever comes in.
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) {
    all_bytes.push_back(static_cast<char>(i));
  }
  for (const char* label :
       {"utf-8", "ibm866", "iso-8859-2", "iso-8859-3", "iso-8859-4", "iso-8859-5", "iso-8859-6",
        "iso-8859-7", "iso-8859-8", "iso-8859-8-i", "iso-8859-10", "iso-8859-13", "iso-8859-14",
        "iso-8859-15", "iso-8859-16", "koi8-r", "koi8-u", "macintosh", "windows-874",
        "windows-1250", "windows-1251", "windows-1252", "windows-1253", "windows-1254",
        "windows-1255", "windows-1256", "windows-1257", "windows-1258", "x-mac-cyrillic", "gbk",
        "gb18030", "big5", "euc-jp", "iso-2022-jp", "shift_jis", "euc-kr", "utf-16be", "utf-16le",
        "x-user-defined", "iso-2022-kr"}) {
    const std::optional<std::string> encoding = EncodingForLabel(label);
    ASSERT_TRUE(encoding.has_value()) << label;
    const std::string text = DecodeAs(all_bytes + all_bytes, *encoding);
    EXPECT_TRUE(IsValidUtf8(text)) << label;
    EXPECT_FALSE(text.empty()) << label;
  }
}

TEST(EncodingSnifferTest, EachEncodingDecodesThroughItsOwnTable) {
  struct Case {
    const char* encoding;
    std::string bytes;
    const char* text;
  };
  for (const Case& c : std::vector<Case>{
           {"IBM866", "\x80", "А"},
           {"ISO-8859-2", "\xA3", "Ł"},
           {"ISO-8859-5", "\xB0", "А"},
           {"ISO-8859-7", "\xC1", "Α"},
           {"ISO-8859-8-I", "\xE0", "א"},
           {"ISO-8859-15", "\xA4", "€"},
           {"KOI8-R", "\xE1", "А"},
           {"KOI8-U", "\xA4", "є"},
           {"macintosh", "\x80", "Ä"},
           {"x-mac-cyrillic", "\x80", "А"},
           {"windows-874", "\xA1", "ก"},
           {"windows-1251", "\xC0", "А"},
           {"windows-1254", "\xD0", "Ğ"},
           {"GBK", "\xC4\xE3", "你"},
           {"gb18030", "\x81\x30\x81\x30", "\xC2\x80"},
           {"Big5", "\xA7\x41", "你"},
           {"EUC-JP", "\xA4\xA2", "あ"},
           {"ISO-2022-JP", "\x1B$B$\"\x1B(B", "あ"},
           {"Shift_JIS", "\x82\xA0", "あ"},
           {"EUC-KR", "\xB0\xA1", "가"},
           {"x-user-defined", "\x80", "\xEF\x9E\x80"},
       }) {
    EXPECT_EQ(DecodeAs(c.bytes, c.encoding), c.text) << c.encoding;
  }
}

TEST(EncodingSnifferTest, AMetaTagAfterTheFirst1024BytesIsNotSeen) {
  const std::string padding = "<!-- " + std::string(1024, 'x') + " -->";
  DecodedPage page = DecodeToUtf8(padding + "<meta charset=shift_jis><p>\x93\xFA", "text/html");
  EXPECT_EQ(page.source, "default");
  EXPECT_EQ(page.encoding, "windows-1252");
  // The same tag ending just inside them is seen.
  const std::string head = "<meta charset=shift_jis>";
  const std::string inside = std::string(1024 - head.size(), ' ') + head;
  page = DecodeToUtf8(inside + "<p>\x93\xFA", "text/html");
  EXPECT_EQ(page.source, "meta");
  EXPECT_EQ(page.encoding, "Shift_JIS");
  // One byte later its ">" is past them: the prescan gives up.
  page = DecodeToUtf8(" " + inside + "<p>\x93\xFA", "text/html");
  EXPECT_EQ(page.source, "default");
}

TEST(EncodingSnifferTest, TheDefaultIsWindows1252AndValidUtf8IsDetected) {
  DecodedPage page = DecodeToUtf8("<p>caf\xE9 \x80", "text/html");
  EXPECT_EQ(page.source, "default");
  EXPECT_EQ(page.utf8, "<p>café €");
  // A page that declares nothing and is UTF-8 (as most are) stays UTF-8.
  page = DecodeToUtf8("<p>café — 日本</p>", "text/html");
  EXPECT_EQ(page.source, "detected");
  EXPECT_EQ(page.encoding, "UTF-8");
  EXPECT_EQ(page.utf8, "<p>café — 日本</p>");
  page = DecodeToUtf8("<p>plain</p>", "");
  EXPECT_EQ(page.utf8, "<p>plain</p>");
}

TEST(EncodingSnifferTest, LabelsAreTheWhatwgTable) {
  for (const char* label : {"latin1", "iso-8859-1", "ISO-8859-1", "ascii", "us-ascii", "cp1252",
                            " l1 ", "windows-1252", "iso_8859-1:1987"}) {
    EXPECT_EQ(EncodingForLabel(label), "windows-1252") << label;
  }
  EXPECT_EQ(EncodingForLabel("x-sjis"), "Shift_JIS");
  EXPECT_EQ(EncodingForLabel("ms932"), "Shift_JIS");
  EXPECT_EQ(EncodingForLabel("\tUTF8\n"), "UTF-8");
  EXPECT_EQ(EncodingForLabel("utf-16"), "UTF-16LE");
  EXPECT_EQ(EncodingForLabel("ks_c_5601-1987"), "EUC-KR");
  EXPECT_EQ(EncodingForLabel("gb2312"), "GBK");
  EXPECT_EQ(EncodingForLabel("iso-8859-9"), "windows-1254");
  EXPECT_EQ(EncodingForLabel("iso-2022-kr"), "replacement");
  for (const char* label : {"", "utf-7", "latin-1", "foo", "utf 8", "iso-8859-1x"}) {
    EXPECT_FALSE(EncodingForLabel(label).has_value()) << label;
  }
}

TEST(EncodingSnifferTest, UnknownLabelsAreIgnored) {
  // An unknown header label: the meta decides.
  DecodedPage page = DecodeToUtf8("<meta charset=latin1>caf\xE9", "text/html; charset=klingon");
  EXPECT_EQ(page.source, "meta");
  EXPECT_EQ(page.utf8, "<meta charset=latin1>café");
  // An unknown meta label: the next meta is not read either way, the default decides.
  page = DecodeToUtf8("<meta charset=klingon>caf\xE9.", "text/html");
  EXPECT_EQ(page.source, "default");
}

TEST(EncodingSnifferTest, ContentTypeParameters) {
  EXPECT_EQ(ContentTypeEncoding("text/html; charset=ISO-8859-1"), "windows-1252");
  EXPECT_EQ(ContentTypeEncoding("text/html;CHARSET=\"Shift_JIS\""), "Shift_JIS");
  EXPECT_EQ(ContentTypeEncoding("text/html; q=1; charset=euc-kr; charset=utf-8"), "EUC-KR");
  EXPECT_EQ(ContentTypeEncoding("text/html;foo;charset=utf-8"), "UTF-8");
  EXPECT_FALSE(ContentTypeEncoding("text/html").has_value());
  EXPECT_FALSE(ContentTypeEncoding("").has_value());
  EXPECT_FALSE(ContentTypeEncoding("text/html; charset=").has_value());
}

TEST(EncodingSnifferTest, ThePrescanReadsTagsAsTheStandardSays) {
  // A meta inside a comment, or in an attribute value, does not count.
  EXPECT_FALSE(PrescanMetaEncoding("<!-- <meta charset=euc-kr> -->").has_value());
  EXPECT_FALSE(PrescanMetaEncoding("<div title='<meta charset=euc-kr>'>").has_value());
  // content= without http-equiv=content-type does not count; with it, it does.
  EXPECT_FALSE(PrescanMetaEncoding("<meta content='text/html; charset=koi8-r'>").has_value());
  EXPECT_EQ(PrescanMetaEncoding("<meta content='text/html; charset=koi8-r' http-equiv=Content-Type>"),
            "KOI8-R");
  EXPECT_EQ(PrescanMetaEncoding("<meta http-equiv=content-type content='charset = \"big5\"'>"),
            "Big5");
  // UTF-16 in a meta means UTF-8 (the bytes being read are ASCII-compatible).
  EXPECT_EQ(PrescanMetaEncoding("<meta charset=utf-16le>"), "UTF-8");
  EXPECT_EQ(PrescanMetaEncoding("<meta charset=x-user-defined>"), "windows-1252");
  // The first usable meta wins; attributes after the tag name may be spaced and slashed.
  EXPECT_EQ(PrescanMetaEncoding("<html><meta/charset=\"gbk\"><meta charset=utf-8>"), "GBK");
  EXPECT_EQ(PrescanMetaEncoding("<?xml version='1.0'?><!DOCTYPE html><META CHARSET = EUC-JP >"),
            "EUC-JP");
  // Unterminated: nothing.
  EXPECT_FALSE(PrescanMetaEncoding("<meta charset=\"euc-kr").has_value());
  EXPECT_FALSE(PrescanMetaEncoding("<!-- <meta charset=euc-kr>").has_value());
}

}  // namespace
}  // namespace portcullis::verifier::html
