#include "verifier-service/src/c2pa/jumbf.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::c2pa {
namespace {

std::string BigEndian32(uint32_t value) {
  std::string out;
  for (int i = 3; i >= 0; --i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  }
  return out;
}

std::string Box(absl::string_view type, absl::string_view payload) {
  return absl::StrCat(BigEndian32(static_cast<uint32_t>(8 + payload.size())), type, payload);
}

std::string Superbox(absl::string_view tag, absl::string_view label, absl::string_view contents) {
  return Box("jumb", absl::StrCat(Box("jumd", absl::StrCat(C2paUuid(tag), std::string(1, '\x03'),
                                                           label, std::string(1, '\0'))),
                                  contents));
}

TEST(VerifierC2paJumbfTest, ReadsBigEndianLengths) {
  EXPECT_EQ(ReadBigEndian(""), 0u);
  EXPECT_EQ(ReadBigEndian(std::string("\x01\x02", 2)), 0x0102u);
  EXPECT_EQ(ReadBigEndian(std::string("\xff\x00\x00\x10", 4)), 0xff000010u);
  EXPECT_EQ(ReadBigEndian(std::string("\x80\0\0\0\0\0\0\x01", 8)), 0x8000000000000001u);
}

TEST(VerifierC2paJumbfTest, ReadsNestedSuperboxesWithLabelsAndContent) {
  const std::string bytes =
      Superbox("c2pa", "c2pa",
               Superbox("c2ma", "urn:uuid:1",
                        absl::StrCat(Superbox("c2cl", "c2pa.claim", Box("cbor", "\xA0")),
                                     Superbox("c2cs", "c2pa.signature", Box("cbor", "\xF6")))));
  const absl::StatusOr<JumbfBox> root = ParseJumbfSuperbox(bytes, C2paLimits{});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->label, "c2pa");
  EXPECT_EQ(root->uuid, C2paUuid("c2pa"));
  ASSERT_EQ(root->children.size(), 1u);
  const JumbfBox& manifest = root->children[0];
  EXPECT_EQ(manifest.label, "urn:uuid:1");
  const JumbfBox* claim = manifest.FindChild("c2pa.claim");
  ASSERT_NE(claim, nullptr);
  ASSERT_NE(claim->FindContent("cbor"), nullptr);
  EXPECT_EQ(claim->FindContent("cbor")->payload, "\xA0");
  EXPECT_EQ(manifest.FindChild("c2pa.assertions"), nullptr);
  // The payload of a superbox is everything after its own 8-byte header.
  EXPECT_EQ(claim->payload, claim->whole.substr(8));
}

TEST(VerifierC2paJumbfTest, ReadsExtendedLengthBoxes) {
  const std::string description = Box(
      "jumd", absl::StrCat(C2paUuid("c2pa"), std::string(1, '\x03'), "c2pa", std::string(1, '\0')));
  std::string extended =
      absl::StrCat(BigEndian32(1), "jumb", BigEndian32(0),
                   BigEndian32(static_cast<uint32_t>(16 + description.size())), description);
  const absl::StatusOr<JumbfBox> root = ParseJumbfSuperbox(extended, C2paLimits{});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->label, "c2pa");
}

TEST(VerifierC2paJumbfTest, RefusesMalformedStructures) {
  const std::string good = Superbox("c2pa", "c2pa", Box("cbor", "\xA0"));
  // Truncated: the box claims more bytes than there are.
  EXPECT_FALSE(ParseJumbfSuperbox(good.substr(0, good.size() - 1), C2paLimits{}).ok());
  // A length smaller than its own header.
  EXPECT_FALSE(ParseJumbfSuperbox(absl::StrCat(BigEndian32(4), "jumb"), C2paLimits{}).ok());
  // Not a superbox at the top.
  EXPECT_FALSE(ParseJumbfSuperbox(Box("cbor", "\xA0"), C2paLimits{}).ok());
  // A superbox that does not start with its description box.
  EXPECT_FALSE(ParseJumbfSuperbox(Box("jumb", Box("cbor", "\xA0")), C2paLimits{}).ok());
  // A label without its NUL.
  EXPECT_FALSE(
      ParseJumbfSuperbox(Box("jumb", Box("jumd", absl::StrCat(C2paUuid("c2pa"), "\x03", "c2pa"))),
                         C2paLimits{})
          .ok());
  // Bytes after the store.
  EXPECT_FALSE(ParseJumbfSuperbox(good + "x", C2paLimits{}).ok());
  // Empty.
  EXPECT_FALSE(ParseJumbfSuperbox("", C2paLimits{}).ok());
}

TEST(VerifierC2paJumbfTest, CapsDepthBoxCountAndSize) {
  std::string nested = Box("cbor", "\xA0");
  for (int i = 0; i < 12; ++i) {
    nested = Superbox("c2pa", "x", nested);
  }
  const absl::StatusOr<JumbfBox> deep = ParseJumbfSuperbox(nested, C2paLimits{});
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("deeper"), std::string::npos) << deep.status();

  std::string many;
  for (int i = 0; i < 100; ++i) {
    many += Box("cbor", "\xA0");
  }
  C2paLimits few_boxes;
  few_boxes.max_jumbf_boxes = 50;
  EXPECT_FALSE(ParseJumbfSuperbox(Superbox("c2pa", "c2pa", many), few_boxes).ok());
  EXPECT_TRUE(ParseJumbfSuperbox(Superbox("c2pa", "c2pa", many), C2paLimits{}).ok());

  C2paLimits small;
  small.max_manifest_store_bytes = 16;
  EXPECT_FALSE(ParseJumbfSuperbox(Superbox("c2pa", "c2pa", many), small).ok());
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
