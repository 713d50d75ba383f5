#include "verifier-service/src/c2pa/cbor_reader.h"

#include <string>

#include "gtest/gtest.h"

namespace portcullis::verifier::c2pa {
namespace {

TEST(VerifierC2paCborTest, DecodesMapsAndReadsTypedValues) {
  // {"url": "self#x", "hash": h'0102', 1: -7, "list": [1, 2]}
  constexpr char kBytes[] = "\xA4\x63url\x66self#x\x64hash\x42\x01\x02\x01\x26\x64list\x82\x01\x02";
  const std::string bytes(kBytes, sizeof(kBytes) - 1);
  const absl::StatusOr<CborItemPtr> item = DecodeCbor(bytes, C2paLimits{});
  ASSERT_TRUE(item.ok()) << item.status();
  EXPECT_EQ(CborText(CborMapGet(item->get(), "url")), "self#x");
  EXPECT_EQ(CborBytes(CborMapGet(item->get(), "hash")), std::string("\x01\x02", 2));
  EXPECT_EQ(CborInt(CborMapGet(item->get(), int64_t{1})), -7);
  EXPECT_EQ(CborArraySize(CborMapGet(item->get(), "list")), 2u);
  EXPECT_EQ(CborInt(CborArrayAt(CborMapGet(item->get(), "list"), 1)), 2);
  EXPECT_EQ(CborArrayAt(CborMapGet(item->get(), "list"), 2), nullptr);
  // Wrong types answer nothing rather than crash.
  EXPECT_EQ(CborText(CborMapGet(item->get(), "hash")), std::nullopt);
  EXPECT_EQ(CborMapGet(item->get(), "missing"), nullptr);
  EXPECT_EQ(CborMapGet(nullptr, "url"), nullptr);
  EXPECT_EQ(CborArraySize(item->get()), std::nullopt);
}

TEST(VerifierC2paCborTest, RefusesWhatIsNotExactlyOneWellFormedItem) {
  const C2paLimits limits;
  EXPECT_FALSE(ScanCbor("", limits).ok());
  EXPECT_FALSE(ScanCbor("\x82\x01", limits).ok());                  // Truncated array.
  EXPECT_FALSE(ScanCbor(std::string("\x01\x01", 2), limits).ok());  // Trailing bytes.
  EXPECT_FALSE(ScanCbor("\x1C", limits).ok());                      // Reserved info.
  EXPECT_FALSE(ScanCbor("\xFF", limits).ok());                      // A lone break.
  EXPECT_FALSE(ScanCbor(std::string("\x5A\xFF\xFF\xFF\xFF\x00", 6), limits).ok());  // Huge bstr.
  // An array declaring 2^32 elements in a few bytes: refused before libcbor allocates for it.
  EXPECT_FALSE(DecodeCbor(std::string("\x9A\xFF\xFF\xFF\xFF\x00", 6), limits).ok());
  EXPECT_FALSE(DecodeCbor(std::string("\xBB\x00\x00\x00\x01\x00\x00\x00\x00", 9), limits).ok());
  // Indefinite lengths are fine when closed.
  EXPECT_TRUE(ScanCbor(std::string("\x9F\x01\x02\xFF", 4), limits).ok());
  EXPECT_FALSE(ScanCbor(std::string("\x9F\x01\x02", 3), limits).ok());
  EXPECT_FALSE(ScanCbor(std::string("\xBF\x01\xFF", 3), limits).ok());  // Key without value.
  // Tags: what libcbor 0.8 decodes (tag 1, tag 24) passes; the one-byte heads it calls
  // unassigned (6-20) do not.
  EXPECT_TRUE(DecodeCbor(std::string("\xC1\x01", 2), limits).ok());
  EXPECT_TRUE(DecodeCbor(std::string("\xD8\x18\x01", 3), limits).ok());
  EXPECT_FALSE(ScanCbor(std::string("\xD2\x01", 2), limits).ok());
  // Simple values: only false, true, null, undefined and floats.
  EXPECT_TRUE(DecodeCbor(std::string("\x84\xF4\xF5\xF6\xF7", 5), limits).ok());
  EXPECT_TRUE(DecodeCbor(std::string("\xF9\x3C\x00", 3), limits).ok());
  EXPECT_FALSE(ScanCbor("\xE4", limits).ok());
  EXPECT_FALSE(ScanCbor(std::string("\xF8\x20", 2), limits).ok());
  // Text must be UTF-8.
  EXPECT_TRUE(DecodeCbor("\x62\xC3\xA9", limits).ok());
  EXPECT_FALSE(ScanCbor("\x62\xC7\x01", limits).ok());
}

TEST(VerifierC2paCborTest, CapsNestingAndItemCount) {
  C2paLimits limits;
  std::string deep(limits.max_cbor_depth + 2, '\x81');
  deep.push_back('\x01');
  EXPECT_FALSE(DecodeCbor(deep, limits).ok());
  std::string shallow(limits.max_cbor_depth, '\x81');
  shallow.push_back('\x01');
  EXPECT_TRUE(DecodeCbor(shallow, limits).ok());

  limits.max_cbor_items = 10;
  std::string wide("\x98\x14", 2);  // An array of 20 small integers.
  wide += std::string(20, '\x01');
  EXPECT_FALSE(ScanCbor(wide, limits).ok());
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
